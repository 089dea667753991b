// SPDX-License-Identifier: GPL-2.0-or-later
//
// Finding one name without an index: which CUs can hold it, from the bytes.
//
// A DIE names a function or variable with DW_AT_name, as an offset into
// .debug_str (DW_FORM_strp) or inline (DW_FORM_string); an inlined copy or a
// clone reaches its name through DW_AT_abstract_origin, which without LTO
// points into the same CU. So every CU that holds an instance of `name`
// holds either the 4-byte offset of a "name\0" in .debug_str (the linker
// merges strings and their tails, so any occurrence can be the one used) or
// the bytes "name\0". Reading .debug_info with pread (into a small buffer:
// the page cache, not this process, holds the file) and searching for those
// patterns finds the candidate CUs in a fraction of the time a walk of every
// DIE takes, and without mapping the whole section; only the candidates are
// then walked with libdw, by the same code the full index uses, so the
// answers are the same. Files where the premise fails (forms that reach
// other units or other string tables, DWARF64, relocatable or compressed
// sections) are walked in full instead: dwarf_index_choice.cc decides.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <thread>

#include "byte_reader.h"
#include "dwarf_internal.h"
#include "kprobectl/cxx_names.h"

namespace kprobectl::dwarf {

namespace {

Result<void> ReadInto(int fd, const RawSection& section, std::string& out) {
  out.resize(section.size);
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(section.offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Fail("cannot read the DWARF: " + std::string(n < 0 ? std::strerror(errno) : "short file"));
    done += static_cast<size_t>(n);
  }
  return {};
}

Result<std::string> ReadRange(int fd, const RawSection& section) {
  std::string out;
  KP_TRY_VOID(ReadInto(fd, section, out));
  return out;
}

// Forms that let a DIE reach a name outside its own CU and .debug_str.
bool FormDefeatsScan(uint64_t form) {
  switch (form) {
    case 0x10:  // DW_FORM_ref_addr
    case 0x16:  // DW_FORM_indirect
    case 0x1a:
    case 0x25:
    case 0x26:
    case 0x27:
    case 0x28:  // DW_FORM_strx*
    case 0x1c:
    case 0x1d:
    case 0x24:  // DW_FORM_ref_sup4, strp_sup, ref_sup8
    case 0x1f02:
    case 0x1f20:
    case 0x1f21:  // GNU_str_index, GNU_ref_alt, GNU_strp_alt
      return true;
    default:
      return false;
  }
}

struct Pattern {
  std::string bytes;
};

// A walk's function postings as instances, in DIE order.
std::vector<FunctionInstance> SortedInstances(const UnitNames& names) {
  std::vector<uint64_t> postings;
  for (const auto& [name, posting] : names.functions) postings.push_back(posting);
  std::sort(postings.begin(), postings.end(),
            [](uint64_t a, uint64_t b) { return (a & ~kPostingFlags) < (b & ~kPostingFlags); });
  return ToInstances(postings);
}

// Offsets below `to` in `data` where any pattern starts. Few patterns: memmem each;
// many (a short name ends many strings): one pass testing every 4-byte
// value against a bitmap of the .debug_str offsets wanted.
void Search(const std::string& data, size_t to, const std::vector<Pattern>& patterns, const std::vector<bool>* bitmap,
            std::vector<size_t>* hits) {
  for (const Pattern& pattern : patterns) {
    const char* base = data.data();
    const char* p = base;
    const char* end = base + std::min(data.size(), to + pattern.bytes.size() - 1);
    while (p < end && (p = static_cast<const char*>(
                           memmem(p, static_cast<size_t>(end - p), pattern.bytes.data(), pattern.bytes.size())))) {
      if (static_cast<size_t>(p - base) < to) hits->push_back(static_cast<size_t>(p - base));
      ++p;
    }
  }
  if (!bitmap) return;
  size_t last = std::min(to, data.size() >= 4 ? data.size() - 3 : 0);
  for (size_t i = 0; i < last; ++i) {
    uint32_t v;
    std::memcpy(&v, data.data() + i, 4);
    if (v < bitmap->size() && (*bitmap)[v]) hits->push_back(i);
  }
}

class ScanIndex : public NameIndex {
 public:
  explicit ScanIndex(ScanInput input) : input_(std::move(input)) {}

  std::vector<FunctionInstance> Functions(const std::string& name, size_t max_units) override {
    if (max_units == SIZE_MAX || found_.contains(name))
      return InFirstUnits(WithCode(Lookup(name).functions), Units(), max_units);
    auto first = FirstInstances(name, max_units);
    return first ? *first : InFirstUnits(WithCode(Lookup(name).functions), Units(), max_units);
  }
  bool InlineOnly(const std::string& name) override { return AllAbstract(Lookup(name).functions); }
  std::vector<Dwarf_Off> Globals(const std::string& name) override { return Lookup(name).globals; }
  std::vector<std::string> FunctionNames() override { return Full().FunctionNames(); }
  std::vector<Dwarf_Off> Units() override {
    std::vector<Dwarf_Off> out;
    for (const UnitSpan& unit : input_.units) out.push_back(unit.die);
    return out;
  }

 private:
  struct Found {
    std::vector<FunctionInstance> functions;
    std::vector<Dwarf_Off> globals;
  };

  NameIndex& Full() {
    if (!full_) full_ = input_.full_walk();
    return *full_;
  }

  const Found& Lookup(const std::string& name) {
    auto it = found_.find(name);
    if (it != found_.end()) return it->second;
    Found& found = found_[name];
    auto units = CandidateUnits(name);
    if (!units) {  // unreadable: walk everything, as without a scan
      found.functions = Full().Functions(name);
      found.globals = Full().Globals(name);
      return found;
    }
    UnitNames names;
    for (size_t unit : *units) WalkUnit(input_.dwarf->get(), input_.units[unit].die, &name, &names);
    found.functions = SortedInstances(names);
    for (auto& [n, posting] : names.globals) found.globals.push_back(posting);
    std::sort(found.globals.begin(), found.globals.end());
    return found;
  }

  // What a DIE naming `name` holds: the string inline, or the offset of
  // any "name\0" in .debug_str (few: each a pattern; many: a bitmap).
  struct Needles {
    std::vector<Pattern> patterns;
    std::vector<bool> bitmap;
    const std::vector<bool>* Bitmap() const { return bitmap.empty() ? nullptr : &bitmap; }
  };
  Result<Needles> NeedlesFor(const std::string& key) {
    if (strings_.empty()) strings_ = KP_TRY(ReadRange(input_.fd, input_.str));
    // A C++ function's qualified name is no string of the DWARF: its DIE
    // is named by the last scope ("add" of "shop::Cart::add").
    std::string name = IsCxxName(key) ? LastScope(key) : key;
    std::string needle = name + '\0';
    Needles n;
    n.patterns.push_back({needle});
    std::vector<uint32_t> offsets;
    for (size_t at = 0; (at = strings_.find(needle, at)) != std::string::npos; ++at)
      offsets.push_back(static_cast<uint32_t>(at));
    if (offsets.size() <= 4) {
      for (uint32_t o : offsets) n.patterns.push_back({std::string(reinterpret_cast<const char*>(&o), 4)});
    } else {
      n.bitmap.assign(strings_.size(), false);
      for (uint32_t o : offsets) n.bitmap[o] = true;
    }
    return n;
  }

  // The units (indexes into input_.units, sorted, unique) that hold a hit.
  std::vector<size_t> UnitsOf(const std::vector<size_t>& hits) const {
    std::vector<size_t> units;
    for (size_t hit : hits) {
      auto it = std::upper_bound(input_.units.begin(), input_.units.end(), hit,
                                 [](size_t h, const UnitSpan& u) { return h < u.start; });
      if (it == input_.units.begin()) continue;
      units.push_back(static_cast<size_t>(it - input_.units.begin()) - 1);
    }
    std::sort(units.begin(), units.end());
    units.erase(std::unique(units.begin(), units.end()), units.end());
    return units;
  }

  Result<std::vector<size_t>> CandidateUnits(const std::string& name) {
    if (name.empty() || name.find('\0') != std::string::npos) return std::vector<size_t>{};
    Needles needles = KP_TRY(NeedlesFor(name));
    return UnitsOf(KP_TRY(ScanInfo(needles)));
  }

  // The instances in the first `max_units` CUs that hold any: .debug_info
  // read from the start, one chunk at a time, each chunk's candidates walked
  // before the next is read, so that a name in the first CUs costs little.
  Result<std::vector<FunctionInstance>> FirstInstances(const std::string& name, size_t max_units) {
    std::vector<FunctionInstance> out;
    if (name.empty() || name.find('\0') != std::string::npos) return out;
    Needles needles = KP_TRY(NeedlesFor(name));
    size_t with = 0;
    std::optional<size_t> walked;
    KP_TRY_VOID(ScanRange(0, input_.info.size, needles, [&](const std::vector<size_t>& hits) {
      for (size_t unit : UnitsOf(hits)) {
        if (walked && unit <= *walked) continue;  // a unit that spans chunks
        walked = unit;
        UnitNames names;
        WalkUnit(input_.dwarf->get(), input_.units[unit].die, &name, &names);
        auto instances = WithCode(SortedInstances(names));
        if (instances.empty()) continue;
        out.insert(out.end(), instances.begin(), instances.end());
        if (++with == max_units) return false;
      }
      return true;
    }));
    return out;
  }

  // Reads [begin, end) of .debug_info in chunks (each with enough of the
  // next to hold a pattern that starts in it) and hands each chunk's hits,
  // as section offsets, to `on_hits`, until it returns false.
  Result<void> ScanRange(uint64_t begin, uint64_t end, const Needles& needles,
                         const std::function<bool(const std::vector<size_t>&)>& on_hits) const {
    constexpr uint64_t kChunk = 1 << 20;
    size_t overlap = 4;
    for (const Pattern& p : needles.patterns) overlap = std::max(overlap, p.bytes.size());
    std::string chunk;
    std::vector<size_t> hits;
    for (uint64_t at = begin; at < end; at += kChunk) {
      uint64_t len = std::min<uint64_t>(kChunk + overlap - 1, input_.info.size - at);
      KP_TRY_VOID(ReadInto(input_.fd, {input_.info.offset + at, len}, chunk));
      hits.clear();
      Search(chunk, std::min<uint64_t>(kChunk, end - at), needles.patterns, needles.Bitmap(), &hits);
      for (size_t& h : hits) h += at;
      if (!on_hits(hits)) break;
    }
    return {};
  }

  // Every hit in .debug_info, each half scanned on its own thread.
  Result<std::vector<size_t>> ScanInfo(const Needles& needles) const {
    const uint64_t size = input_.info.size;
    std::vector<std::vector<size_t>> hits(2);
    std::vector<std::string> errors(2);
    auto work = [&](size_t thread) {
      auto scanned = ScanRange(size / 2 * thread, thread ? size : size / 2, needles, [&](const std::vector<size_t>& h) {
        hits[thread].insert(hits[thread].end(), h.begin(), h.end());
        return true;
      });
      if (!scanned) errors[thread] = scanned.error().message;
    };
    std::thread second(work, 1);
    work(0);
    second.join();
    for (const std::string& e : errors)
      if (!e.empty()) return Fail(e);
    hits[0].insert(hits[0].end(), hits[1].begin(), hits[1].end());
    return hits[0];
  }

  ScanInput input_;
  std::string strings_;
  std::map<std::string, Found> found_;
  std::unique_ptr<NameIndex> full_;
};

}  // namespace

Result<bool> AbbrevsAllowScan(int fd, const RawSection& abbrev) {
  std::string bytes = KP_TRY(ReadRange(fd, abbrev));
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  return AbbrevFormsAllowed({p, p + bytes.size()}, false,
                            [](uint64_t, uint64_t form) { return !FormDefeatsScan(form); });
}

std::unique_ptr<NameIndex> MakeScanIndex(ScanInput input) { return std::make_unique<ScanIndex>(std::move(input)); }

}  // namespace kprobectl::dwarf
