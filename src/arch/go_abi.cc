// SPDX-License-Identifier: GPL-2.0-or-later
//
// Go's assignment of arguments and results to registers and the stack, as
// src/cmd/compile/abi-internal.md ("Function call argument and result
// passing") gives it, for the architecture's register sequences (amd64:
// RAX RBX RCX RDI RSI R8-R11 and X0-X14; arm64: R0-R15 and F0-F15). A
// value goes to registers whole, one register per base value (a string's
// pointer and length in two, a struct field by field, an array of one
// element as its element), or, when any part of it does not fit in the
// registers left or it holds an array of two or more elements, whole to
// the stack: each such value aligned in turn in the argument area, the
// receiver and arguments first, then, from a pointer-aligned start, the
// results; after them, pointer-aligned, a spill slot for each argument in
// registers. The results take registers from the first again. Without the
// register ABI (ABI0, Go before 1.17 on amd64, 1.18 on arm64) the same
// algorithm runs with no registers, which is the old stack layout.
//
// The argument area begins 8 bytes above the stack pointer at the entry
// and at a return instruction: on amd64 the return address is at 0(SP);
// on arm64 0(SP) is the caller's slot for its own saved link register
// (abi-internal.md, "Stack layout": the callee's frame is gone at RET).
#include "arch_spec.h"

namespace kprobectl {

namespace {

uint64_t AlignUp(uint64_t n, uint64_t align) { return align > 1 ? (n + align - 1) / align * align : n; }

class Assigner {
 public:
  Assigner(const ArchSpec& spec, bool register_abi)
      : spec_(spec),
        integers_(register_abi ? spec.go_argument_registers.size() : 0),
        floats_(register_abi ? spec.go_float_registers : 0) {}

  GoAbiPlace Assign(const GoAbiType& type) {
    GoAbiPlace place;
    size_t integer = integer_, fp = float_;
    if (type.size > 0 && RegisterAssign(type, 0, place.pieces)) {
      // An argument in registers has a spill slot (a result has none).
      if (!results_) spill_ = AlignUp(spill_, type.align) + type.size;
      return place;
    }
    integer_ = integer;
    float_ = fp;
    place.pieces.clear();
    place.on_stack = true;
    stack_ = AlignUp(stack_, type.align);
    place.stack_offset = kGoArgumentArea + static_cast<int64_t>(stack_);
    stack_ += type.size;
    return place;
  }

  // Between the arguments and the results: a pointer-aligned start, and
  // the registers from the first again.
  void StartResults() {
    stack_ = AlignUp(stack_, 8);
    integer_ = float_ = 0;
    results_ = true;
  }

  uint64_t ArgumentArea() const { return AlignUp(stack_, 8) + AlignUp(spill_, 8); }

 private:
  bool RegisterAssign(const GoAbiType& type, uint64_t offset, std::vector<GoAbiPlace::Piece>& out) {
    switch (type.kind) {
      case GoAbiType::kInteger: {
        if (integer_ >= integers_) return false;
        std::string_view reg = spec_.go_argument_registers[integer_];
        unsigned dwarf = 0;
        for (const RegisterName& r : spec_.registers)
          if (r.kernel == reg) dwarf = static_cast<unsigned>(r.dwarf);
        out.push_back({offset, type.size, false, dwarf, std::string(spec_.go_integer_names[integer_])});
        ++integer_;
        return true;
      }
      case GoAbiType::kFloat:
        if (float_ >= floats_) return false;
        out.push_back({offset, type.size, true, spec_.go_float_dwarf + static_cast<unsigned>(float_),
                       std::string(spec_.go_float_prefix) + std::to_string(float_)});
        ++float_;
        return true;
      case GoAbiType::kStruct:
        for (size_t i = 0; i < type.members.size(); ++i)
          if (!RegisterAssign(type.members[i], offset + type.offsets[i], out)) return false;
        return true;
      case GoAbiType::kArray:
        if (type.count == 0) return true;
        return type.count == 1 && !type.members.empty() && RegisterAssign(type.members[0], offset, out);
    }
    return false;
  }

  const ArchSpec& spec_;
  size_t integers_, floats_;
  size_t integer_ = 0, float_ = 0;
  uint64_t stack_ = 0, spill_ = 0;
  bool results_ = false;
};

}  // namespace

Arch::GoFrame Arch::PlaceGoValues(std::span<const GoAbiType> args, std::span<const GoAbiType> results,
                                  bool register_abi) const {
  Assigner assigner(*spec_, register_abi);
  GoFrame frame;
  for (const GoAbiType& arg : args) frame.args.push_back(assigner.Assign(arg));
  assigner.StartResults();
  for (const GoAbiType& result : results) frame.results.push_back(assigner.Assign(result));
  frame.argument_area = assigner.ArgumentArea();
  return frame;
}

}  // namespace kprobectl
