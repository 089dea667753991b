// SPDX-License-Identifier: GPL-2.0-or-later
//
// What each architecture's file (x86_64.cc, aarch64.cc) fills in for
// arch.h's Arch: its tables, and the two things that are rules rather than
// tables (placing parameters, reading a USDT operand). Private to src/arch/.
#pragma once

#include <array>
#include <span>
#include <string_view>
#include <vector>

#include "kprobectl/arch.h"

namespace kprobectl {

struct RegisterName {
  std::string_view kernel;                  // as regs_query_register_offset() takes it
  int dwarf = -1;                           // DWARF register number, -1 if none
  std::array<std::string_view, 4> aliases;  // the assembler's names of the same register
};

struct ArchSpec {
  using UnwindRegister = Arch::UnwindRegister;
  std::string_view name;       // "x86-64"
  std::string_view elf_name;   // "EM_X86_64"
  uint16_t machine = 0;        // e_machine
  std::string_view uname;      // uname -m
  std::string_view multiarch;  // "x86_64-linux-gnu"
  std::span<const RegisterName> registers;
  std::span<const std::string_view> argument_registers;     // integer arguments, in order
  std::span<const std::string_view> go_argument_registers;  // Go's internal ABI's integer arguments, in order
  unsigned go_float_registers = 0;                          // how many floating-point registers Go's internal ABI uses
  unsigned go_float_dwarf = 0;                              // the DWARF number of the first (XMM0, V0)
  std::string_view go_float_prefix;                         // Go's assembler's names of them: "X" (X0, X1...), "F"
  std::span<const std::string_view> go_integer_names;       // Go's assembler's names of go_argument_registers
  std::string_view go_goroutine_register;                   // where Go's register ABI keeps the current g
  unsigned go_register_abi_since = 0;  // the Go 1.N whose register ABI came here (0: none described)
  std::string_view stack_pointer;
  std::string_view return_register;
  std::string_view instruction_pointer;
  int64_t first_stack_argument = 0;   // offset from the stack pointer of the first stack slot at the entry
  uint64_t return_address_bytes = 0;  // what a call pushes and its return pops (the return address, on x86-64)
  std::string_view register_summary;
  std::vector<ParamPlace> (*place_params)(std::span<const ParamClass> params) = nullptr;
  // The operand after "SIZE@"; `text` is the whole argument, for messages.
  Result<SdtOperand> (*parse_sdt_operand)(std::string_view text, std::string_view operand, SdtOperand out) = nullptr;
  std::span<const std::string_view> no_probe_sections;
  int64_t ftrace_site_min = 0, ftrace_site_max = 0;
  uint32_t relative_relocation = 0;  // R_*_RELATIVE
  uint64_t patchable_entry = 0;      // NOPs between a function's symbol and its DWARF low_pc
  std::optional<uint64_t> (*direct_jump)(std::string_view code, uint64_t address) = nullptr;  // Arch::DirectJumpTarget
  std::span<const Arch::UnwindRegister> unwind_registers;  // the first is the stack pointer, the second the pc
  std::string_view kernel_text;                            // the symbol kernel targets count from ("_text")
};

// Where Go's argument area begins, from the stack pointer at a Go
// function's entry and at its return instructions (go_abi.cc says why).
constexpr int64_t kGoArgumentArea = 8;

extern const ArchSpec kX86_64Spec;
extern const ArchSpec kAarch64Spec;

// Shared by the operand parsers: "marker argument 'TEXT' is WHAT".
std::unexpected<Error> SdtCannot(std::string_view text, const std::string& what);

}  // namespace kprobectl
