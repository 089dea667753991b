// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/x86_64_abi.h"

namespace kprobectl::x86_64 {

namespace {

struct Register {
  std::string_view kernel;             // name in pt_regs, as the kernel's fetchargs take it
  std::string_view r64, r32, r16, r8;  // assembler names that mean the same register
  int dwarf;                           // DWARF number, -1 if none
};

// DWARF numbers: 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp,
// 8..15 r8..r15, 16 return address (rip).
constexpr Register kRegisters[] = {
    {"ax", "rax", "eax", "ax", "al", 0},
    {"dx", "rdx", "edx", "dx", "dl", 1},
    {"cx", "rcx", "ecx", "cx", "cl", 2},
    {"bx", "rbx", "ebx", "bx", "bl", 3},
    {"si", "rsi", "esi", "si", "sil", 4},
    {"di", "rdi", "edi", "di", "dil", 5},
    {"bp", "rbp", "ebp", "bp", "bpl", 6},
    {"sp", "rsp", "esp", "sp", "spl", 7},
    {"r8", "r8", "r8d", "r8w", "r8b", 8},
    {"r9", "r9", "r9d", "r9w", "r9b", 9},
    {"r10", "r10", "r10d", "r10w", "r10b", 10},
    {"r11", "r11", "r11d", "r11w", "r11b", 11},
    {"r12", "r12", "r12d", "r12w", "r12b", 12},
    {"r13", "r13", "r13d", "r13w", "r13b", 13},
    {"r14", "r14", "r14d", "r14w", "r14b", 14},
    {"r15", "r15", "r15d", "r15w", "r15b", 15},
    {"ip", "rip", "eip", "ip", "", 16},
    {"flags", "rflags", "eflags", "", "", 49},
    {"cs", "cs", "", "", "", 51},
    {"ss", "ss", "", "", "", 52},
    {"ds", "ds", "", "", "", 53},
    {"es", "es", "", "", "", 50},
    {"fs", "fs", "", "", "", 54},
    {"gs", "gs", "", "", "", 55},
    {"orig_ax", "orig_rax", "", "", "", -1},
};

}  // namespace

std::string ArgumentAtEntry(unsigned n) {
  if (n >= 1 && n <= kArgumentRegisters.size()) return "%" + std::string(kArgumentRegisters[n - 1]);
  return "+" + std::to_string(8 * (n - kArgumentRegisters.size())) + "(%sp)";
}

std::optional<unsigned> ArgumentIn(std::string_view name) {
  for (unsigned i = 0; i < kArgumentRegisters.size(); ++i)
    if (kArgumentRegisters[i] == name) return i + 1;
  return std::nullopt;
}

bool IsRegister(std::string_view name) {
  for (const Register& r : kRegisters)
    if (r.kernel == name) return true;
  return false;
}

std::optional<std::string_view> SuggestRegister(std::string_view name) {
  for (const Register& r : kRegisters)
    if (name == r.r64 || name == r.r32 || name == r.r16 || name == r.r8) return r.kernel;
  return std::nullopt;
}

std::optional<std::string_view> DwarfRegisterName(unsigned dwarf_number) {
  for (const Register& r : kRegisters)
    if (r.dwarf >= 0 && static_cast<unsigned>(r.dwarf) == dwarf_number) return r.kernel;
  return std::nullopt;
}

}  // namespace kprobectl::x86_64
