// SPDX-License-Identifier: GPL-2.0-or-later
//
// x86-64: the kernel's register names (arch/x86/kernel/ptrace.c,
// regoffset_table), their DWARF numbers (System V psABI, figure 3.36), the
// System V argument registers and how parameters are classified into them
// (psABI 3.2.3), and the kernel's rules on x86 (arch_populate_kprobe_blacklist:
// .entry.text; the __fentry__ call at a function's start, after an endbr64
// with IBT).
#include <elf.h>

#include "arch_spec.h"

namespace kprobectl {

namespace {

// DWARF numbers: 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp,
// 8..15 r8..r15, 16 return address (rip).
constexpr RegisterName kRegisters[] = {
    {"ax", 0, {"rax", "eax", "ax", "al"}},
    {"dx", 1, {"rdx", "edx", "dx", "dl"}},
    {"cx", 2, {"rcx", "ecx", "cx", "cl"}},
    {"bx", 3, {"rbx", "ebx", "bx", "bl"}},
    {"si", 4, {"rsi", "esi", "si", "sil"}},
    {"di", 5, {"rdi", "edi", "di", "dil"}},
    {"bp", 6, {"rbp", "ebp", "bp", "bpl"}},
    {"sp", 7, {"rsp", "esp", "sp", "spl"}},
    {"r8", 8, {"r8", "r8d", "r8w", "r8b"}},
    {"r9", 9, {"r9", "r9d", "r9w", "r9b"}},
    {"r10", 10, {"r10", "r10d", "r10w", "r10b"}},
    {"r11", 11, {"r11", "r11d", "r11w", "r11b"}},
    {"r12", 12, {"r12", "r12d", "r12w", "r12b"}},
    {"r13", 13, {"r13", "r13d", "r13w", "r13b"}},
    {"r14", 14, {"r14", "r14d", "r14w", "r14b"}},
    {"r15", 15, {"r15", "r15d", "r15w", "r15b"}},
    {"ip", 16, {"rip", "eip", "ip", ""}},
    {"flags", 49, {"rflags", "eflags", "", ""}},
    {"cs", 51, {"cs", "", "", ""}},
    {"ss", 52, {"ss", "", "", ""}},
    {"ds", 53, {"ds", "", "", ""}},
    {"es", 50, {"es", "", "", ""}},
    {"fs", 54, {"fs", "", "", ""}},
    {"gs", 55, {"gs", "", "", ""}},
    {"orig_ax", -1, {"orig_rax", "", "", ""}},
};

constexpr std::string_view kArgumentRegisters[] = {"di", "si", "dx", "cx", "r8", "r9"};
// Go's internal ABI (Go 1.17+, src/cmd/compile/abi-internal.md, "amd64
// architecture"): integer arguments in RAX, RBX, RCX, RDI, RSI, R8, R9,
// R10, R11, not System V's.
constexpr std::string_view kGoArgumentRegisters[] = {"ax", "bx", "cx", "di", "si", "r8", "r9", "r10", "r11"};
constexpr std::string_view kGoIntegerNames[] = {"RAX", "RBX", "RCX", "RDI", "RSI", "R8", "R9", "R10", "R11"};

// The stack pointer, the return address column (the pc), the frame pointer.
constexpr Arch::UnwindRegister kUnwindRegisters[] = {{"sp", 7}, {"ip", 16}, {"bp", 6}};

constexpr std::string_view kNoProbeSections[] = {"kprobes_text", "noinstr_text", "entry_text", "irqentry_text",
                                                 "softirqentry_text"};

// The classification as far as fetchargs need it: INTEGER values take one
// register (two for 16 bytes); an aggregate of up to 16 bytes takes one or
// two, and goes whole on the stack when the registers left do not hold it
// (the registers stay for later arguments); a bigger one is MEMORY, copied
// to the stack; SSE values (floats, and aggregates of floats) go in the 8
// vector registers while they last, then on the stack. Stack slots are 8
// bytes, 16-byte aligned for a 16-byte-aligned value.
std::vector<ParamPlace> PlaceSysV(std::span<const ParamClass> params) {
  constexpr unsigned kCount = std::size(kArgumentRegisters);
  unsigned registers = 0, vectors = 0, stack = 0;
  std::vector<ParamPlace> out;
  for (const ParamClass& p : params) {
    ParamPlace place;
    unsigned eightbytes = static_cast<unsigned>((p.size + 7) / 8);
    if (p.kind == ParamClass::kFloat || (p.kind == ParamClass::kAggregate && p.all_float && p.size <= 16)) {
      place.kind = ParamPlace::kUnreadable;
      place.why = "is a floating-point value, passed in an SSE register the kernel cannot fetch";
      if (vectors + eightbytes <= 8)
        vectors += eightbytes;
      else
        stack += eightbytes;
    } else if (p.kind == ParamClass::kAggregate && p.size > 16) {
      place.kind = ParamPlace::kUnreadable;
      place.why = "is a " + std::to_string(p.size) + "-byte " + p.type_name + " passed by value, copied to the stack";
      stack += eightbytes;
    } else {
      place.slots = eightbytes > 1 ? 2 : 1;
      if (registers + place.slots <= kCount) {
        place.slot = registers + 1;
        registers += place.slots;
      } else {
        if (p.align == 16) stack = (stack + 1) / 2 * 2;
        place.slot = kCount + 1 + stack;
        stack += place.slots;
      }
    }
    out.push_back(std::move(place));
  }
  return out;
}

// jmp rel8 (EB cb) and jmp rel32 (E9 cd), relative to the next instruction.
std::optional<uint64_t> DirectJumpX86_64(std::string_view code, uint64_t address) {
  auto byte = [&](size_t i) { return static_cast<uint8_t>(code[i]); };
  if (code.size() >= 2 && byte(0) == 0xeb) return address + 2 + static_cast<uint64_t>(static_cast<int8_t>(byte(1)));
  if (code.size() < 5 || byte(0) != 0xe9) return std::nullopt;
  uint32_t rel = 0;
  for (size_t i = 4; i >= 1; --i) rel = rel << 8 | byte(i);
  return address + 5 + static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(rel)));
}

}  // namespace

// <sys/sdt.h>'s AT&T operands: x86_64_sdt.cc.
Result<SdtOperand> ParseX86_64SdtOperand(std::string_view text, std::string_view operand, SdtOperand out);

const ArchSpec kX86_64Spec = {
    .name = "x86-64",
    .elf_name = "EM_X86_64",
    .machine = EM_X86_64,
    .uname = "x86_64",
    .multiarch = "x86_64-linux-gnu",
    .registers = kRegisters,
    .argument_registers = kArgumentRegisters,
    .go_argument_registers = kGoArgumentRegisters,
    // X0-X14 (X15 is Go's zero register); XMM0 is DWARF register 17.
    .go_float_registers = 15,
    .go_float_dwarf = 17,
    .go_float_prefix = "X",
    .go_integer_names = kGoIntegerNames,
    .go_goroutine_register = "r14",  // Go's g (abi-internal.md, amd64)
    .go_register_abi_since = 17,     // Go 1.17 (its release notes, "Compiler")
    .stack_pointer = "sp",
    .return_register = "ax",
    .instruction_pointer = "ip",
    .first_stack_argument = 8,  // 0(%sp) holds the return address at the entry
    .return_address_bytes = 8,  // which the return pops: a return probe's %sp is its entry's + 8
    .register_summary = "%ax %bx %cx %dx %si %di %bp %sp %r8..%r15 %ip %flags",
    .place_params = PlaceSysV,
    .parse_sdt_operand = ParseX86_64SdtOperand,
    .no_probe_sections = kNoProbeSections,
    // __fentry__'s call is the first instruction, after a 4-byte endbr64 with IBT.
    .ftrace_site_min = 0,
    .ftrace_site_max = 16,
    .relative_relocation = R_X86_64_RELATIVE,
    .patchable_entry = 0,
    .direct_jump = DirectJumpX86_64,
    .unwind_registers = kUnwindRegisters,
    .kernel_text = "_text",
};

}  // namespace kprobectl
