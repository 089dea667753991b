// SPDX-License-Identifier: GPL-2.0-or-later
//
// The target's architecture, as the kernel's fetchargs and the psABI see it.
// In: an ELF machine number (the target file's) or the running kernel's
// `uname -m`. Out: one Arch, which knows the register names the kernel takes
// after '%' and their DWARF numbers, where a function's arguments are at its
// entry (integer slots: registers, then the stack; composites by value or by
// reference), the register a return probe reads, the operands of USDT
// markers, and the kernel's own rules there (sections it never probes, where
// ftrace's call site lies in a function). Each architecture is one table in
// src/arch/ with its tests; nothing above that directory names a register.
// Models: perf's dwarf-regs tables (picked by e_machine, which is how perf
// reads another architecture's vmlinux), bpftrace's src/arch/, libbpf's
// parse_usdt_arg() per architecture.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kprobectl/result.h"

namespace kprobectl {

// A USDT marker's argument ("-4@%edi", "8@[x19, -8]"), read: what it
// reads, with the kernel's register names.
struct SdtOperand {
  enum Kind {
    kRegister,   // reg: the register's value
    kMemory,     // memory at reg + displacement
    kImmediate,  // immediate: a constant
    kStatic,     // memory at symbol + displacement (PC-relative), or at the address `displacement` without a symbol
  } kind = kRegister;
  unsigned size = 8;  // bytes: 1, 2, 4 or 8
  bool is_signed = false;
  std::string reg;  // the kernel's name: "di", "x19"
  int64_t displacement = 0;
  int64_t immediate = 0;
  std::string symbol;
};

// A parameter as the psABI sees it when it places it.
struct ParamClass {
  enum Kind {
    kInteger,    // integers, pointers, enums, bool
    kFloat,      // float, double
    kAggregate,  // a struct, union or array passed by value
  } kind = kInteger;
  uint64_t size = 8;
  uint64_t align = 8;
  bool all_float = false;      // kAggregate: only floating-point members of one type (passed in vector registers)
  unsigned float_members = 0;  // kAggregate with all_float: how many
  std::string type_name;       // for messages: "struct sockaddr"
};

// Where a parameter is at the function's entry, in integer argument slots:
// slot N (1-based) is the Nth register of the ABI's argument registers,
// then the stack's 8-byte slots in order ($argN of a uprobe, as kprobectl
// maps it).
struct ParamPlace {
  enum Kind {
    kSlots,        // the value itself, in `slots` consecutive slots from `slot`
    kByReference,  // slot `slot` holds the address of a copy of the value
    kUnreadable,   // nowhere the kernel's fetchargs can read: `why`
  } kind = kSlots;
  unsigned slot = 0;
  unsigned slots = 1;
  std::string why;  // "is a floating-point value, passed in a vector register the kernel cannot fetch"
};

// A Go value's type as Go's internal ABI breaks it down to assign it
// (src/cmd/compile/abi-internal.md, "Function call argument and result
// passing"): integers (bool, ints, pointers, maps, channels, funcs),
// floats, structs field by field (a string is {ptr, len}, a slice {ptr,
// len, cap}, an interface {tab, data}, a complex {real, imag}) and arrays.
struct GoAbiType {
  enum Kind { kInteger, kFloat, kStruct, kArray } kind = kInteger;
  uint64_t size = 8;
  uint64_t align = 8;
  std::vector<GoAbiType> members;  // kStruct: its fields, in order; kArray: its element
  std::vector<uint64_t> offsets;   // kStruct: where each field begins
  uint64_t count = 0;              // kArray: how many elements
};

// Where Go's ABI puts one argument or result: each base value of it in a
// register of its own (bytes [offset, offset + size) of the value, in the
// register's low bytes), or the whole value in the argument area on the
// stack, `stack_offset` bytes from the stack pointer at the function's
// entry and at its return instructions.
struct GoAbiPlace {
  bool on_stack = false;
  int64_t stack_offset = 0;
  struct Piece {
    uint64_t offset = 0;
    uint64_t size = 0;
    bool is_float = false;        // in a floating-point register, which the kernel cannot fetch
    unsigned dwarf_register = 0;  // its DWARF number
    std::string name;             // Go's name of the register, for messages: "RAX", "X0", "R3", "F0"
  };
  std::vector<Piece> pieces;
};

// One architecture's description (src/arch/*.cc fill it in).
struct ArchSpec;

class Arch {
 public:
  explicit constexpr Arch(const ArchSpec& spec) : spec_(&spec) {}

  std::string_view name() const;       // "x86-64", "arm64"
  std::string_view elf_name() const;   // "EM_X86_64", "EM_AARCH64"
  uint16_t elf_machine() const;        // EM_X86_64, EM_AARCH64
  std::string_view multiarch() const;  // Debian's library directory: "x86_64-linux-gnu"
  std::string_view uname() const;      // the kernel's `uname -m`: "x86_64", "aarch64"

  // Registers: the names the kernel takes after '%' (its
  // regs_query_register_offset() table), by DWARF number.
  std::optional<std::string_view> DwarfRegisterName(unsigned dwarf_number) const;
  bool IsRegister(std::string_view name) const;
  // For a name the kernel refuses, the one meant: an assembler's name of the
  // same register ("rdi" -> "di", "w3" -> "x3"), or, for another
  // architecture's argument register, this one's register for that argument
  // ("di" on arm64 -> "x0"), with why.
  struct Suggestion {
    std::string_view name;
    std::string why;  // empty for a plain alias
  };
  std::optional<Suggestion> SuggestRegister(std::string_view name) const;
  std::string RegisterSummary() const;  // for hints: "%ax %bx ... %r8..%r15 %ip %flags"

  // The psABI at a function's entry.
  std::string_view stack_pointer() const;
  std::string_view return_register() const;
  unsigned argument_registers() const;  // how many integer argument registers
  // The fetcharg for integer argument slot `n` (1-based) at the entry:
  // "%di".."%r9" then "+8(%sp)"... on x86-64 (the return address is at
  // 0(%sp)); "%x0".."%x7" then "+0(%sp)"... on arm64.
  std::string ArgumentAtEntry(unsigned n) const;
  // Go's calling conventions: with its register ABI (`register_abi`, Go
  // 1.17+ on x86-64, 1.18+ on arm64) slot `n` is the Nth of Go's own
  // integer argument registers (RAX RBX RCX RDI RSI R8-R11; R0-R15); past
  // them an error, for where Go puts an argument on the stack depends on
  // the arguments before it. Before it (ABI0) every argument is on the
  // stack, slot 1 at 8(SP) at the entry.
  Result<std::string> GoArgumentAtEntry(unsigned n, bool register_abi) const;
  // Whether Go 1.`go_minor` passes arguments in registers here (its
  // internal ABI, "ABIInternal"): since 1.17 on x86-64, 1.18 on arm64.
  bool GoRegisterAbiIn(unsigned go_minor) const;
  // The register where Go's register ABI keeps the running goroutine (its
  // g): R14, R28; as the kernel names it.
  std::string_view GoGoroutineRegister() const;
  // Go's assignment of a function's arguments (receiver first) and
  // results to registers and the stack (go_abi.cc), with its register ABI,
  // or without it (ABI0: no registers, everything on the stack). The
  // results come from a fresh register sequence: at a return instruction
  // they are where this says, whatever the DWARF's location lists say.
  // `argument_area` is the size of the argument area: the values on the
  // stack, then the spill slots of the arguments in registers, each part
  // pointer-aligned (Go's ArgWidth, which its .gopclntab keeps as _func.args).
  struct GoFrame {
    std::vector<GoAbiPlace> args, results;
    uint64_t argument_area = 0;
  };
  GoFrame PlaceGoValues(std::span<const GoAbiType> args, std::span<const GoAbiType> results, bool register_abi) const;
  // Which argument slot (1-based) register `name` holds at the entry.
  std::optional<unsigned> ArgumentIn(std::string_view name) const;
  // The slots of each parameter, in order.
  std::vector<ParamPlace> PlaceParams(std::span<const ParamClass> params) const;

  // A marker argument as <sys/sdt.h> writes it into the note ("[-]SIZE@OP").
  // An error says what the operand is that fetchargs cannot read.
  Result<SdtOperand> ParseSdtArgument(std::string_view text) const;

  // The kernel: the sections between __NAME_start and __NAME_end it never
  // probes (its kprobe blacklist by section), and how far after a
  // function's symbol ftrace's call site (__mcount_loc) may lie in a
  // function it traces ([min, max) bytes from the symbol).
  std::span<const std::string_view> no_probe_sections() const;
  std::pair<int64_t, int64_t> ftrace_site_window() const;
  // How many bytes of NOPs the compiler may put at a function's symbol
  // before the code its DWARF describes (ftrace's patchable entry on arm64,
  // -fpatchable-function-entry=2: the DWARF's low_pc is 8 bytes after the
  // symbol). A return probe belongs at the symbol itself.
  uint64_t patchable_entry() const;
  // What a call pushes on the stack and its return pops (x86-64: the
  // return address, 8 bytes; arm64: nothing, it is in the link register).
  // A return probe, which runs once the function has returned (a kretprobe
  // or uretprobe trampoline), sees the stack pointer of the call's entry
  // plus this: the kernel's rethook sets regs->sp so
  // (arch/x86/kernel/rethook.c, kprobes/core.c before 5.19), and
  // uretprobes return to their trampoline by the function's own return.
  // trace pairs a return with its call's entry by it.
  uint64_t return_address_bytes() const;
  // Where the instruction at the start of `code` (at `address`) jumps to,
  // when it is an unconditional direct jump (x86-64's jmp rel8 and jmp
  // rel32, arm64's b): the place an inlined copy's code is entered from
  // its DW_AT_entry_pc (dwarf_module.cc, EntryAddress). Nothing for any
  // other instruction, or too few bytes.
  std::optional<uint64_t> DirectJumpTarget(std::string_view code, uint64_t address) const;
  // The registers a probe captures for unwinding its user stack through
  // CFI (kernel names and DWARF numbers): the stack pointer, the program
  // counter, the frame pointer, the link register where there is one.
  struct UnwindRegister {
    std::string_view name;
    unsigned dwarf;
  };
  std::span<const UnwindRegister> unwind_registers() const;
  unsigned pc_dwarf() const;  // the program counter's DWARF number (x86-64's return address column, 16)
  unsigned sp_dwarf() const;
  // Its R_*_RELATIVE relocation type: a relocatable kernel image (arm64's)
  // keeps the values of its tables (__mcount_loc, _kprobe_blacklist) as the
  // addends of such relocations, not in the words themselves.
  uint32_t relative_relocation() const;
  // The symbol a kernel target counts from when no function's name is
  // unique enough ("_text+OFF"): one that /proc/kallsyms has on every
  // kernel of the architecture, and that KASLR moves with the code.
  std::string_view kernel_text_symbol() const;

  bool operator==(const Arch& other) const { return spec_ == other.spec_; }

 private:
  const ArchSpec* spec_;
};

// The arguments of a USDT note ("-4@x0 -8@[sp, 8] 8@%rdi"), split at the
// blanks between them: not those inside an operand's brackets (arm64's
// "[sp, 8]"). The same for every architecture.
std::vector<std::string> SplitSdtArguments(std::string_view args);

// The architectures kprobectl knows, in the order --version lists them.
std::span<const Arch> Architectures();
const Arch& X86_64Arch();
const Arch& Aarch64Arch();

// The architecture of an ELF file of machine `machine` (and 64-bit
// `elf64`), or an error naming its machine and the ones supported. `what`
// names the file in the message ("'./app' is ...").
Result<const Arch*> ArchOfElf(uint16_t machine, bool elf64, const std::string& what);
// The running kernel's, from `uname -m` ("x86_64", "aarch64").
Result<const Arch*> ArchOfUname(std::string_view machine);

}  // namespace kprobectl
