// SPDX-License-Identifier: GPL-2.0-or-later
//
// KernelFacts' DWARF: functions by name, their instances and entries, the
// scopes at an address, and the walks that find a test's subject.
#include <dwarf.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <stdexcept>

#include "kernel_facts.h"

namespace kprobectl::test {

namespace {

bool HasCode(Dwarf_Die* die) { return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges); }

std::optional<uint64_t> AddressAttr(Dwarf_Die* die, unsigned name) {
  Dwarf_Attribute attr;
  Dwarf_Addr address = 0;
  if (!dwarf_attr(die, name, &attr)) return std::nullopt;
  if (dwarf_formaddr(&attr, &address) == 0) return address;
  // DWARF 5 lets DW_AT_entry_pc be an offset from the DIE's low_pc.
  Dwarf_Word offset = 0;
  Dwarf_Addr low = 0;
  if (dwarf_formudata(&attr, &offset) == 0 && dwarf_lowpc(die, &low) == 0) return low + offset;
  return std::nullopt;
}

}  // namespace

// --- DWARF -------------------------------------------------------------------

Dwarf_Die KernelFacts::Die(Dwarf_Off offset) const {
  Dwarf_Die die;
  if (!dwarf_offdie(dwarf_, offset, &die)) throw std::runtime_error("no DIE at " + std::to_string(offset));
  return die;
}

Dwarf_Die KernelFacts::CuOf(Dwarf_Die* die) const {
  Dwarf_Die cu;
  if (!dwarf_diecu(die, &cu, nullptr, nullptr)) throw std::runtime_error("a DIE outside any CU");
  return cu;
}

std::string KernelFacts::Name(Dwarf_Die* die) {
  const char* name = dwarf_diename(die);
  return name ? name : "";
}

void KernelFacts::IndexFunctions() {
  Dwarf_Off offset = 0, next = 0;
  size_t header = 0;
  while (dwarf_nextcu(dwarf_, offset, &next, &header, nullptr, nullptr, nullptr) == 0) {
    Dwarf_Die cu, child;
    if (dwarf_offdie(dwarf_, offset + header, &cu) && dwarf_child(&cu, &child) == 0) do {
        if (dwarf_tag(&child) != DW_TAG_subprogram) continue;
        if (const char* name = dwarf_diename(&child)) named_[name].push_back(dwarf_dieoffset(&child));
      } while (dwarf_siblingof(&child, &child) == 0);
    offset = next;
  }
}

const std::vector<Dwarf_Off>& KernelFacts::Named(const std::string& name) const {
  static const std::vector<Dwarf_Off> none;
  auto it = named_.find(name);
  return it == named_.end() ? none : it->second;
}

std::vector<std::string> KernelFacts::NamesStartingWith(const std::string& prefix) const {
  std::vector<std::string> out;
  for (auto it = named_.lower_bound(prefix); it != named_.end() && it->first.starts_with(prefix); ++it)
    out.push_back(it->first);
  return out;
}

Dwarf_Off KernelFacts::Origin(Dwarf_Die* die) const {
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

std::vector<Range> KernelFacts::RangesOf(Dwarf_Die* die, bool with_empty) {
  std::vector<Range> out;
  Dwarf_Addr base, start, end;
  ptrdiff_t offset = 0;
  while ((offset = dwarf_ranges(die, offset, &base, &start, &end)) > 0)
    if (with_empty || end > start) out.push_back({start, end});
  return out;
}

std::string KernelFacts::FileName(Dwarf_Die* cu, Dwarf_Word index) const {
  Dwarf_Files* files = nullptr;
  size_t count = 0;
  if (dwarf_getsrcfiles(cu, &files, &count) != 0 || index >= count) return {};
  const char* name = dwarf_filesrc(files, index, nullptr, nullptr);
  return name ? name : "";
}

std::string KernelFacts::DeclFile(Dwarf_Die* die) const {
  const char* file = dwarf_decl_file(die);
  return file ? file : "";
}

int KernelFacts::DeclLine(Dwarf_Die* die) const {
  int line = 0;
  return dwarf_decl_line(die, &line) == 0 ? line : 0;
}

// Where x86-64's jmp rel8 (eb) or jmp rel32 (e9) at `address` goes.
std::optional<uint64_t> KernelFacts::JumpTarget(uint64_t address) const {
  std::string code = Bytes(address, 2);
  if (code.size() == 2 && static_cast<unsigned char>(code[0]) == 0xeb)
    return address + 2 + static_cast<uint64_t>(static_cast<int64_t>(static_cast<int8_t>(code[1])));
  code = Bytes(address, 5);
  if (code.size() < 5 || static_cast<unsigned char>(code[0]) != 0xe9) return std::nullopt;
  int32_t rel = 0;
  std::memcpy(&rel, code.data() + 1, 4);
  return address + 5 + static_cast<uint64_t>(static_cast<int64_t>(rel));
}

// The entry: DW_AT_entry_pc (else DW_AT_low_pc) when code of the DIE's own
// is there or the instruction there jumps into that code (gcc 14's rotated
// loops: 7.3's d_ancestor in is_subdir), else the start of its first
// non-empty range; with neither
// attribute (gcc's hot/cold split, a copy that begins with an empty range)
// the first range as listed, the hot part, empty or not.
Instance KernelFacts::InstanceOf(Dwarf_Die* die) const {
  Instance out;
  out.die = dwarf_dieoffset(die);
  out.inlined = dwarf_tag(die) == DW_TAG_inlined_subroutine;
  out.ranges = RangesOf(die, false);
  out.listed = RangesOf(die, true);
  auto entry = AddressAttr(die, DW_AT_entry_pc);
  if (!entry) entry = AddressAttr(die, DW_AT_low_pc);
  if (entry) {
    out.entry = *entry;
    auto holds = [&](uint64_t address) {
      return std::any_of(out.ranges.begin(), out.ranges.end(), [&](const Range& r) { return r.Holds(address); });
    };
    auto jump = JumpTarget(*entry);
    if (!holds(*entry) && !(jump && holds(*jump)) && !out.ranges.empty())
      out.entry = std::min_element(out.ranges.begin(), out.ranges.end(), [](const Range& a, const Range& b) {
                    return a.start < b.start;
                  })->start;
  } else if (!out.listed.empty()) {
    out.entry = out.listed.front().start;
  }
  return out;
}

std::vector<Instance> KernelFacts::Instances(const std::string& name) const {
  std::vector<Instance> out;
  std::map<Dwarf_Off, std::vector<Dwarf_Off>> abstract_by_cu;
  for (Dwarf_Off offset : Named(name)) {
    Dwarf_Die die = Die(offset);
    if (dwarf_hasattr(&die, DW_AT_declaration)) continue;
    if (HasCode(&die)) out.push_back(InstanceOf(&die));
    Dwarf_Die cu = CuOf(&die);
    abstract_by_cu[dwarf_dieoffset(&cu)].push_back(Origin(&die));
  }
  // Each CU that declares it: every inlined_subroutine whose origin it is,
  // with the functions around it (their origins and declaration places).
  struct Frame {
    Dwarf_Off origin;
    std::string decl_file;
    int decl_line;
  };
  for (auto& [cu_offset, origins] : abstract_by_cu) {
    Dwarf_Die cu = Die(cu_offset);
    std::vector<Frame> frames;
    std::string holder;
    std::function<void(Dwarf_Die*)> walk = [&](Dwarf_Die* parent) {
      Dwarf_Die child;
      if (dwarf_child(parent, &child) != 0) return;
      do {
        int tag = dwarf_tag(&child);
        if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block) continue;
        if (frames.empty() && tag == DW_TAG_subprogram && !HasCode(&child)) continue;
        if (frames.empty()) holder = Name(&child);
        Dwarf_Off origin = Origin(&child);
        bool code = HasCode(&child) || dwarf_hasattr(&child, DW_AT_entry_pc);
        if (tag == DW_TAG_inlined_subroutine && code && std::count(origins.begin(), origins.end(), origin)) {
          Instance copy = InstanceOf(&child);
          copy.holder = holder;
          Dwarf_Die abstract = Die(origin);
          Dwarf_Attribute attr;
          Dwarf_Word call_file = 0, call_line = 0;
          bool called = dwarf_formudata(dwarf_attr(&child, DW_AT_call_file, &attr), &call_file) == 0 &&
                        dwarf_formudata(dwarf_attr(&child, DW_AT_call_line, &attr), &call_line) == 0;
          std::string decl_file = DeclFile(&abstract);
          int decl_line = DeclLine(&abstract);
          bool from_decl = called && static_cast<int>(call_line) == decl_line;
          copy.call_line = static_cast<int>(call_line);
          copy.called_from_decl = from_decl;
          bool inside_itself =
              std::any_of(frames.begin(), frames.end(), [&](const Frame& f) { return f.origin == origin; });
          if (inside_itself && (!called || from_decl))
            copy.part_of_itself = "a split part of " + name + " inlined back into it";
          else if (!inside_itself && from_decl && FileName(&cu, call_file) == decl_file && !frames.empty() &&
                   (frames.back().decl_file != decl_file || frames.back().decl_line != decl_line))
            copy.part_of_itself = "code the same as " + name + "'s, called from its declaration line";
          out.push_back(std::move(copy));
        }
        if (tag == DW_TAG_lexical_block) {
          walk(&child);
          continue;
        }
        Dwarf_Die origin_die = Die(origin);
        frames.push_back({origin, DeclFile(&origin_die), DeclLine(&origin_die)});
        walk(&child);
        frames.pop_back();
      } while (dwarf_siblingof(&child, &child) == 0);
    };
    walk(&cu);
  }
  std::stable_sort(out.begin(), out.end(), [](const Instance& a, const Instance& b) { return a.entry < b.entry; });
  return out;
}

namespace {

// Every DIE of the tags `tags` in the scopes of the image's functions for
// which `wanted(die, holder)` holds, at most `limit`.
std::vector<Dwarf_Off> FindInScopes(Dwarf* dwarf, std::initializer_list<int> tags,
                                    const std::function<bool(Dwarf_Die*, Dwarf_Die*)>& wanted, size_t limit) {
  std::vector<Dwarf_Off> out;
  Dwarf_Die holder;
  std::function<void(Dwarf_Die*)> walk = [&](Dwarf_Die* parent) {
    Dwarf_Die child;
    if (dwarf_child(parent, &child) != 0) return;
    do {
      int tag = dwarf_tag(&child);
      if (std::count(tags.begin(), tags.end(), tag) && out.size() < limit && wanted(&child, &holder))
        out.push_back(dwarf_dieoffset(&child));
      if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block) walk(&child);
    } while (out.size() < limit && dwarf_siblingof(&child, &child) == 0);
  };
  Dwarf_Off offset = 0, next = 0;
  size_t header = 0;
  while (out.size() < limit && dwarf_nextcu(dwarf, offset, &next, &header, nullptr, nullptr, nullptr) == 0) {
    Dwarf_Die cu, child;
    if (dwarf_offdie(dwarf, offset + header, &cu) && dwarf_child(&cu, &child) == 0) do {
        if (dwarf_tag(&child) != DW_TAG_subprogram || !HasCode(&child)) continue;
        holder = child;
        walk(&child);
      } while (out.size() < limit && dwarf_siblingof(&child, &child) == 0);
    offset = next;
  }
  return out;
}

}  // namespace

std::vector<Dwarf_Off> KernelFacts::FindCopies(const std::function<bool(Dwarf_Die*, Dwarf_Die*)>& wanted,
                                               size_t limit) const {
  return FindInScopes(dwarf_, {DW_TAG_inlined_subroutine}, wanted, limit);
}

std::vector<Dwarf_Off> KernelFacts::FindVariables(const std::function<bool(Dwarf_Die*, Dwarf_Die*)>& wanted,
                                                  size_t limit) const {
  return FindInScopes(dwarf_, {DW_TAG_variable, DW_TAG_formal_parameter}, wanted, limit);
}

std::vector<Dwarf_Die> KernelFacts::ScopesAt(uint64_t address) const {
  std::vector<Dwarf_Die> chain;
  Dwarf_Die cu, child;
  if (!dwarf_addrdie(dwarf_, address, &cu) || dwarf_child(&cu, &child) != 0) return chain;
  auto holds = [&](Dwarf_Die* die) {
    for (const Range& r : RangesOf(die, false))
      if (r.Holds(address)) return true;
    return false;
  };
  do {
    if (dwarf_tag(&child) == DW_TAG_subprogram && holds(&child)) {
      chain.push_back(child);
      break;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
  for (bool deeper = !chain.empty(); deeper;) {
    deeper = false;
    Dwarf_Die inner;
    if (dwarf_child(&chain.back(), &inner) != 0) break;
    do {
      int tag = dwarf_tag(&inner);
      if ((tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine) && holds(&inner)) {
        chain.push_back(inner);
        deeper = true;
        break;
      }
    } while (dwarf_siblingof(&inner, &inner) == 0);
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

std::vector<Dwarf_Off> KernelFacts::AncestorsOf(Dwarf_Die* die) const {
  std::vector<Dwarf_Off> out;
  const Dwarf_Off target = dwarf_dieoffset(die);
  Dwarf_Die at = CuOf(die);
  Dwarf_Off end = UINT64_MAX;  // where `at`'s subtree ends
  // Down from the CU: the child whose subtree (up to its next sibling, or
  // to its parent's end) holds the target.
  while (dwarf_dieoffset(&at) != target) {
    out.push_back(dwarf_dieoffset(&at));
    Dwarf_Die child;
    if (dwarf_child(&at, &child) != 0) return {};
    for (;;) {
      Dwarf_Die next = child;
      bool last = dwarf_siblingof(&next, &next) != 0;
      Dwarf_Off child_end = last ? end : dwarf_dieoffset(&next);
      if (target >= dwarf_dieoffset(&child) && target < child_end) {
        at = child;
        end = child_end;
        break;
      }
      if (last) return {};
      child = next;
    }
  }
  return out;
}

std::string KernelFacts::OutOfLineAt(uint64_t address) const {
  auto scopes = ScopesAt(address);
  return scopes.empty() ? std::string() : Name(&scopes.back());
}

std::vector<Dwarf_Die> KernelFacts::Variables(Dwarf_Die* scope, bool parameters_only) const {
  std::vector<Dwarf_Die> out;
  Dwarf_Die child;
  if (dwarf_child(scope, &child) == 0) do {
      int tag = dwarf_tag(&child);
      if (tag != DW_TAG_formal_parameter && (parameters_only || tag != DW_TAG_variable)) continue;
      if (!dwarf_hasattr(&child, DW_AT_declaration) && !Name(&child).empty()) out.push_back(child);
    } while (dwarf_siblingof(&child, &child) == 0);
  return out;
}

}  // namespace kprobectl::test
