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
#include <thread>
#include <unordered_map>

#include "dwarf_internal.h"

namespace kprobectl::dwarf {

namespace {

bool HasCode(Dwarf_Die* die) {
  return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges) ||
         dwarf_hasattr(die, DW_AT_entry_pc);
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
  for (auto& [name, postings] : out)
    std::sort(postings.begin(), postings.end(),
              [](uint64_t a, uint64_t b) { return (a & ~kInlinedFlag) < (b & ~kInlinedFlag); });
  table = std::move(out);
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
  // Depth-first over the CU; `stack` holds the next sibling to visit.
  std::vector<Dwarf_Die> stack;
  Dwarf_Die child;
  if (dwarf_child(&cu, &child) == 0) stack.push_back(child);
  while (!stack.empty()) {
    Dwarf_Die die = stack.back();
    stack.pop_back();
    Dwarf_Die sibling;
    if (dwarf_siblingof(&die, &sibling) == 0) stack.push_back(sibling);
    int tag = dwarf_tag(&die);
    bool descend = false;
    switch (tag) {
      case DW_TAG_subprogram:
      case DW_TAG_inlined_subroutine:
        if (HasCode(&die)) {
          std::string name = DieName(&die);
          if (!name.empty() && (!only || name == *only))
            out->functions.push_back(
                {std::move(name), dwarf_dieoffset(&die) | (tag == DW_TAG_inlined_subroutine ? kInlinedFlag : 0)});
        }
        descend = true;
        break;
      case DW_TAG_lexical_block:
      case DW_TAG_namespace:
      case DW_TAG_class_type:
      case DW_TAG_structure_type:
        descend = true;
        break;
      default:
        break;
    }
    if (descend && dwarf_child(&die, &child) == 0) stack.push_back(child);
  }
  // The files its line table names, by basename, for SRC:ALN and line SRC.
  if (!only) out->files = UnitFiles(&cu, lines);
  // Globals: the CU's direct children that have a location.
  if (dwarf_child(&cu, &child) == 0) {
    do {
      if (dwarf_tag(&child) == DW_TAG_variable && dwarf_hasattr(&child, DW_AT_location)) {
        std::string name = DieName(&child);
        if (!name.empty() && (!only || name == *only)) out->globals.push_back({std::move(name), dwarf_dieoffset(&child)});
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

std::vector<FunctionInstance> ToInstances(const std::vector<uint64_t>& postings) {
  std::vector<FunctionInstance> out;
  out.reserve(postings.size());
  for (uint64_t p : postings) out.push_back({p & ~kInlinedFlag, (p & kInlinedFlag) != 0});
  return out;
}

namespace {

// An index held in serialized form, read from the cache or just built.
class ViewIndex : public NameIndex {
 public:
  explicit ViewIndex(std::unique_ptr<IndexView> view) : view_(std::move(view)) {}
  std::vector<FunctionInstance> Functions(const std::string& name, size_t max_units) override {
    auto all = ToInstances(view_->Functions(name));
    if (max_units == SIZE_MAX) return all;
    if (units_.empty()) units_ = view_->Units();
    return InFirstUnits(std::move(all), units_, max_units);
  }
  std::vector<Dwarf_Off> Globals(const std::string& name) override { return view_->Globals(name); }
  std::vector<std::string> FunctionNames() override { return view_->FunctionNames(); }
  std::vector<Dwarf_Off> Units() override { return view_->Units(); }
  std::vector<Dwarf_Off> UnitsWithFile(std::string_view basename) override { return view_->Files(basename); }
  bool KnowsFiles() const override { return true; }
  std::optional<uint64_t> FrameFor(uint64_t address) override { return view_->FrameFor(address); }

 private:
  std::unique_ptr<IndexView> view_;
  std::vector<Dwarf_Off> units_;
};

}  // namespace

std::unique_ptr<NameIndex> MakeViewIndex(std::unique_ptr<IndexView> view) {
  return std::make_unique<ViewIndex>(std::move(view));
}

}  // namespace kprobectl::dwarf
