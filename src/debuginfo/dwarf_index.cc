// SPDX-License-Identifier: GPL-2.0-or-later
//
// The index of functions and globals by name: one walk over every DIE of
// every CU. It records each concrete function: out-of-line subprograms
// (including the clones gcc makes, .isra/.constprop/.part, whose DWARF name
// comes from their abstract origin) and every inlined copy, since a probe on
// a function must reach all the code that runs it; and each global variable
// with a location.
//
// A kernel image has thousands of CUs, so the walk runs on two threads, each
// with its own Dwarf handle over the same read-only mapping (libdw 0.188 is
// not thread-safe on a shared handle). Each thread takes the next CU from a
// shared counter; the results are merged and sorted by DIE offset, which is
// the order one thread walking in file order would have produced.
#include <dwarf.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>
#include <unordered_map>

#include "dwarf_internal.h"
#include "kprobectl/cxx_names.h"

namespace kprobectl::dwarf {

namespace {

bool HasCode(Dwarf_Die* die) {
  return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges) || dwarf_hasattr(die, DW_AT_entry_pc);
}

// The DIE a function instance is an instance of: its abstract origin (or
// the declaration it specifies), followed to the end.
Dwarf_Off OriginOf(Dwarf_Die* die) {
  Dwarf_Die at = *die;
  for (int depth = 0; depth < 8; ++depth) {
    Dwarf_Attribute attr;
    Dwarf_Die next;
    if (!(dwarf_attr(&at, DW_AT_abstract_origin, &attr) || dwarf_attr(&at, DW_AT_specification, &attr)) ||
        !dwarf_formref_die(&attr, &next))
      break;
    at = next;
  }
  return dwarf_dieoffset(&at);
}

// Where a DIE says it was declared (its own attributes, else those of its
// DW_AT_specification, as dwarf_decl_line() reads them), or
// (DW_AT_call_file/line) called from: a file of its CU's line table and a
// line.
struct SourcePlace {
  Dwarf_Word file = 0, line = 0;
  bool operator==(const SourcePlace&) const = default;
};
std::optional<SourcePlace> PlaceOf(Dwarf_Die* die, unsigned file_attr, unsigned line_attr) {
  Dwarf_Attribute attr;
  SourcePlace place;
  if (!dwarf_attr_integrate(die, line_attr, &attr) || dwarf_formudata(&attr, &place.line) != 0) return std::nullopt;
  if (!dwarf_attr_integrate(die, file_attr, &attr) || dwarf_formudata(&attr, &place.file) != 0) return std::nullopt;
  return place;
}

// gcc's function splitting (-fpartial-inlining, and the kernel's
// __brelse+21, d_same_name+86) can inline a function's split-off part back
// into the function itself: an inlined_subroutine whose origin is a
// function that encloses it, "called" from that function's declaration
// line. It is the function's own code, not a place where a call of it
// begins, so it is no copy of it: probing it would fire twice per call.
// (A recursive call inlined into itself is called from a line of the body,
// and stays a copy.)
//
// Such a part also stands for another function's code that gcc found the
// same (acpi_subsys_poweroff_late+40 of the 6.1 cloud kernel is its tail,
// `return acpi_dev_suspend(dev, device_may_wakeup(dev))`, described as
// acpi_subsys_suspend_late's line 1174 "called" from line 1166, that
// function's declaration): no call of it either, but the middle of its
// body. A copy really called from its function's declaration line comes
// from a macro that declares the caller on that line too (SYSCALL_DEFINE:
// __do_sys_openat in __se_sys_openat, all at fs/open.c:1347), and stays.
template <typename Enclosing>
bool SplitPartInlinedBack(Dwarf_Die* die, Dwarf_Off origin, const std::vector<Enclosing>& enclosing, int within) {
  bool inside_itself = false;
  for (int i = within; i >= 0 && !inside_itself; i = enclosing[static_cast<size_t>(i)].outer)
    inside_itself = enclosing[static_cast<size_t>(i)].origin == origin;
  Dwarf* dwarf = dwarf_cu_getdwarf(die->cu);
  Dwarf_Die origin_die;
  if (!dwarf_offdie(dwarf, origin, &origin_die)) return inside_itself;
  auto call = PlaceOf(die, DW_AT_call_file, DW_AT_call_line);
  auto decl = PlaceOf(&origin_die, DW_AT_decl_file, DW_AT_decl_line);
  if (inside_itself) return !call || !decl || call->line == decl->line;
  // File numbers compare only within one CU's line table.
  if (!call || !decl || *call != *decl || origin_die.cu != die->cu || within < 0) return false;
  Dwarf_Die holder;
  if (!dwarf_offdie(dwarf, enclosing[static_cast<size_t>(within)].origin, &holder)) return false;
  auto holder_decl = PlaceOf(&holder, DW_AT_decl_file, DW_AT_decl_line);
  // Unknown where the holder is declared: kept as a copy.
  return holder_decl && holder.cu == die->cu && *holder_decl != *decl;
}

using Postings = std::unordered_map<std::string, std::vector<uint64_t>>;

struct Partial {
  Postings functions, globals, files;
};

void Merge(Postings& from, std::vector<std::pair<std::string, std::vector<uint64_t>>>& into) {
  for (auto& [name, postings] : from) into.emplace_back(name, std::move(postings));
}

// Sorts by name and joins the lists of one name that several threads found.
void Normalize(std::vector<std::pair<std::string, std::vector<uint64_t>>>& table) {
  std::sort(table.begin(), table.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::pair<std::string, std::vector<uint64_t>>> out;
  for (auto& entry : table) {
    if (!out.empty() && out.back().first == entry.first)
      out.back().second.insert(out.back().second.end(), entry.second.begin(), entry.second.end());
    else
      out.push_back(std::move(entry));
  }
  for (auto& [name, postings] : out) {
    std::sort(postings.begin(), postings.end(),
              [](uint64_t a, uint64_t b) { return (a & ~kPostingFlags) < (b & ~kPostingFlags); });
    // An abstract definition is kept only for a name that has no code,
    // and once (a header's inline has one in every CU that uses it).
    bool code = std::any_of(postings.begin(), postings.end(), [](uint64_t p) { return !(p & kAbstractFlag); });
    std::erase_if(postings, [&](uint64_t p) { return code && (p & kAbstractFlag); });
    if (!code && postings.size() > 1) postings.erase(postings.begin() + 1, postings.end());
  }
  table = std::move(out);
}

// The other names of a C++ function: its linkage name, and the qualified
// name that demangling it gives, when they differ from `name`.
std::vector<std::string> CxxKeys(Dwarf_Die* die, const std::string& name) {
  std::vector<std::string> keys;
  std::string linkage = LinkageName(die);
  if (linkage.empty()) return keys;
  keys.push_back(linkage);
  if (auto demangled = Demangle(linkage); demangled && !MadeForAnother(*demangled)) {
    std::string qualified = SplitCxxName(*demangled).qualified;
    if (qualified != name) keys.push_back(std::move(qualified));
  }
  return keys;
}

}  // namespace

std::vector<std::string> UnitFiles(Dwarf_Die* cu, const LineSections* lines) {
  Dwarf_Attribute attr;
  Dwarf_Word offset = 0;
  if (lines && dwarf_attr(cu, DW_AT_stmt_list, &attr) && dwarf_formudata(&attr, &offset) == 0)
    if (auto files = LineProgramFiles(*lines, offset)) return *files;
  std::vector<std::string> out;
  Dwarf_Files* files = nullptr;
  size_t nfiles = 0;
  if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0) return out;
  for (size_t i = 0; i < nfiles; ++i) {
    const char* path = dwarf_filesrc(files, i, nullptr, nullptr);
    if (!path || !*path) continue;
    std::string_view base(path);
    base = base.substr(base.rfind('/') + 1);
    if (!base.empty()) out.emplace_back(base);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void WalkUnit(Dwarf* dwarf, Dwarf_Off cu_offset, const std::string* only, UnitNames* out, const LineSections* lines) {
  Dwarf_Die cu;
  if (!dwarf_offdie(dwarf, cu_offset, &cu)) return;
  // C++ functions are found by their qualified and linkage names too, once
  // per origin (a class's inline method has a copy in many places).
  bool cxx = HasScopedNames(&cu);
  std::unordered_map<Dwarf_Off, std::vector<std::string>> cxx_names;
  // Depth-first over the CU; `stack` holds the next sibling to visit, with
  // the functions (their origins) that enclose it, as links in `enclosing`.
  struct Enclosing {
    Dwarf_Off origin;
    int outer;
  };
  std::vector<Enclosing> enclosing;
  struct Next {
    Dwarf_Die die;
    int within;  // index in `enclosing`, -1 at the top
  };
  std::vector<Next> stack;
  Dwarf_Die child;
  if (dwarf_child(&cu, &child) == 0) stack.push_back({child, -1});
  while (!stack.empty()) {
    auto [die, within] = stack.back();
    stack.pop_back();
    Dwarf_Die sibling;
    if (dwarf_siblingof(&die, &sibling) == 0) stack.push_back({sibling, within});
    int tag = dwarf_tag(&die);
    bool descend = false;
    int children_within = within;
    switch (tag) {
      case DW_TAG_subprogram:
      case DW_TAG_inlined_subroutine: {
        Dwarf_Off origin = OriginOf(&die);
        bool code = HasCode(&die);
        bool self = tag == DW_TAG_inlined_subroutine && SplitPartInlinedBack(&die, origin, enclosing, within);
        std::string name = code || dwarf_hasattr(&die, DW_AT_inline) ? DieName(&die) : std::string();
        if (!name.empty() && !self) {
          uint64_t posting = dwarf_dieoffset(&die) | (!code                              ? kAbstractFlag
                                                      : tag == DW_TAG_inlined_subroutine ? kInlinedFlag
                                                                                         : 0);
          if (cxx) {
            auto [it, fresh] = cxx_names.try_emplace(origin);
            if (fresh) it->second = CxxKeys(&die, name);
            for (const std::string& key : it->second)
              if (!only || key == *only) out->functions.push_back({key, posting});
          }
          if (!only || name == *only) out->functions.push_back({std::move(name), posting});
        }
        enclosing.push_back({origin, within});
        children_within = static_cast<int>(enclosing.size()) - 1;
        descend = true;
        break;
      }
      case DW_TAG_lexical_block:
      case DW_TAG_namespace:
      case DW_TAG_class_type:
      case DW_TAG_structure_type:
        descend = true;
        break;
      default:
        break;
    }
    if (descend && dwarf_child(&die, &child) == 0) stack.push_back({child, children_within});
  }
  // The files its line table names, by basename, for SRC:ALN and line SRC.
  if (!only) out->files = UnitFiles(&cu, lines);
  // Globals: the CU's direct children that have a location.
  if (dwarf_child(&cu, &child) == 0) {
    do {
      if (dwarf_tag(&child) == DW_TAG_variable && dwarf_hasattr(&child, DW_AT_location)) {
        std::string name = DieName(&child);
        if (!name.empty() && (!only || name == *only))
          out->globals.push_back({std::move(name), dwarf_dieoffset(&child)});
      }
    } while (dwarf_siblingof(&child, &child) == 0);
  }
}

IndexContents WalkUnits(const std::vector<Dwarf*>& handles, const std::vector<Dwarf_Off>& units,
                        const std::function<void(size_t, size_t)>& progress, const LineSections* lines,
                        const std::function<void(Dwarf_Off)>& done_below) {
  std::atomic<size_t> next{0};
  std::vector<Partial> partials(handles.size());
  // The unit each thread is in: below the lowest, no thread reads again.
  std::vector<std::atomic<size_t>> at(handles.size());
  for (auto& a : at) a.store(0);
  auto work = [&](size_t thread) {
    UnitNames names;
    for (size_t i; (i = next.fetch_add(1)) < units.size();) {
      at[thread].store(i);
      if (thread == 0 && done_below && i % 64 == 0) {
        size_t lowest = i;
        for (auto& a : at) lowest = std::min(lowest, a.load());
        done_below(units[lowest]);
      }
      names.functions.clear();
      names.globals.clear();
      names.files.clear();
      WalkUnit(handles[thread], units[i], nullptr, &names, lines);
      for (auto& [name, posting] : names.functions) partials[thread].functions[name].push_back(posting);
      for (auto& [name, posting] : names.globals) partials[thread].globals[name].push_back(posting);
      for (const std::string& file : names.files) partials[thread].files[file].push_back(units[i]);
      if (thread == 0 && progress) progress(i, units.size());
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < handles.size(); ++t) threads.emplace_back(work, t);
  work(0);
  for (std::thread& t : threads) t.join();
  if (done_below) done_below(~Dwarf_Off{0});
  if (progress) progress(units.size(), units.size());
  IndexContents contents;
  contents.units = units;
  for (Partial& p : partials) {
    Merge(p.functions, contents.functions);
    Merge(p.globals, contents.globals);
    Merge(p.files, contents.files);
  }
  Normalize(contents.functions);
  Normalize(contents.globals);
  Normalize(contents.files);
  return contents;
}

std::vector<FunctionInstance> InFirstUnits(std::vector<FunctionInstance> instances, const std::vector<Dwarf_Off>& units,
                                           size_t max_units) {
  if (max_units == SIZE_MAX) return instances;
  size_t seen = 0, keep = 0;
  std::optional<size_t> last_unit;
  for (; keep < instances.size(); ++keep) {
    auto unit = static_cast<size_t>(std::upper_bound(units.begin(), units.end(), instances[keep].die) - units.begin());
    if (unit != last_unit && ++seen > max_units) break;
    last_unit = unit;
  }
  instances.resize(keep);
  return instances;
}

std::vector<FunctionInstance> WithCode(std::vector<FunctionInstance> instances) {
  std::erase_if(instances, [](const FunctionInstance& fn) { return fn.abstract; });
  return instances;
}

bool AllAbstract(const std::vector<FunctionInstance>& instances) {
  return !instances.empty() &&
         std::all_of(instances.begin(), instances.end(), [](const FunctionInstance& fn) { return fn.abstract; });
}

std::vector<FunctionInstance> ToInstances(const std::vector<uint64_t>& postings) {
  std::vector<FunctionInstance> out;
  out.reserve(postings.size());
  for (uint64_t p : postings) out.push_back({p & ~kPostingFlags, (p & kInlinedFlag) != 0, (p & kAbstractFlag) != 0});
  return out;
}

namespace {

// An index held in serialized form, read from the cache or just built. A
// look-up that meets a block of the cache file that fails its check is
// answered by the index `rebuild` makes (from the DWARF), and so is every
// later one.
class ViewIndex : public NameIndex {
 public:
  ViewIndex(std::unique_ptr<IndexView> view, std::function<std::unique_ptr<NameIndex>()> rebuild)
      : view_(std::move(view)), rebuild_(std::move(rebuild)) {}
  std::vector<FunctionInstance> Functions(const std::string& name, size_t max_units) override {
    if (rebuilt_) return rebuilt_->Functions(name, max_units);
    auto postings = view_->Functions(name);
    if (!postings) return Rebuilt().Functions(name, max_units);
    auto all = WithCode(ToInstances(*postings));
    if (max_units == SIZE_MAX) return all;
    if (units_.empty()) {
      auto units = view_->Units();
      if (!units) return Rebuilt().Functions(name, max_units);
      units_ = std::move(*units);
    }
    return InFirstUnits(std::move(all), units_, max_units);
  }
  bool InlineOnly(const std::string& name) override {
    if (rebuilt_) return rebuilt_->InlineOnly(name);
    auto postings = view_->Functions(name);
    return postings ? AllAbstract(ToInstances(*postings)) : Rebuilt().InlineOnly(name);
  }
  std::vector<Dwarf_Off> Globals(const std::string& name) override {
    return Answer([&](const IndexView& v) { return v.Globals(name); }, [&](NameIndex& i) { return i.Globals(name); });
  }
  std::vector<std::string> FunctionNames() override {
    return Answer([](const IndexView& v) { return v.FunctionNames(); }, [](NameIndex& i) { return i.FunctionNames(); });
  }
  std::vector<Dwarf_Off> Units() override {
    return Answer([](const IndexView& v) { return v.Units(); }, [](NameIndex& i) { return i.Units(); });
  }
  std::vector<Dwarf_Off> UnitsWithFile(std::string_view basename) override {
    return Answer([&](const IndexView& v) { return v.Files(basename); },
                  [&](NameIndex& i) { return i.UnitsWithFile(basename); });
  }
  bool KnowsFiles() const override { return !rebuilt_ || rebuilt_->KnowsFiles(); }
  std::optional<uint64_t> FrameFor(uint64_t address) override {
    return Answer([&](const IndexView& v) { return v.FrameFor(address); },
                  [&](NameIndex& i) { return i.FrameFor(address); });
  }

 private:
  NameIndex& Rebuilt() {
    rebuilt_ = rebuild_();
    view_.reset();
    return *rebuilt_;
  }
  template <typename FromView, typename FromIndex>
  auto Answer(FromView from_view, FromIndex from_index) -> decltype(from_index(std::declval<NameIndex&>())) {
    if (rebuilt_) return from_index(*rebuilt_);
    auto answer = from_view(*view_);
    if (!answer) return from_index(Rebuilt());
    return std::move(*answer);
  }

  std::unique_ptr<IndexView> view_;
  std::function<std::unique_ptr<NameIndex>()> rebuild_;
  std::unique_ptr<NameIndex> rebuilt_;
  std::vector<Dwarf_Off> units_;
};

}  // namespace

std::unique_ptr<NameIndex> MakeViewIndex(std::unique_ptr<IndexView> view,
                                         std::function<std::unique_ptr<NameIndex>()> rebuild) {
  return std::make_unique<ViewIndex>(std::move(view), std::move(rebuild));
}

}  // namespace kprobectl::dwarf
