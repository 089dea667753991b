// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/x86_64_abi.h"

#include <catch2/catch.hpp>

using namespace kprobectl;

TEST_CASE("System V integer arguments at a function's entry") {
  const char* expected[] = {"%di", "%si", "%dx", "%cx", "%r8", "%r9", "+8(%sp)", "+16(%sp)", "+24(%sp)"};
  for (unsigned n = 1; n <= 9; ++n) {
    INFO(n);
    CHECK(x86_64::ArgumentAtEntry(n) == expected[n - 1]);
  }
  CHECK(x86_64::kReturnRegister == "ax");
  const char* registers[] = {"di", "si", "dx", "cx", "r8", "r9"};
  for (unsigned n = 1; n <= 6; ++n) {
    INFO(registers[n - 1]);
    CHECK(x86_64::ArgumentIn(registers[n - 1]) == n);
  }
  for (const char* other : {"ax", "bx", "bp", "sp", "r10", "rdi"}) CHECK_FALSE(x86_64::ArgumentIn(other));
}

TEST_CASE("DWARF register numbers map to kernel names") {
  const char* expected[] = {"ax", "dx",  "cx",  "bx",  "si",  "di",  "bp",  "sp", "r8",
                            "r9", "r10", "r11", "r12", "r13", "r14", "r15", "ip"};
  for (unsigned n = 0; n <= 16; ++n) {
    INFO(n);
    auto name = x86_64::DwarfRegisterName(n);
    REQUIRE(name);
    CHECK(*name == expected[n]);
  }
  CHECK(*x86_64::DwarfRegisterName(49) == "flags");
  CHECK(*x86_64::DwarfRegisterName(50) == "es");
  CHECK(*x86_64::DwarfRegisterName(51) == "cs");
  CHECK(*x86_64::DwarfRegisterName(52) == "ss");
  CHECK(*x86_64::DwarfRegisterName(53) == "ds");
  CHECK(*x86_64::DwarfRegisterName(54) == "fs");
  CHECK(*x86_64::DwarfRegisterName(55) == "gs");
  CHECK_FALSE(x86_64::DwarfRegisterName(17));  // xmm0: not a pt_regs register
}

TEST_CASE("the kernel's register names, and suggestions for the others") {
  for (const char* name : {"ax",  "bx",  "cx",  "dx", "si",    "di", "bp", "sp", "r8", "r9", "r10", "r11",    "r12",
                           "r13", "r14", "r15", "ip", "flags", "cs", "ss", "ds", "es", "fs", "gs",  "orig_ax"}) {
    INFO(name);
    CHECK(x86_64::IsRegister(name));
  }
  struct Row {
    const char* wrong;
    const char* right;
  } rows[] = {{"rdi", "di"},       {"edi", "di"}, {"dil", "di"},          {"rax", "ax"},   {"eax", "ax"},
              {"al", "ax"},        {"r8d", "r8"}, {"r15w", "r15"},        {"r10b", "r10"}, {"rip", "ip"},
              {"rflags", "flags"}, {"rsp", "sp"}, {"orig_rax", "orig_ax"}};
  for (const Row& row : rows) {
    INFO(row.wrong);
    CHECK_FALSE(x86_64::IsRegister(row.wrong));
    REQUIRE(x86_64::SuggestRegister(row.wrong));
    CHECK(*x86_64::SuggestRegister(row.wrong) == row.right);
  }
  CHECK_FALSE(x86_64::SuggestRegister("xmm0"));
}
