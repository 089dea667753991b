// SPDX-License-Identifier: GPL-2.0-or-later
//
// arm64 (AArch64): the kernel's register names (arch/arm64/kernel/ptrace.c,
// regoffset_table: x0..x30, lr, sp, pc, pstate), their DWARF numbers ("DWARF
// for the Arm 64-bit Architecture": x0..x30 are 0..30, sp 31, pc 32; v0..v31
// 64..95, which fetchargs cannot read), where the AAPCS64 puts parameters
// (section 6.8.2, "Parameter passing rules": x0..x7, then the stack; a
// composite over 16 bytes by reference), and the kernel's rules on arm64
// (arch_populate_kprobe_blacklist: .entry.text, .irqentry.text, .hyp.text,
// .hyp.idmap.text; ftrace's call site in the patchable entry, after a BTI
// landing pad).
//
// The kernel's own $argN reads x0..x7 only (regs_get_kernel_argument(),
// arch/arm64/include/asm/ptrace.h: 0 beyond them), so a stack argument is
// read from the stack: at a function's entry the first one is at 0(sp), the
// return address being in lr, not on the stack.
#include <elf.h>

#include "arch_spec.h"

namespace kprobectl {

namespace {

constexpr RegisterName kRegisters[] = {
    {"x0", 0, {"w0"}},
    {"x1", 1, {"w1"}},
    {"x2", 2, {"w2"}},
    {"x3", 3, {"w3"}},
    {"x4", 4, {"w4"}},
    {"x5", 5, {"w5"}},
    {"x6", 6, {"w6"}},
    {"x7", 7, {"w7"}},
    {"x8", 8, {"w8"}},
    {"x9", 9, {"w9"}},
    {"x10", 10, {"w10"}},
    {"x11", 11, {"w11"}},
    {"x12", 12, {"w12"}},
    {"x13", 13, {"w13"}},
    {"x14", 14, {"w14"}},
    {"x15", 15, {"w15"}},
    {"x16", 16, {"w16", "ip0"}},
    {"x17", 17, {"w17", "ip1"}},
    {"x18", 18, {"w18"}},
    {"x19", 19, {"w19"}},
    {"x20", 20, {"w20"}},
    {"x21", 21, {"w21"}},
    {"x22", 22, {"w22"}},
    {"x23", 23, {"w23"}},
    {"x24", 24, {"w24"}},
    {"x25", 25, {"w25"}},
    {"x26", 26, {"w26"}},
    {"x27", 27, {"w27"}},
    {"x28", 28, {"w28"}},
    {"x29", 29, {"w29", "fp"}},
    // x30 is the link register; DWARF's 30 is written %lr, as perf writes it.
    {"x30", -1, {"w30"}},
    {"lr", 30, {}},
    {"sp", 31, {"wsp"}},
    {"pc", 32, {}},
    {"pstate", -1, {"cpsr", "nzcv"}},
};

constexpr std::string_view kArgumentRegisters[] = {"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7"};
// Go's internal ABI (Go 1.18+ on arm64, src/cmd/compile/abi-internal.md,
// "arm64 architecture"): integer arguments in R0 through R15.
constexpr std::string_view kGoArgumentRegisters[] = {"x0", "x1", "x2",  "x3",  "x4",  "x5",  "x6",  "x7",
                                                     "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15"};
constexpr std::string_view kGoIntegerNames[] = {"R0", "R1", "R2",  "R3",  "R4",  "R5",  "R6",  "R7",
                                                "R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15"};

// The stack pointer, the pc, the frame pointer and the link register (x30:
// the return address column, a register at a function's entry).
constexpr Arch::UnwindRegister kUnwindRegisters[] = {{"sp", 31}, {"pc", 32}, {"x29", 29}, {"lr", 30}};

constexpr std::string_view kNoProbeSections[] = {"kprobes_text",  "noinstr_text", "entry_text",
                                                 "irqentry_text", "hyp_text",     "hyp_idmap_text"};

// AAPCS64 6.8.2 with NGRN (the next integer register), NSRN (the next
// vector register) and NSAA (the next stack address, here as an offset): a
// composite over 16 bytes is replaced by a pointer to a copy (B.4); a
// homogeneous floating-point aggregate and floats go in v0..v7 while they
// last (C.2, C.3); a 16-byte-aligned value starts at an even register
// (C.9); an integer or composite that fits in the registers left takes
// them (C.10, C.12), else NGRN becomes 8 and it goes to the stack (C.13,
// C.15), in 8-byte slots (16-byte aligned when it is).
std::vector<ParamPlace> PlaceAapcs64(std::span<const ParamClass> params) {
  constexpr unsigned kCount = std::size(kArgumentRegisters);
  unsigned ngrn = 0, nsrn = 0;
  uint64_t nsaa = 0;
  std::vector<ParamPlace> out;
  for (const ParamClass& p : params) {
    ParamPlace place;
    bool hfa = p.kind == ParamClass::kAggregate && p.all_float && p.float_members >= 1 && p.float_members <= 4;
    if (p.kind == ParamClass::kFloat || hfa) {
      unsigned members = p.kind == ParamClass::kFloat ? 1 : p.float_members;
      place.kind = ParamPlace::kUnreadable;
      place.why = "is a floating-point value, passed in a vector register the kernel cannot fetch";
      if (nsrn + members <= 8) {
        nsrn += members;
      } else {
        nsrn = 8;
        nsaa += (p.size + 7) / 8 * 8;
      }
      out.push_back(std::move(place));
      continue;
    }
    bool by_reference = p.kind == ParamClass::kAggregate && p.size > 16;
    uint64_t size = by_reference ? 8 : p.size;
    unsigned slots = size > 8 ? 2 : 1;
    place.kind = by_reference ? ParamPlace::kByReference : ParamPlace::kSlots;
    place.slots = slots;
    bool aligned16 = !by_reference && p.align == 16;
    if (aligned16) ngrn = (ngrn + 1) / 2 * 2;
    if (ngrn + slots <= kCount) {
      place.slot = ngrn + 1;
      ngrn += slots;
    } else {
      ngrn = kCount;
      if (aligned16) nsaa = (nsaa + 15) / 16 * 16;
      place.slot = kCount + 1 + static_cast<unsigned>(nsaa / 8);
      nsaa += 8 * uint64_t{slots};
    }
    out.push_back(std::move(place));
  }
  return out;
}

// B imm26: 000101 then a signed word offset from the instruction itself
// (little-endian, as the kernel and Debian's user space are).
std::optional<uint64_t> DirectJumpAarch64(std::string_view code, uint64_t address) {
  if (code.size() < 4) return std::nullopt;
  uint32_t insn = 0;
  for (size_t i = 4; i >= 1; --i) insn = insn << 8 | static_cast<uint8_t>(code[i - 1]);
  if ((insn & 0xfc000000u) != 0x14000000u) return std::nullopt;
  int64_t words = static_cast<int64_t>(insn & 0x03ffffffu);
  if (words & 0x02000000) words -= int64_t{1} << 26;
  return address + static_cast<uint64_t>(words * 4);
}

}  // namespace

// <sys/sdt.h>'s arm64 operands: aarch64_sdt.cc.
Result<SdtOperand> ParseAarch64SdtOperand(std::string_view text, std::string_view operand, SdtOperand out);

const ArchSpec kAarch64Spec = {
    .name = "arm64",
    .elf_name = "EM_AARCH64",
    .machine = EM_AARCH64,
    .uname = "aarch64",
    .multiarch = "aarch64-linux-gnu",
    .registers = kRegisters,
    .argument_registers = kArgumentRegisters,
    .go_argument_registers = kGoArgumentRegisters,
    // F0-F15; V0 is DWARF register 64.
    .go_float_registers = 16,
    .go_float_dwarf = 64,
    .go_float_prefix = "F",
    .go_integer_names = kGoIntegerNames,
    .go_goroutine_register = "x28",  // Go's g (abi-internal.md, arm64)
    .go_register_abi_since = 18,     // Go 1.18 (its release notes, "Compiler")
    .stack_pointer = "sp",
    .return_register = "x0",
    .instruction_pointer = "pc",
    .first_stack_argument = 0,  // the return address is in lr
    .return_address_bytes = 0,  // in lr: a return probe's sp is its entry's
    .register_summary = "%x0..%x30 %lr %sp %pc %pstate",
    .place_params = PlaceAapcs64,
    .parse_sdt_operand = ParseAarch64SdtOperand,
    .no_probe_sections = kNoProbeSections,
    // The patchable entry's NOPs (-fpatchable-function-entry): __mcount_loc
    // records the first, at the symbol (Linux 6.1), or the first of two
    // before it with DYNAMIC_FTRACE_WITH_CALL_OPS (6.12's -fpatchable-
    // function-entry=4,2: 8 bytes before the symbol).
    .ftrace_site_min = -8,
    .ftrace_site_max = 16,
    .relative_relocation = R_AARCH64_RELATIVE,
    // The two NOPs at the symbol are outside the DWARF's function.
    .patchable_entry = 8,
    .direct_jump = DirectJumpAarch64,
    .unwind_registers = kUnwindRegisters,
    // Not _text, which begins the image's header, before _stext: 6.1's
    // scripts/kallsyms keeps no symbol before _stext (6.12's keeps _text),
    // so "_text+OFF" was "Invalid probed address or symbol" there (measured
    // in the arm64 VM). perf writes _stext+OFF too (its ref_reloc_sym: the
    // first of _text, _stext that kallsyms has).
    .kernel_text = "_stext",
};

}  // namespace kprobectl
