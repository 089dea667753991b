// SPDX-License-Identifier: GPL-2.0-or-later
//
// Go's assignment of arguments and results (src/arch/go_abi.cc), table-
// driven against abi-internal.md's rules and its worked example: each
// value as the registers of its pieces or its offset on the stack.
#include <catch2/catch.hpp>

#include "kprobectl/arch.h"

using namespace kprobectl;

namespace {

GoAbiType Int(uint64_t size = 8) { return {GoAbiType::kInteger, size, size, {}, {}, 0}; }
GoAbiType Float(uint64_t size = 8) { return {GoAbiType::kFloat, size, size, {}, {}, 0}; }
GoAbiType Struct(std::vector<GoAbiType> members, std::vector<uint64_t> offsets, uint64_t size, uint64_t align = 8) {
  return {GoAbiType::kStruct, size, align, std::move(members), std::move(offsets), 0};
}
GoAbiType Array(const GoAbiType& element, uint64_t count) {
  return {GoAbiType::kArray, element.size * count, element.align, {element}, {}, count};
}
GoAbiType String() { return Struct({Int(), Int()}, {0, 8}, 16); }
GoAbiType Slice() { return Struct({Int(), Int(), Int()}, {0, 8, 16}, 24); }

// "RAX@0:8 RBX@8:8" (register@offset:size), or "stack+24".
std::string Text(const GoAbiPlace& place) {
  if (place.on_stack) return "stack+" + std::to_string(place.stack_offset);
  std::string out;
  for (const GoAbiPlace::Piece& p : place.pieces)
    out += (out.empty() ? "" : " ") + p.name + "@" + std::to_string(p.offset) + ":" + std::to_string(p.size);
  return out;
}

std::vector<std::string> Texts(const std::vector<GoAbiPlace>& places) {
  std::vector<std::string> out;
  for (const GoAbiPlace& p : places) out.push_back(Text(p));
  return out;
}

}  // namespace

TEST_CASE("Go ABI: the Go version whose register ABI each architecture has") {
  CHECK_FALSE(X86_64Arch().GoRegisterAbiIn(0));
  CHECK_FALSE(X86_64Arch().GoRegisterAbiIn(16));
  CHECK(X86_64Arch().GoRegisterAbiIn(17));
  CHECK(X86_64Arch().GoRegisterAbiIn(22));
  CHECK_FALSE(Aarch64Arch().GoRegisterAbiIn(17));
  CHECK(Aarch64Arch().GoRegisterAbiIn(18));
}

TEST_CASE("Go ABI: arguments and results to registers and the stack") {
  const Arch& x86 = X86_64Arch();
  const Arch& arm64 = Aarch64Arch();
  std::vector<GoAbiType> ten(10, Int());
  struct Case {
    std::string what;
    const Arch* arch;
    bool register_abi;
    std::vector<GoAbiType> args, results;
    std::vector<std::string> arg_places, result_places;
  } cases[] = {
      // abi-internal.md's example: a2 and r1 hold arrays, so the stack;
      // r2 is decomposed; the results start from the first register.
      {"the document's example",
       &x86,
       true,
       {Int(1), Array(Int(), 2), Int(1)},
       {Struct({Int(), Array(Int(), 2)}, {0, 8}, 24), String()},
       {"RAX@0:1", "stack+8", "RBX@0:1"},
       {"stack+24", "RAX@0:8 RBX@8:8"}},
      {"(int, error)", &x86, true, {String()}, {Int(), String()}, {"RAX@0:8 RBX@8:8"}, {"RAX@0:8", "RBX@0:8 RCX@8:8"}},
      {"a tenth int result goes to the stack",
       &x86,
       true,
       {Int()},
       ten,
       {"RAX@0:8"},
       {"RAX@0:8", "RBX@0:8", "RCX@0:8", "RDI@0:8", "RSI@0:8", "R8@0:8", "R9@0:8", "R10@0:8", "R11@0:8", "stack+8"}},
      {"a struct that does not fit whole goes to the stack whole; a later int still takes a register",
       &x86,
       true,
       {},
       {Slice(), Slice(), String(), String(), Int()},
       {},
       {"RAX@0:8 RBX@8:8 RCX@16:8", "RDI@0:8 RSI@8:8 R8@16:8", "R9@0:8 R10@8:8", "stack+8", "R11@0:8"}},
      {"a struct of ten ints, on the stack after a stack argument",
       &x86,
       true,
       {Array(Int(), 2), Int()},
       {Struct(ten, {0, 8, 16, 24, 32, 40, 48, 56, 64, 72}, 80)},
       {"stack+8", "RAX@0:8"},
       {"stack+24"}},
      {"floats and complex numbers in the floating-point registers, apart from the integers",
       &x86,
       true,
       {Float(), Int()},
       {Float(), Struct({Float(4), Float(4)}, {0, 4}, 8, 4), Int(1)},
       {"X0@0:8", "RAX@0:8"},
       {"X0@0:8", "X1@0:4 X2@4:4", "RAX@0:1"}},
      {"struct fields keep their offsets; arrays of 0 and 1 element",
       &x86,
       true,
       {},
       {Struct({Int(1), Int(4), Int()}, {0, 4, 8}, 16), Array(Int(2), 1), Array(Int(), 0), Int()},
       {},
       {"RAX@0:1 RBX@4:4 RCX@8:8", "RDI@0:2", "stack+8", "RSI@0:8"}},
      {"stack values are aligned to their type",
       &x86,
       true,
       {Array(Int(1), 3), Array(Int(4), 2)},
       {Array(Int(2), 2)},
       {"stack+8", "stack+12"},
       {"stack+24"}},
      {"ABI0: everything on the stack, results after pointer alignment",
       &x86,
       false,
       {Int(1), String()},
       {Int(4), Int()},
       {"stack+8", "stack+16"},
       {"stack+32", "stack+40"}},
      {"arm64: R0-R15, F0-F15",
       &arm64,
       true,
       {String(), Float(4)},
       ten,
       {"R0@0:8 R1@8:8", "F0@0:4"},
       {"R0@0:8", "R1@0:8", "R2@0:8", "R3@0:8", "R4@0:8", "R5@0:8", "R6@0:8", "R7@0:8", "R8@0:8", "R9@0:8"}},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    Arch::GoFrame frame = c.arch->PlaceGoValues(c.args, c.results, c.register_abi);
    CHECK(Texts(frame.args) == c.arg_places);
    CHECK(Texts(frame.results) == c.result_places);
  }
  // The DWARF numbers the fetches use.
  Arch::GoFrame frame = x86.PlaceGoValues({}, std::vector<GoAbiType>{Int(), Float()}, true);
  CHECK(frame.results[0].pieces[0].dwarf_register == 0);   // RAX
  CHECK(frame.results[1].pieces[0].dwarf_register == 17);  // XMM0
  CHECK(frame.results[1].pieces[0].is_float);
  frame = arm64.PlaceGoValues({}, std::vector<GoAbiType>{Int(), Int(), Float()}, true);
  CHECK(frame.results[1].pieces[0].dwarf_register == 1);   // X1
  CHECK(frame.results[2].pieces[0].dwarf_register == 64);  // V0
}
