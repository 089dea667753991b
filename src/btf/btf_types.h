// SPDX-License-Identifier: GPL-2.0-or-later
//
// BTF types as C sees them: spelled, peeled of typedefs and qualifiers,
// sized, and read by the kernel's fetch types (as dwarf_types.h does for
// DWARF, so that both sources fetch a type the same way).
#pragma once

#include <cstdint>
#include <string>

#include "btf_file.h"
#include "kprobectl/fetch_type.h"
#include "kprobectl/result.h"

namespace kprobectl::btf {

// The type under typedefs, const, volatile, restrict and type tags.
uint32_t Peel(const File& file, uint32_t id);
std::string TypeName(const File& file, uint32_t id);
// Bytes; 0 when unknown (void, a forward declaration, a function).
uint64_t SizeOf(const File& file, uint32_t id);
bool IsChar(const File& file, uint32_t id);
// s32, x64, char... or an error naming `what` when it is not a scalar.
Result<FetchType> ScalarFetchType(const File& file, uint32_t id, const std::string& what);

}  // namespace kprobectl::btf
