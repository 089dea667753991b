// SPDX-License-Identifier: GPL-2.0-or-later
//
// The x86-64 ABI as the kernel's fetchargs see it: register names as in
// pt_regs (regs_query_register_offset), the System V argument registers, the
// return register, and DWARF register numbers. One table, one file: the only
// place that knows the architecture.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace kprobectl::x86_64 {

// System V AMD64: integer arguments 1..6 in these registers, then the stack.
inline constexpr std::array<std::string_view, 6> kArgumentRegisters = {"di", "si", "dx", "cx", "r8", "r9"};
inline constexpr std::string_view kReturnRegister = "ax";
inline constexpr std::string_view kStackPointer = "sp";

// The fetcharg for integer argument `n` (1-based) at a function's entry
// address: "%di" .. "%r9", then "+8(%sp)", "+16(%sp)", ... (0(%sp) holds the
// return address there).
std::string ArgumentAtEntry(unsigned n);

// Which integer argument (1-based) register `name` ("di", as the kernel
// names it) holds at a function's entry, if any.
std::optional<unsigned> ArgumentIn(std::string_view name);

// Register names the kernel accepts after '%'.
bool IsRegister(std::string_view name);

// For a name the kernel refuses, the name it means: "rdi" -> "di", "eax" ->
// "ax", "r8d" -> "r8". Empty when there is no obvious one.
std::optional<std::string_view> SuggestRegister(std::string_view name);

// DWARF register number (System V psABI, figure 3.36) to kernel name.
std::optional<std::string_view> DwarfRegisterName(unsigned dwarf_number);

}  // namespace kprobectl::x86_64
