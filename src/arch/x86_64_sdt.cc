// SPDX-License-Identifier: GPL-2.0-or-later
//
// <sys/sdt.h> passes each argument through an asm operand with the
// constraint "nor": the compiler picks a register, a memory reference or an
// immediate, and the assembler prints it as it would in an instruction.
// Every form a "nor" operand can take on x86-64 is read here; those the
// kernel's fetchargs cannot express (an index register, a segment, a
// vector or high-byte register) are refused with the reason, for that
// argument only.
#include <cctype>

#include "arch_spec.h"
#include "kprobectl/strings.h"

namespace kprobectl {

namespace {

// %NAME as the kernel names it: %edi, %di and %dil are all "di" (the
// argument's size says how many bytes count).
Result<std::string> Register(std::string_view text, std::string_view name) {
  if (name == "ah" || name == "bh" || name == "ch" || name == "dh")
    return SdtCannot(text,
                     "in a high-byte register (%" + std::string(name) + "), which the kernel's fetchargs cannot read");
  if (name.starts_with("xmm") || name.starts_with("ymm") || name.starts_with("zmm") || name.starts_with("st"))
    return SdtCannot(text, "in a floating-point or vector register (%" + std::string(name) +
                               "), which the kernel's fetchargs cannot read");
  const Arch& arch = X86_64Arch();
  if (arch.IsRegister(name)) return std::string(name);
  if (auto kernel = arch.SuggestRegister(name); kernel && kernel->why.empty()) return std::string(kernel->name);
  return SdtCannot(text, "in an unknown register '%" + std::string(name) + "'");
}

// A displacement: a number, SYMBOL, SYMBOL+N, SYMBOL-N or N+SYMBOL.
bool ParseDisplacement(std::string_view d, int64_t& number, std::string& symbol) {
  number = 0;
  symbol.clear();
  if (d.empty()) return true;
  if (auto n = ParseSigned(d)) {
    number = *n;
    return true;
  }
  size_t split = d.find_first_of("+-", 1);
  std::string_view head = d.substr(0, split);
  std::string_view tail = split == std::string_view::npos ? std::string_view() : d.substr(split);
  if (auto n = ParseSigned(head); n && !tail.empty() && tail[0] == '+') {  // N+SYMBOL
    number = *n;
    symbol = std::string(tail.substr(1));
  } else {
    symbol = std::string(head);
    if (!tail.empty()) {
      auto offset = ParseSigned(tail);
      if (!offset) return false;
      number = *offset;
    }
  }
  if (symbol.empty() || !(std::isalpha(static_cast<unsigned char>(symbol[0])) || symbol[0] == '_' || symbol[0] == '.'))
    return false;
  for (char c : symbol)
    if (!IsIdentChar(c) && c != '.' && c != '$' && c != '@') return false;
  return true;
}

Result<SdtOperand> Memory(std::string_view text, std::string_view operand, SdtOperand out) {
  size_t open = operand.find('(');
  if (operand.back() != ')') return SdtCannot(text, "not an operand kprobectl can read");
  std::string_view displacement = operand.substr(0, open);
  std::string_view inside = operand.substr(open + 1, operand.size() - open - 2);
  if (inside.find(',') != std::string_view::npos)
    return SdtCannot(text,
                     "a memory reference with an index register (BASE + INDEX*SCALE), which the kernel's "
                     "fetchargs cannot add");
  if (!inside.starts_with("%")) return SdtCannot(text, "not an operand kprobectl can read");
  std::string_view base = inside.substr(1);
  if (!ParseDisplacement(displacement, out.displacement, out.symbol))
    return SdtCannot(
        text, "a memory reference with a displacement kprobectl cannot read ('" + std::string(displacement) + "')");
  if (base == "rip") {
    if (out.symbol.empty())
      return SdtCannot(text, "RIP-relative with a numeric displacement, whose address depends on the instruction");
    out.kind = SdtOperand::kStatic;
    return out;
  }
  if (!out.symbol.empty())
    return SdtCannot(text, "a symbol's address plus a register (" + std::string(operand) +
                               "), which the kernel's fetchargs cannot add");
  out.reg = KP_TRY(Register(text, base));
  out.kind = SdtOperand::kMemory;
  return out;
}

}  // namespace

Result<SdtOperand> ParseX86_64SdtOperand(std::string_view text, std::string_view operand, SdtOperand out) {
  if (operand.find(':') != std::string_view::npos)
    return SdtCannot(text, "a segment-relative memory reference, which the kernel's fetchargs cannot read");
  if (operand[0] == '%') {
    out.reg = KP_TRY(Register(text, operand.substr(1)));
    out.kind = SdtOperand::kRegister;
    return out;
  }
  if (operand[0] == '$') {
    auto value = ParseSigned(operand.substr(1));
    if (auto wide = ParseUnsigned(operand.substr(1)); !value && wide) value = static_cast<int64_t>(*wide);
    if (!value) return SdtCannot(text, "a constant kprobectl cannot read ('" + std::string(operand.substr(1)) + "')");
    out.kind = SdtOperand::kImmediate;
    out.immediate = *value;
    return out;
  }
  if (operand.find('(') != std::string_view::npos) return Memory(text, operand, out);
  // An absolute memory reference: SYMBOL[+N] or an address.
  if (!ParseDisplacement(operand, out.displacement, out.symbol))
    return SdtCannot(text, "not an operand kprobectl can read");
  out.kind = SdtOperand::kStatic;
  return out;
}

}  // namespace kprobectl
