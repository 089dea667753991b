// SPDX-License-Identifier: GPL-2.0-or-later
//
// A Go function's result at a return instruction, or argument at its
// entry (dwarf_go.cc): the place the resolver gave it, for the variable walk.
#pragma once

#include <elfutils/libdw.h>

#include "dwarf_location.h"

namespace kprobectl::dwarf {

// The place `at` gives variable `var`: a result at a Go return
// instruction, an argument at a Go function's entry; null otherwise.
const AbiValue* AbiValueAt(const DwarfAddress& at, Dwarf_Die* var);
// That place as a variable's place; `size` is the variable's.
Result<Place> AbiValuePlace(const AbiValue& value, const std::string& what, uint64_t size);

}  // namespace kprobectl::dwarf
