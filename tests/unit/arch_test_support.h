// SPDX-License-Identifier: GPL-2.0-or-later
//
// What the per-architecture tests share: a USDT operand and the placement
// of parameters, written as text to compare with a table.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kprobectl/arch.h"

namespace kprobectl::test {

// "s32 %di", "u64 -80(%bx)", "s32 $-5", "u64 @sym+8", or "error: MESSAGE".
inline std::string SdtOperandText(const Arch& arch, std::string_view text) {
  auto op = arch.ParseSdtArgument(text);
  if (!op) return "error: " + op.error().message;
  std::string type = (op->is_signed ? "s" : "u") + std::to_string(op->size * 8);
  switch (op->kind) {
    case SdtOperand::kRegister:
      return type + " %" + op->reg;
    case SdtOperand::kMemory:
      return type + " " + std::to_string(op->displacement) + "(%" + op->reg + ")";
    case SdtOperand::kImmediate:
      return type + " $" + std::to_string(op->immediate);
    case SdtOperand::kStatic:
      return type + " @" + op->symbol + "+" + std::to_string(op->displacement);
  }
  return "?";
}

// Each parameter's place: "%di", "%r8,%r9" (two slots), "*%x0" (by
// reference), "+8(%sp)", or "-" when unreadable.
inline std::vector<std::string> PlacesText(const Arch& arch, const std::vector<ParamClass>& params) {
  std::vector<std::string> out;
  for (const ParamPlace& p : arch.PlaceParams(params)) {
    switch (p.kind) {
      case ParamPlace::kUnreadable:
        out.push_back("-");
        break;
      case ParamPlace::kByReference:
        out.push_back("*" + arch.ArgumentAtEntry(p.slot));
        break;
      case ParamPlace::kSlots:
        out.push_back(arch.ArgumentAtEntry(p.slot) + (p.slots == 2 ? "," + arch.ArgumentAtEntry(p.slot + 1) : ""));
        break;
    }
  }
  return out;
}

inline ParamClass Int(uint64_t size = 8) { return ParamClass{ParamClass::kInteger, size, size, false, 0, "long"}; }
inline ParamClass Float(uint64_t size = 8) { return ParamClass{ParamClass::kFloat, size, size, false, 0, "double"}; }
inline ParamClass Struct(uint64_t size, uint64_t align = 8, unsigned float_members = 0) {
  return ParamClass{ParamClass::kAggregate, size, align, float_members > 0, float_members, "struct s"};
}

}  // namespace kprobectl::test
