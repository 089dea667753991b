// SPDX-License-Identifier: GPL-2.0-or-later
//
// Types: sizes, array bounds, and the kernel fetch type for a scalar.
#pragma once

#include <elfutils/libdw.h>

#include <optional>
#include <string>

#include "kprobectl/fetch_type.h"
#include "kprobectl/result.h"

namespace kprobectl::dwarf {

std::optional<uint64_t> ArrayCount(Dwarf_Die* subrange);
uint64_t ByteSize(Dwarf_Die* type);
bool IsCharType(Dwarf_Die* type);
// s32, x64, char... or an error naming `what` when it is not a scalar.
Result<FetchType> ScalarFetchType(Dwarf_Die* type, const std::string& what);

}  // namespace kprobectl::dwarf
