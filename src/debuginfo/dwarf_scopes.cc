// SPDX-License-Identifier: GPL-2.0-or-later
#include "dwarf_scopes.h"

#include <dwarf.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>

namespace kprobectl::dwarf {

namespace {

// Whether `die` lies inside `scope`'s subtree, when `scope`'s parent
// holds it: after `scope`, before its next sibling (if any).
bool Holds(Dwarf_Die* scope, Dwarf_Die* die) {
  if (dwarf_dieoffset(scope) >= dwarf_dieoffset(die)) return false;
  Dwarf_Die next = *scope;
  return dwarf_siblingof(&next, &next) != 0 || dwarf_dieoffset(die) < dwarf_dieoffset(&next);
}

// An inlined copy that begins at P with an empty range, [P, P) (all its
// code folded into its caller's: gcc 12, css_next_descendant_pre's first
// call in cgroup_save_control+5; or its code elsewhere: hrtimer_cancel
// in do_nanosleep+56), holds no address at P, yet it is the probed
// function there: the scopes are its own, then those that hold it, so
// that its parameters, not the caller's, are the probe's (located for
// P's first view, or not at all). Scopes at P that do not hold it are
// not its.
std::vector<Dwarf_Die> WithFolded(std::vector<Dwarf_Die> chain, Dwarf_Die* fn, const DwarfAddress& at) {
  uint64_t entry = 0;
  bool begins_here = dwarf_tag(fn) == DW_TAG_inlined_subroutine && EntryAddress(fn, &entry) && entry == at.address;
  if (chain.empty() || !begins_here) return chain;
  size_t innermost_holder = chain.size();
  while (innermost_holder > 0 && Holds(&chain[innermost_holder - 1], fn)) --innermost_holder;
  chain.erase(chain.begin(), chain.begin() + static_cast<ptrdiff_t>(innermost_holder));
  chain.push_back(*fn);
  std::rotate(chain.rbegin(), chain.rbegin() + 1, chain.rend());
  return chain;
}

// `chain` without the outermost copy inlined into the probed function's
// scope that begins at the probe's address, and the scopes inside it
// (all of `chain` when the probed function is not in it).
std::vector<Dwarf_Die> WithinProbed(std::vector<Dwarf_Die> chain, Dwarf_Die* fn, const DwarfAddress& at) {
  auto probed = std::find_if(chain.begin(), chain.end(),
                             [&](Dwarf_Die die) { return dwarf_dieoffset(&die) == dwarf_dieoffset(fn); });
  if (probed == chain.end()) return WithFolded(std::move(chain), fn, at);
  // At the probed function's own entry nothing of it has run: a copy
  // that begins later (its code scheduled before its entry_pc: gcc 12,
  // ZSTD_createDCtx_advanced in ZSTD_createDCtx at ZSTD_decompress+24)
  // has not begun either.
  uint64_t probed_entry = 0;
  bool at_entry = EntryAddress(fn, &probed_entry) && probed_entry == at.address;
  auto begins_here = std::find_if(std::make_reverse_iterator(probed), chain.rend(), [&](Dwarf_Die die) {
    uint64_t entry = 0;
    return dwarf_tag(&die) == DW_TAG_inlined_subroutine && EntryAddress(&die, &entry) &&
           (entry == at.address || (at_entry && entry > at.address));
  });
  chain.erase(chain.begin(), begins_here.base());
  return chain;
}

}  // namespace

Scopes::Scopes(DwarfInfo& info, Dwarf_Die* cu, Dwarf_Die* fn, const DwarfAddress& at)
    : chain(WithinProbed(info.ScopeChain(cu, at.address), fn, at)) {
  dies = chain.data();
  count = static_cast<int>(chain.size());
}

Dwarf_Die* OutOfLine(const Scopes& scopes) {
  for (int i = scopes.count - 1; i >= 0; --i)
    if (dwarf_tag(&scopes.dies[i]) == DW_TAG_subprogram) return &scopes.dies[i];
  return nullptr;
}

std::vector<Dwarf_Die> VisibleVariables(Scopes& scopes, bool params_only, Dwarf_Off function) {
  int first = 0;
  if (params_only) {
    // The probed function's scope, else the innermost function's.
    std::optional<int> probed, innermost;
    for (int i = 0; i < scopes.count; ++i) {
      int tag = dwarf_tag(&scopes.dies[i]);
      if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine) continue;
      if (!innermost) innermost = i;
      if (dwarf_dieoffset(&scopes.dies[i]) == function) probed = i;
    }
    if (!probed && !innermost) return {};
    first = probed ? *probed : *innermost;
  }
  std::vector<Dwarf_Die> out;
  std::set<std::string> names;
  for (int i = first; i < scopes.count; ++i) {
    Dwarf_Die child;
    int tag = dwarf_tag(&scopes.dies[i]);
    if (dwarf_child(&scopes.dies[i], &child) == 0) {
      std::vector<Dwarf_Die> here;
      do {
        int t = dwarf_tag(&child);
        if (t != DW_TAG_formal_parameter && (params_only || t != DW_TAG_variable)) continue;
        std::string name = DieName(&child);
        if (name.empty() || names.contains(name) || dwarf_hasattr(&child, DW_AT_declaration)) continue;
        names.insert(name);
        here.push_back(child);
      } while (dwarf_siblingof(&child, &child) == 0);
      out.insert(out.begin(), here.begin(), here.end());  // outer scopes first
    }
    if (tag == DW_TAG_subprogram || params_only) break;
  }
  return out;
}

const std::vector<Dwarf_Die>& DwarfInfo::ScopeChain(Dwarf_Die* cu, uint64_t address) {
  // By handle too: the same unit read through its window and through the
  // whole file's has DIEs of each.
  auto [it, fresh] = scope_chains_.try_emplace({dwarf_cu_getdwarf(cu->cu), address});
  std::vector<Dwarf_Die>& chain = it->second;
  if (!fresh) return chain;
  Dwarf_Die child;
  bool found = false;
  if (dwarf_child(cu, &child) == 0) do {
      if (dwarf_tag(&child) == DW_TAG_subprogram && dwarf_haspc(&child, address) == 1) {
        found = true;
        break;
      }
    } while (dwarf_siblingof(&child, &child) == 0);
  if (!found)
    if (auto nested = NestedFunctionAt(cu, address)) {
      child = *nested;
      found = true;
    }
  if (found) {
    chain.push_back(child);
    for (bool deeper = true; deeper;) {
      deeper = false;
      Dwarf_Die inner;
      if (dwarf_child(&chain.back(), &inner) != 0) break;
      do {
        int tag = dwarf_tag(&inner);
        if ((tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine) && dwarf_haspc(&inner, address) == 1) {
          chain.push_back(inner);
          deeper = true;
          break;
        }
      } while (dwarf_siblingof(&inner, &inner) == 0);
    }
  }
  std::reverse(chain.begin(), chain.end());
  chain.push_back(*cu);
  return chain;
}

}  // namespace kprobectl::dwarf
