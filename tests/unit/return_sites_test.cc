// SPDX-License-Identifier: GPL-2.0-or-later
//
// Return sites by disassembly (elf/return_sites.cc), table-driven on
// hand-assembled code: returns found, jumps inside kept, a jump out refused.
#include "kprobectl/return_sites.h"

#include <catch2/catch.hpp>

using namespace kprobectl;

TEST_CASE("return sites: every return instruction, a jump out of the function refused") {
  const Arch& x86 = **ArchOfUname("x86_64");
  const Arch& arm64 = **ArchOfUname("aarch64");
  struct Case {
    const Arch* arch;
    std::string code;
    std::vector<uint64_t> sites;
    std::string error;
  } cases[] = {
      // cmp; jne +1; ret; ret; int3
      {&x86, std::string("\x48\x39\xc0\x75\x01\xc3\xc3\xcc", 8), {0x1005, 0x1006}, ""},
      // jmp rax (a jump table's, stays in); ret
      {&x86, std::string("\xff\xe0\xc3", 3), {0x1002}, ""},
      // jmp back to the start (morestack's return); ret
      {&x86, std::string("\xeb\xfe\xc3", 3), {0x1002}, ""},
      // jmp rel32 to 0x2000: out of the function
      {&x86,
       std::string("\xe9\xfb\x0f\x00\x00", 5),
       {},
       "cannot find the returns of 'f': it jumps out of itself at 0x1000 (jmp 0x2000), a tail call whose return "
       "is another function's"},
      // ret; a jmp cut short (data, or the wrong length)
      {&x86,
       std::string("\xc3\xe9\x00", 3),
       {},
       "cannot find the returns of 'f': the instruction at 0x1001 does not decode"},
      // arm64: cbz x0, +8; ret; ret
      {&arm64, std::string("\x40\x00\x00\xb4\xc0\x03\x5f\xd6\xc0\x03\x5f\xd6", 12), {0x1004, 0x1008}, ""},
      // arm64: tbnz x0, #63, +8 (the bit is no target); bl far (a call returns); ret
      {&arm64, std::string("\x40\x00\xf8\xb7\x00\x04\x00\x94\xc0\x03\x5f\xd6", 12), {0x1008}, ""},
      // arm64: ret, then Go's padding, zero words (no instruction to Capstone 4)
      {&arm64, std::string("\xc0\x03\x5f\xd6\0\0\0\0\0\0\0\0", 12), {0x1000}, ""},
      // arm64: tbz x1, #0, far: out
      {&arm64,
       std::string("\x01\x80\x00\x36", 4),
       {},
       "cannot find the returns of 'f': it jumps out of itself at 0x1000 (tbz w1, #0, #0x2000), a tail call whose "
       "return is another function's"},
      // arm64: b +0x1000, out
      {&arm64,
       std::string("\x00\x04\x00\x14", 4),
       {},
       "cannot find the returns of 'f': it jumps out of itself at 0x1000 (b #0x2000), a tail call whose return is "
       "another function's"},
  };
  for (const Case& c : cases) {
    INFO(c.error);
    auto sites = FindReturnSites(c.code, 0x1000, *c.arch, "'f'");
    if (c.error.empty()) {
      REQUIRE(sites);
      CHECK(*sites == c.sites);
    } else {
      REQUIRE_FALSE(sites);
      CHECK(sites.error().message == c.error);
    }
  }
}

// Go's stack check: a conditional branch among the first instructions to
// a block that calls morestack and jumps back to the start; past the
// branch is where the entry runs once a call. Without the jump back, the
// start itself.
TEST_CASE("Go's entry past its stack check") {
  const Arch& x86 = **ArchOfUname("x86_64");
  const Arch& arm64 = **ArchOfUname("aarch64");
  struct Case {
    const Arch* arch;
    std::string code;
    uint64_t past;
  } cases[] = {
      // cmp 0x10(%r14),%rsp; jbe 0x1007; ret; call (morestack); jmp 0x1000
      {&x86, std::string("\x49\x3b\x66\x10\x76\x01\xc3\xe8\x00\x00\x00\x00\xeb\xf2", 14), 0x1006},
      // a leaf: xor eax,eax; ret
      {&x86, std::string("\x31\xc0\xc3", 3), 0x1000},
      // a conditional branch but no jump back to the start
      {&x86, std::string("\x48\x39\xc0\x75\x01\xc3\xc3\xcc", 8), 0x1000},
      // ldr x16, [x28, #16]; cmp x17, x16; b.ls 0x1010; ret; bl (morestack); b 0x1000
      {&arm64,
       std::string("\x90\x0b\x40\xf9\x3f\x02\x10\xeb\x49\x00\x00\x54\xc0\x03\x5f\xd6\x01\x00\x00\x94\xfb\xff\xff\x17",
                   24),
       0x100c},
      // arm64 leaf: ret
      {&arm64, std::string("\xc0\x03\x5f\xd6", 4), 0x1000},
  };
  for (const Case& c : cases) {
    auto past = GoEntryPastStackCheck(c.code, 0x1000, *c.arch, "'f'");
    REQUIRE(past);
    CHECK(*past == c.past);
  }
}
