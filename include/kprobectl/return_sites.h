// SPDX-License-Identifier: GPL-2.0-or-later
//
// The return instructions of one function, found by disassembling it
// (Capstone, wrapped in src/elf/return_sites.cc alone). In: the function's
// bytes, its address and the architecture. Out: the address of each
// return instruction, or why they cannot all be found (a jump out of the
// function, a tail call, returns without a return instruction; bytes that
// do not decode). For probes on a function's returns where a return
// probe (uretprobe) must not go: Go's code.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kprobectl/arch.h"
#include "kprobectl/result.h"

namespace kprobectl {

// `what` names the function in messages.
Result<std::vector<uint64_t>> FindReturnSites(std::string_view code, uint64_t address, const Arch& arch,
                                              const std::string& what);

}  // namespace kprobectl
