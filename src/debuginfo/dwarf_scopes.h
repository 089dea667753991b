// SPDX-License-Identifier: GPL-2.0-or-later
//
// The scopes that hold a probe address (lexical blocks, inlined copies, the
// out-of-line function, the CU), and the variables they make visible there:
// where dwarf_vars.cc looks variables up, and what $vars, $params and vars
// list.
#pragma once

#include <elfutils/libdw.h>

#include <vector>

#include "dwarf_internal.h"

namespace kprobectl::dwarf {

// The scopes that contain an address, innermost first, ending with the CU.
// Built by descending from the out-of-line function rather than with
// dwarf_getscopes(): inside an inlined copy, libdw's chain continues with
// the inlined function's abstract definition, which loses the caller's
// locals that are just as live there. (The chain of an address is found
// once: a search of the CU's top-level DIEs is the costly part.)
//
// A probe names one function (`at.die_offset`): the scopes start at its
// innermost block, not inside a copy of another function inlined into it
// that begins at the probe's address. Such a copy begins at a later view
// of that address than the probed function's code there: at the probe it
// has not begun, and its variables are not yet set. (gcc 12,
// set_memory_wb+0x33: _set_memory_wb inlined at view 0,
// change_page_attr_clear inside it at view 2, each with a parameter
// 'addr'; the probe's 'addr' is _set_memory_wb's %di, not
// change_page_attr_clear's frame slot.) A copy that began before the
// probe's address is under way there, and its scopes stay (use_clamp+N in
// the middle of an inlined clampi reads clampi's variables, as perf does).
struct Scopes {
  std::vector<Dwarf_Die> chain;
  Dwarf_Die* dies = nullptr;
  int count = 0;

  Scopes(DwarfInfo& info, Dwarf_Die* cu, Dwarf_Die* fn, const DwarfAddress& at);
};

// The out-of-line function whose code holds the address (the frame): the
// outermost subprogram of the scopes, none when a folded copy's scopes hold
// only itself and the CU. Its DW_AT_frame_base is the frame base, not the
// innermost function's: for an inlined copy, libdw's scopes would continue
// with the abstract definition, not the caller that holds the code. At its
// first instruction, and only there, DW_OP_entry_value(DW_OP_regN) is
// register N itself: an inlined copy's entry is not enough (gcc 12,
// opipe_prep's flags in do_splice+205 is do_splice's entry %r9, long
// overwritten there).
Dwarf_Die* OutOfLine(const Scopes& scopes);

// Variables and parameters live at the address, outer scopes first, up to
// and including the out-of-line function: inside an inlined copy, its
// caller's locals are as live as the copy's own parameters. Parameters
// only ($params): those of the function probed (`function`, a subprogram or
// an inlined copy: its DIE's offset in the handle that read `scopes`), at every copy, not its callers'.
std::vector<Dwarf_Die> VisibleVariables(Scopes& scopes, bool params_only, Dwarf_Off function);

}  // namespace kprobectl::dwarf
