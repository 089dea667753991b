// SPDX-License-Identifier: GPL-2.0-or-later
//
// The arm64 table: the kernel's register names (arch/arm64/kernel/ptrace.c)
// and their DWARF numbers, AAPCS64 argument slots and the placement of
// every class of parameter, USDT operands as the arm64 assembler writes
// them; and choosing an architecture from an ELF machine or uname.
#include <elf.h>

#include <catch2/catch.hpp>

#include "arch_test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {
const Arch& arm64 = Aarch64Arch();
}

TEST_CASE("arm64: AAPCS64 integer arguments at a function's entry") {
  const char* expected[] = {"%x0", "%x1", "%x2", "%x3", "%x4", "%x5", "%x6", "%x7", "+0(%sp)", "+8(%sp)"};
  for (unsigned n = 1; n <= 10; ++n) {
    INFO(n);
    CHECK(arm64.ArgumentAtEntry(n) == expected[n - 1]);
  }
  CHECK(arm64.return_register() == "x0");
  CHECK(arm64.stack_pointer() == "sp");
  CHECK(arm64.return_address_bytes() == 0);  // in lr: a return probe's sp is its entry's
  CHECK(arm64.argument_registers() == 8);
  for (unsigned n = 1; n <= 8; ++n) CHECK(arm64.ArgumentIn("x" + std::to_string(n - 1)) == n);
  for (const char* other : {"x8", "x19", "sp", "lr", "w0", "di"}) CHECK_FALSE(arm64.ArgumentIn(other));
}

TEST_CASE("arm64: DWARF register numbers map to kernel names") {
  for (unsigned n = 0; n <= 29; ++n) {
    INFO(n);
    auto name = arm64.DwarfRegisterName(n);
    REQUIRE(name);
    CHECK(*name == "x" + std::to_string(n));
  }
  CHECK(*arm64.DwarfRegisterName(30) == "lr");  // as perf writes it
  CHECK(*arm64.DwarfRegisterName(31) == "sp");
  CHECK(*arm64.DwarfRegisterName(32) == "pc");
  CHECK_FALSE(arm64.DwarfRegisterName(33));  // ELR_mode
  CHECK_FALSE(arm64.DwarfRegisterName(64));  // v0: not a pt_regs register
}

TEST_CASE("arm64: the kernel's register names, and suggestions for the others") {
  for (unsigned n = 0; n <= 30; ++n) CHECK(arm64.IsRegister("x" + std::to_string(n)));
  for (const char* name : {"lr", "sp", "pc", "pstate"}) {
    INFO(name);
    CHECK(arm64.IsRegister(name));
  }
  struct Row {
    const char* wrong;
    const char* right;
    const char* why;
  } rows[] = {
      {"w0", "x0", ""},
      {"w29", "x29", ""},
      {"fp", "x29", ""},
      {"wsp", "sp", ""},
      // x86-64's names, for their role here.
      {"di", "x0", "%di is x86-64's register for argument 1; on arm64 it is %x0"},
      {"rdi", "x0", "%rdi is x86-64's register for argument 1; on arm64 it is %x0"},
      {"esi", "x1", "%esi is x86-64's register for argument 2; on arm64 it is %x1"},
      {"r9", "x5", "%r9 is x86-64's register for argument 6; on arm64 it is %x5"},
      {"ax", "x0", "%ax is x86-64's return value's register; on arm64 it is %x0"},
      {"rsp", "sp", "%rsp is x86-64's stack pointer; on arm64 it is %sp"},
      {"ip", "pc", "%ip is x86-64's instruction pointer; on arm64 it is %pc"},
  };
  for (const Row& row : rows) {
    INFO(row.wrong);
    CHECK_FALSE(arm64.IsRegister(row.wrong));
    auto suggestion = arm64.SuggestRegister(row.wrong);
    REQUIRE(suggestion);
    CHECK(suggestion->name == row.right);
    CHECK(suggestion->why == row.why);
  }
  for (const char* none : {"v0", "xzr", "r10", "bx", "flags"}) {
    INFO(none);
    CHECK_FALSE(arm64.SuggestRegister(none));
  }
}

TEST_CASE("arm64: where the AAPCS64 puts each class of parameter") {
  struct Row {
    const char* what;
    std::vector<ParamClass> params;
    std::vector<std::string> expected;
  } rows[] = {
      {"integers and pointers in x0..x7, then the stack from 0(sp)",
       {Int(), Int(4), Int(1), Int(), Int(2), Int(), Int(), Int(4), Int(), Int(1)},
       {"%x0", "%x1", "%x2", "%x3", "%x4", "%x5", "%x6", "%x7", "+0(%sp)", "+8(%sp)"}},
      {"a composite of up to 16 bytes in one or two registers",
       {Int(), Struct(16), Struct(4, 4), Int()},
       {"%x0", "%x1,%x2", "%x3", "%x4"}},
      {"a composite over 16 bytes by reference: a pointer to a copy",
       {Struct(24), Int(), Struct(100)},
       {"*%x0", "%x1", "*%x2"}},
      {"a composite that no longer fits goes to the stack, and no register is used after it (NGRN = 8)",
       {Int(), Int(), Int(), Int(), Int(), Int(), Int(), Struct(16), Int()},
       {"%x0", "%x1", "%x2", "%x3", "%x4", "%x5", "%x6", "+0(%sp),+8(%sp)", "+16(%sp)"}},
      {"a 16-byte aligned value starts at an even register", {Int(), Int(16), Int()}, {"%x0", "%x2,%x3", "%x4"}},
      {"and at a 16-byte aligned stack slot",
       {Int(), Int(), Int(), Int(), Int(), Int(), Int(), Int(), Int(), Struct(16, 16)},
       {"%x0", "%x1", "%x2", "%x3", "%x4", "%x5", "%x6", "%x7", "+0(%sp)", "+16(%sp),+24(%sp)"}},
      {"floats and homogeneous float aggregates in vector registers",
       {Float(), Int(), Struct(16, 4, 4), Float(4), Int()},
       {"-", "%x0", "-", "-", "%x1"}},
      {"the ninth double goes to the stack",
       {Float(), Float(), Float(), Float(), Float(), Float(), Float(), Float(), Float(), Int(), Int(), Int(), Int(),
        Int(), Int(), Int(), Int(), Int()},
       {"-", "-", "-", "-", "-", "-", "-", "-", "-", "%x0", "%x1", "%x2", "%x3", "%x4", "%x5", "%x6", "%x7",
        "+8(%sp)"}},
      {"by reference on the stack",
       {Int(), Int(), Int(), Int(), Int(), Int(), Int(), Int(), Struct(32)},
       {"%x0", "%x1", "%x2", "%x3", "%x4", "%x5", "%x6", "%x7", "*+0(%sp)"}},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    CHECK(PlacesText(arm64, row.params) == row.expected);
  }
  auto places = arm64.PlaceParams(std::vector<ParamClass>{Float()});
  CHECK(places[0].why == "is a floating-point value, passed in a vector register the kernel cannot fetch");
}

TEST_CASE("arm64: USDT operands, what each reads, or why fetchargs cannot") {
  struct Row {
    const char* text;
    const char* expected;
  } rows[] = {
      {"8@x0", "u64 %x0"},
      {"-4@w1", "s32 %x1"},
      {"-4@[sp, 12]", "s32 12(%sp)"},
      {"8@[x19, -8]", "u64 -8(%x19)"},
      {"4@[x1]", "u32 0(%x1)"},
      {"-8@[x29, #-16]", "s64 -16(%x29)"},
      {"4@100", "u32 $100"},
      {"-4@-1", "s32 $-1"},
      {"8@xzr", "u64 $0"},
      {"2@x30", "u16 %x30"},
      {"8@v0",
       "error: marker argument '8@v0' is in a floating-point or vector register (v0), which the kernel's fetchargs "
       "cannot read"},
      {"8@d1",
       "error: marker argument '8@d1' is in a floating-point or vector register (d1), which the kernel's fetchargs "
       "cannot read"},
      {"4@[x1, x2]",
       "error: marker argument '4@[x1, x2]' is a memory reference with an index register (BASE + INDEX), which the "
       "kernel's fetchargs cannot add"},
      {"4@[x1, x2, lsl #2]",
       "error: marker argument '4@[x1, x2, lsl #2]' is a memory reference with an index register (BASE + INDEX), "
       "which the kernel's fetchargs cannot add"},
      {"8@[x0, #:lo12:counter]",
       "error: marker argument '8@[x0, #:lo12:counter]' is a memory reference with an offset kprobectl cannot read "
       "(':lo12:counter')"},
      {"8@%rdi", "error: marker argument '8@%rdi' is not an operand kprobectl can read"},
      {"8@x31", "error: marker argument '8@x31' is in an unknown register 'x31'"},
      {"3@x0", "error: marker argument '3@x0' is of size '3' (sizes are 1, 2, 4 or 8 bytes)"},
  };
  for (const Row& row : rows) {
    INFO(row.text);
    CHECK(SdtOperandText(arm64, row.text) == row.expected);
  }
}

TEST_CASE("USDT arguments split at the blanks between operands, not inside one") {
  CHECK(SplitSdtArguments(" -4@x0  -8@[sp, 8] 4@[x1]\t8@100 ") ==
        std::vector<std::string>{"-4@x0", "-8@[sp, 8]", "4@[x1]", "8@100"});
  CHECK(SplitSdtArguments(" -4@%edi  8@-80(%rbx) -4@(%rax,%rcx,4)") ==
        std::vector<std::string>{"-4@%edi", "8@-80(%rbx)", "-4@(%rax,%rcx,4)"});
  CHECK(SplitSdtArguments("").empty());
}

TEST_CASE("arm64: the kernel's rules on it") {
  std::vector<std::string> sections(arm64.no_probe_sections().begin(), arm64.no_probe_sections().end());
  CHECK(sections == std::vector<std::string>{"kprobes_text", "noinstr_text", "entry_text", "irqentry_text", "hyp_text",
                                             "hyp_idmap_text"});
  CHECK(arm64.multiarch() == "aarch64-linux-gnu");
  CHECK(arm64.name() == "arm64");
  CHECK(arm64.kernel_text_symbol() == "_stext");  // 6.1's kallsyms has no _text
  CHECK(X86_64Arch().kernel_text_symbol() == "_text");
}

TEST_CASE("the architecture comes from the file's ELF machine, or the running kernel's uname") {
  CHECK(*ArchOfElf(EM_X86_64, true, "'a'") == &X86_64Arch());
  CHECK(*ArchOfElf(EM_AARCH64, true, "'a'") == &Aarch64Arch());
  CHECK(*ArchOfUname("x86_64") == &X86_64Arch());
  CHECK(*ArchOfUname("aarch64") == &Aarch64Arch());
  struct Row {
    uint16_t machine;
    bool elf64;
    const char* message;
  } rows[] = {
      {EM_RISCV, true, "'./app' is for RISC-V (EM_RISCV), an architecture kprobectl does not support"},
      {EM_ARM, false, "'./app' is for 32-bit ARM (EM_ARM), an architecture kprobectl does not support"},
      {EM_386, false, "'./app' is for i386 (EM_386), an architecture kprobectl does not support"},
      {EM_AARCH64, false, "'./app' is for 32-bit arm64, an architecture kprobectl does not support"},
      {EM_X86_64, false, "'./app' is for x32 (32-bit EM_X86_64), an architecture kprobectl does not support"},
      {4242, true, "'./app' is for ELF machine 4242, an architecture kprobectl does not support"},
  };
  for (const Row& row : rows) {
    INFO(row.machine);
    auto arch = ArchOfElf(row.machine, row.elf64, "'./app'");
    REQUIRE_FALSE(arch);
    CHECK(arch.error().message == row.message);
    CHECK(arch.error().hint == "kprobectl reads x86-64 and arm64 files");
  }
  auto riscv = ArchOfUname("riscv64");
  REQUIRE_FALSE(riscv);
  CHECK(riscv.error().message == "the running kernel is riscv64, an architecture kprobectl does not support");
  std::vector<std::string> names;
  for (const Arch& a : Architectures()) names.emplace_back(a.name());
  CHECK(names == std::vector<std::string>{"x86-64", "arm64"});
}

TEST_CASE("arm64: an unconditional direct jump's target, and nothing for other instructions") {
  using namespace std::string_view_literals;
  CHECK(arm64.DirectJumpTarget("\x05\x00\x00\x14"sv, 0x1000) == 0x1014);         // b +20
  CHECK(arm64.DirectJumpTarget("\xff\xff\xff\x17"sv, 0x1000) == 0xffc);          // b -4
  CHECK(arm64.DirectJumpTarget("\x00\x00\x00\x16"sv, 0x10000000) == 0x8000000);  // b -2^27, the farthest back
  CHECK(!arm64.DirectJumpTarget("\x05\x00\x00\x94"sv, 0x1000));                  // bl: a call
  CHECK(!arm64.DirectJumpTarget("\xa1\x00\x00\x54"sv, 0x1000));                  // b.ne: conditional
  CHECK(!arm64.DirectJumpTarget("\x05\x00\x00"sv, 0x1000));                      // cut short
}
