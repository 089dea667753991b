// SPDX-License-Identifier: GPL-2.0-or-later
//
// The return instructions of one function, and where a Go function's
// entry runs once a call, found by disassembling it (Capstone, wrapped in
// src/elf/return_sites.cc alone). In: the function's bytes, its address
// and the architecture. Out: the address of each return instruction, or
// why they cannot all be found (a jump out of the function, a tail call,
// returns without a return instruction; bytes that do not decode). For
// probes on a function's returns where a return probe (uretprobe) must not
// go: Go's code.
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

// Go's stack check: a Go function that can grow its goroutine's stack
// begins by comparing the stack pointer with the goroutine's bound and
// branching, when it is short, to code at its end that calls
// runtime.morestack and then jumps back to the function's first
// instruction, which so runs twice for that call. The address past the
// check's branch, where a probe runs once a call (the arguments still in
// their registers, the stack pointer as at the entry); `address` when the
// function has no such check (a leaf that grows no stack).
Result<uint64_t> GoEntryPastStackCheck(std::string_view code, uint64_t address, const Arch& arch,
                                       const std::string& what);

}  // namespace kprobectl
