// SPDX-License-Identifier: GPL-2.0-or-later
//
// <sys/sdt.h> on arm64: the compiler prints each "nor" operand as the
// assembler writes it: a register ("x0", "w1": the argument's size says
// how many bytes count), memory at a register plus an offset ("[sp, 12]",
// "[x19, -8]", "[x1]", the offset sometimes with '#'), or a constant
// ("100", "-1"). libbpf's parse_usdt_arg() for __aarch64__ reads the same
// forms. A vector register ("v0", "d1"), an index register ("[x1, x2]") or
// a relocation ("[x0, #:lo12:sym]") cannot be read by fetchargs: refused
// with the reason, for that argument only.
#include <cctype>

#include "arch_spec.h"
#include "kprobectl/strings.h"

namespace kprobectl {

namespace {

bool IsVectorRegister(std::string_view name) {
  if (name.size() < 2 || std::string_view("vbhsdqz").find(name[0]) == std::string_view::npos) return false;
  for (char c : name.substr(1))
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.') return false;
  return true;
}

// A register operand as the kernel names it, or why it cannot be read;
// the zero register reads as the constant 0.
Result<SdtOperand> Register(std::string_view text, std::string_view name, SdtOperand out) {
  if (name == "xzr" || name == "wzr") {
    out.kind = SdtOperand::kImmediate;
    out.immediate = 0;
    return out;
  }
  if (IsVectorRegister(name))
    return SdtCannot(text, "in a floating-point or vector register (" + std::string(name) +
                               "), which the kernel's fetchargs cannot read");
  const Arch& arch = Aarch64Arch();
  out.reg = std::string(name);
  if (!arch.IsRegister(name)) {
    auto alias = arch.SuggestRegister(name);
    if (!alias || !alias->why.empty()) return SdtCannot(text, "in an unknown register '" + std::string(name) + "'");
    out.reg = std::string(alias->name);
  }
  out.kind = SdtOperand::kRegister;
  return out;
}

Result<SdtOperand> Memory(std::string_view text, std::string_view operand, SdtOperand out) {
  if (operand.back() != ']') return SdtCannot(text, "not an operand kprobectl can read");
  std::string_view inside = Trim(operand.substr(1, operand.size() - 2));
  size_t comma = inside.find(',');
  std::string_view base = Trim(inside.substr(0, comma));
  if (comma != std::string_view::npos) {
    std::string_view offset = Trim(inside.substr(comma + 1));
    if (offset.starts_with('#')) offset.remove_prefix(1);
    auto number = ParseSigned(offset);
    if (!number) {
      if (offset.find(',') != std::string_view::npos ||
          (!offset.empty() && std::isalpha(static_cast<unsigned char>(offset[0])) && !offset.starts_with(':')))
        return SdtCannot(text,
                         "a memory reference with an index register (BASE + INDEX), which the kernel's fetchargs "
                         "cannot add");
      return SdtCannot(text, "a memory reference with an offset kprobectl cannot read ('" + std::string(offset) + "')");
    }
    out.displacement = *number;
  }
  SdtOperand reg = KP_TRY(Register(text, base, out));
  if (reg.kind != SdtOperand::kRegister) return SdtCannot(text, "a memory reference at the zero register");
  reg.kind = SdtOperand::kMemory;
  return reg;
}

}  // namespace

Result<SdtOperand> ParseAarch64SdtOperand(std::string_view text, std::string_view operand, SdtOperand out) {
  operand = Trim(operand);
  if (operand.empty()) return SdtCannot(text, "empty");
  if (operand[0] == '[') return Memory(text, operand, out);
  std::string_view number = operand.starts_with('#') ? operand.substr(1) : operand;
  auto value = ParseSigned(number);
  if (auto wide = ParseUnsigned(number); !value && wide) value = static_cast<int64_t>(*wide);
  if (value) {
    out.kind = SdtOperand::kImmediate;
    out.immediate = *value;
    return out;
  }
  for (char c : operand)
    if (!std::isalnum(static_cast<unsigned char>(c))) return SdtCannot(text, "not an operand kprobectl can read");
  return Register(text, operand, out);
}

}  // namespace kprobectl
