// SPDX-License-Identifier: GPL-2.0-or-later
//
// The arguments of a USDT marker as <sys/sdt.h> has the assembler write
// them into the note: "[-]SIZE@OPERAND" separated by blanks, the operand in
// AT&T syntax (%reg, disp(%reg), $imm, sym(%rip), disp(%base,%index,scale)).
// In: one such argument. Out: what it reads, with the kernel's register
// names, or why the kernel's fetchargs cannot read it. Part of the arch
// stage: only x86-64 operands are known.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kprobectl/result.h"

namespace kprobectl::x86_64 {

struct SdtOperand {
  enum Kind {
    kRegister,   // reg: the register's value
    kMemory,     // memory at reg + displacement
    kImmediate,  // immediate: a constant
    kStatic,     // memory at symbol + displacement (RIP-relative), or at the address `displacement` without a symbol
  } kind = kRegister;
  unsigned size = 8;  // bytes: 1, 2, 4 or 8
  bool is_signed = false;
  std::string reg;  // the kernel's name: "di", "r12"
  int64_t displacement = 0;
  int64_t immediate = 0;
  std::string symbol;
};

// The arguments of a note, split at blanks.
std::vector<std::string> SplitSdtArguments(std::string_view args);

// One argument; an error says what the operand is that fetchargs cannot
// read (a scaled index, a segment, a vector register).
Result<SdtOperand> ParseSdtOperand(std::string_view text);

}  // namespace kprobectl::x86_64
