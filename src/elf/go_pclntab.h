// SPDX-License-Identifier: GPL-2.0-or-later
//
// In: the bytes of a Go binary's .gopclntab section, the address of its
// .text and a pc. Out: the size of the argument area of the function that
// holds pc (Go's _func.args: its receiver, arguments and results on the
// stack and the spill slots of those passed in registers, ArgWidth in the
// compiler's abi package), or nothing when the table is not one this reads
// (big-endian, a Go before 1.2, corrupt) or no function holds pc. It tells
// whether the DWARF describes every parameter: Go 1.19 writes no entry for
// an unnamed or blank (`_`) one, whose stack slot moves the results after it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kprobectl {

std::optional<uint32_t> GoArgumentAreaSize(std::string_view pclntab, uint64_t text_start, uint64_t pc);

}  // namespace kprobectl
