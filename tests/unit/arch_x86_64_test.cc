// SPDX-License-Identifier: GPL-2.0-or-later
//
// The x86-64 table: the kernel's register names and their DWARF numbers,
// System V argument slots and the placement of every class of parameter,
// USDT operands in AT&T syntax.
#include <catch2/catch.hpp>

#include "arch_test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {
const Arch& x86 = X86_64Arch();
}

TEST_CASE("x86-64: System V integer arguments at a function's entry") {
  const char* expected[] = {"%di", "%si", "%dx", "%cx", "%r8", "%r9", "+8(%sp)", "+16(%sp)", "+24(%sp)"};
  for (unsigned n = 1; n <= 9; ++n) {
    INFO(n);
    CHECK(x86.ArgumentAtEntry(n) == expected[n - 1]);
  }
  CHECK(x86.return_register() == "ax");
  CHECK(x86.stack_pointer() == "sp");
  CHECK(x86.return_address_bytes() == 8);  // a return probe's %sp is its entry's + 8
  CHECK(x86.argument_registers() == 6);
  const char* registers[] = {"di", "si", "dx", "cx", "r8", "r9"};
  for (unsigned n = 1; n <= 6; ++n) {
    INFO(registers[n - 1]);
    CHECK(x86.ArgumentIn(registers[n - 1]) == n);
  }
  for (const char* other : {"ax", "bx", "bp", "sp", "r10", "rdi"}) CHECK_FALSE(x86.ArgumentIn(other));
}

TEST_CASE("x86-64: DWARF register numbers map to kernel names") {
  const char* expected[] = {"ax", "dx",  "cx",  "bx",  "si",  "di",  "bp",  "sp", "r8",
                            "r9", "r10", "r11", "r12", "r13", "r14", "r15", "ip"};
  for (unsigned n = 0; n <= 16; ++n) {
    INFO(n);
    auto name = x86.DwarfRegisterName(n);
    REQUIRE(name);
    CHECK(*name == expected[n]);
  }
  CHECK(*x86.DwarfRegisterName(49) == "flags");
  CHECK(*x86.DwarfRegisterName(50) == "es");
  CHECK(*x86.DwarfRegisterName(51) == "cs");
  CHECK(*x86.DwarfRegisterName(52) == "ss");
  CHECK(*x86.DwarfRegisterName(53) == "ds");
  CHECK(*x86.DwarfRegisterName(54) == "fs");
  CHECK(*x86.DwarfRegisterName(55) == "gs");
  CHECK_FALSE(x86.DwarfRegisterName(17));  // xmm0: not a pt_regs register
}

TEST_CASE("x86-64: the kernel's register names, and suggestions for the others") {
  for (const char* name : {"ax",  "bx",  "cx",  "dx", "si",    "di", "bp", "sp", "r8", "r9", "r10", "r11",    "r12",
                           "r13", "r14", "r15", "ip", "flags", "cs", "ss", "ds", "es", "fs", "gs",  "orig_ax"}) {
    INFO(name);
    CHECK(x86.IsRegister(name));
  }
  struct Row {
    const char* wrong;
    const char* right;
    const char* why;
  } rows[] = {
      {"rdi", "di", ""},
      {"edi", "di", ""},
      {"dil", "di", ""},
      {"rax", "ax", ""},
      {"eax", "ax", ""},
      {"al", "ax", ""},
      {"r8d", "r8", ""},
      {"r15w", "r15", ""},
      {"r10b", "r10", ""},
      {"rip", "ip", ""},
      {"rflags", "flags", ""},
      {"rsp", "sp", ""},
      {"orig_rax", "orig_ax", ""},
      // arm64's names, for its role here.
      {"x0", "di", "%x0 is arm64's register for argument 1; on x86-64 it is %di"},
      {"x5", "r9", "%x5 is arm64's register for argument 6; on x86-64 it is %r9"},
      {"w1", "si", "%w1 is arm64's register for argument 2; on x86-64 it is %si"},
      {"pc", "ip", "%pc is arm64's instruction pointer; on x86-64 it is %ip"},
  };
  for (const Row& row : rows) {
    INFO(row.wrong);
    CHECK_FALSE(x86.IsRegister(row.wrong));
    auto suggestion = x86.SuggestRegister(row.wrong);
    REQUIRE(suggestion);
    CHECK(suggestion->name == row.right);
    CHECK(suggestion->why == row.why);
  }
  // x7 is arm64's eighth argument: x86-64 has six argument registers.
  for (const char* none : {"xmm0", "x7", "x19", "lr"}) {
    INFO(none);
    CHECK_FALSE(x86.SuggestRegister(none));
  }
}

TEST_CASE("x86-64: where System V puts each class of parameter") {
  struct Row {
    const char* what;
    std::vector<ParamClass> params;
    std::vector<std::string> expected;
  } rows[] = {
      {"integers and pointers, then the stack",
       {Int(), Int(4), Int(1), Int(), Int(2), Int(), Int(), Int(4)},
       {"%di", "%si", "%dx", "%cx", "%r8", "%r9", "+8(%sp)", "+16(%sp)"}},
      {"a 16-byte struct in two registers", {Int(), Struct(16), Int()}, {"%di", "%si,%dx", "%cx"}},
      {"a 12-byte struct takes two eightbytes", {Struct(12, 4)}, {"%di,%si"}},
      {"a struct that no longer fits goes to the stack whole; the register left stays for the next",
       {Int(), Int(), Int(), Int(), Int(), Struct(16), Int()},
       {"%di", "%si", "%dx", "%cx", "%r8", "+8(%sp),+16(%sp)", "%r9"}},
      {"a struct over 16 bytes is copied to the stack, and takes its slots",
       {Struct(24), Int(), Int(), Int(), Int(), Int(), Int(), Int()},
       {"-", "%di", "%si", "%dx", "%cx", "%r8", "%r9", "+32(%sp)"}},
      {"floats use vector registers, not integer ones", {Float(), Int(), Float(4), Int()}, {"-", "%di", "-", "%si"}},
      {"an aggregate of floats too", {Struct(8, 4, 2), Int()}, {"-", "%di"}},
      {"the ninth float goes to the stack",
       {Float(), Float(), Float(), Float(), Float(), Float(), Float(), Float(), Float(), Int(), Int(), Int(), Int(),
        Int(), Int(), Int()},
       {"-", "-", "-", "-", "-", "-", "-", "-", "-", "%di", "%si", "%dx", "%cx", "%r8", "%r9", "+16(%sp)"}},
      {"__int128 in two registers, or 16-byte aligned on the stack",
       {Int(), Int(), Int(), Int(), Int(), Int(16), Int(), Int(16)},
       {"%di", "%si", "%dx", "%cx", "%r8", "+8(%sp),+16(%sp)", "%r9", "+24(%sp),+32(%sp)"}},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    CHECK(PlacesText(x86, row.params) == row.expected);
  }
  auto places = x86.PlaceParams(std::vector<ParamClass>{Struct(24)});
  CHECK(places[0].why == "is a 24-byte struct s passed by value, copied to the stack");
  places = x86.PlaceParams(std::vector<ParamClass>{Float()});
  CHECK(places[0].why == "is a floating-point value, passed in an SSE register the kernel cannot fetch");
}

TEST_CASE("x86-64: USDT operands, what each reads, or why fetchargs cannot") {
  struct Row {
    const char* text;
    const char* expected;
  } rows[] = {
      {"-4@%edi", "s32 %di"},
      {"8@%rbp", "u64 %bp"},
      {"-2@%di", "s16 %di"},
      {"1@%r12b", "u8 %r12"},
      {"-8@%r15", "s64 %r15"},
      {"8@-80(%rbx)", "u64 -80(%bx)"},
      {"-8@(%rsp)", "s64 0(%sp)"},
      {"4@0x10(%rax)", "u32 16(%ax)"},
      {"-4@$1234", "s32 $1234"},
      {"-4@$-5", "s32 $-5"},
      {"8@$0xffffffffffffffff", "u64 $-1"},
      {"-8@sdtfx_global(%rip)", "s64 @sdtfx_global+0"},
      {"8@counter+8(%rip)", "u64 @counter+8"},
      {"8@16+counter(%rip)", "u64 @counter+16"},
      {"4@table", "u32 @table+0"},
      {"%rdi", "u64 %di"},  // version 1 notes: no size, a word
      {"-4@(%rax,%rcx,4)",
       "error: marker argument '-4@(%rax,%rcx,4)' is a memory reference with an index register (BASE + INDEX*SCALE), "
       "which the kernel's fetchargs cannot add"},
      {"-4@sdtfx_table(,%rcx,4)",
       "error: marker argument '-4@sdtfx_table(,%rcx,4)' is a memory reference with an index register "
       "(BASE + INDEX*SCALE), which the kernel's fetchargs cannot add"},
      {"1@%ah",
       "error: marker argument '1@%ah' is in a high-byte register (%ah), which the kernel's fetchargs cannot read"},
      {"8@%xmm0",
       "error: marker argument '8@%xmm0' is in a floating-point or vector register (%xmm0), which the kernel's "
       "fetchargs cannot read"},
      {"8@%fs:0x28",
       "error: marker argument '8@%fs:0x28' is a segment-relative memory reference, which the kernel's fetchargs "
       "cannot read"},
      {"8@16(%rip)",
       "error: marker argument '8@16(%rip)' is RIP-relative with a numeric displacement, whose address depends on "
       "the instruction"},
      {"3@%eax", "error: marker argument '3@%eax' is of size '3' (sizes are 1, 2, 4 or 8 bytes)"},
      {"8@%x0", "error: marker argument '8@%x0' is in an unknown register '%x0'"},
  };
  for (const Row& row : rows) {
    INFO(row.text);
    CHECK(SdtOperandText(x86, row.text) == row.expected);
  }
}

TEST_CASE("x86-64: the kernel's rules on it") {
  std::vector<std::string> sections(x86.no_probe_sections().begin(), x86.no_probe_sections().end());
  CHECK(sections ==
        std::vector<std::string>{"kprobes_text", "noinstr_text", "entry_text", "irqentry_text", "softirqentry_text"});
  CHECK(x86.ftrace_site_window() == std::pair<int64_t, int64_t>{0, 16});
  CHECK(x86.multiarch() == "x86_64-linux-gnu");
  CHECK(x86.name() == "x86-64");
}

TEST_CASE("x86-64: an unconditional direct jump's target, and nothing for other instructions") {
  using namespace std::string_view_literals;
  // 7.3's is_subdir+147: 'jmp is_subdir+165' (eb 10), into its copy of d_ancestor.
  CHECK(x86.DirectJumpTarget("\xeb\x10"sv, 0xffffffff817dc9d3) == 0xffffffff817dc9e5);
  CHECK(x86.DirectJumpTarget("\xeb\xfe"sv, 0x1000) == 0x1000);  // jmp to itself
  CHECK(x86.DirectJumpTarget("\xe9\x00\x01\x00\x00"sv, 0x1000) == 0x1105);
  CHECK(x86.DirectJumpTarget("\xe9\xfb\xff\xff\xff"sv, 0x1000) == 0x1000);  // rel32 -5
  CHECK(!x86.DirectJumpTarget("\xe9\x00\x01"sv, 0x1000));                   // cut short
  CHECK(!x86.DirectJumpTarget("\x75\x10"sv, 0x1000));                       // jne: conditional
  CHECK(!x86.DirectJumpTarget("\xe8\x00\x00\x00\x00"sv, 0x1000));           // call
  CHECK(!x86.DirectJumpTarget("\xff\xe0"sv, 0x1000));                       // jmp *%rax: indirect
  CHECK(!x86.DirectJumpTarget(""sv, 0x1000));
}
