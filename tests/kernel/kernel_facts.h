// SPDX-License-Identifier: GPL-2.0-or-later
//
// What a kernel image says of itself, read with libelf and libdw directly:
// the oracle of the tests that run kprobectl on a downloaded vmlinux. In:
// the image's path. Out: plain facts — its function symbols and what the
// kernel would refuse to probe (from the symbol table and the code's first
// bytes), its functions' instances (out-of-line code and inlined copies:
// entries, ranges, who holds them) and its line tables. kprobectl's own
// readers are what the tests check, so none of them is used here: each rule
// is the one README's "Parity with perf" states, written again from the
// DWARF standard for the simple forms only. Where the image holds a form
// a rule here does not cover, it says so rather than guess, and the test
// picks another subject or fails saying why.
#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kprobectl::test {

struct Range {
  uint64_t start = 0, end = 0;
  bool Holds(uint64_t address) const { return address >= start && address < end; }
};

struct Symbol {
  std::string name;
  uint64_t value = 0, size = 0;
  bool global = false;
};

// A place of code that runs a function: its out-of-line code, or a copy of
// it inlined into another function.
struct Instance {
  Dwarf_Off die = 0;  // the concrete DIE (subprogram or inlined_subroutine)
  bool inlined = false;
  uint64_t entry = 0;             // where a probe on the function goes
  std::vector<Range> ranges;      // its code (non-empty ranges)
  std::vector<Range> listed;      // its ranges as the DIE lists them, empty ones too
  std::string holder;             // a copy: the out-of-line function it is inlined into
  int call_line = 0;              // a copy: the line it is called from (DW_AT_call_line)
  bool called_from_decl = false;  // a copy: called from its function's declaration line
  std::string part_of_itself;     // why it is no copy of the function, or empty (see Instances)
};

// One row of a CU's line table.
struct LineRow {
  uint64_t address = 0;
  int line = 0;
  std::string file;
  bool stmt = false, end_sequence = false;
};

class KernelFacts {
 public:
  // The image at `path`; throws std::runtime_error when it cannot be read.
  explicit KernelFacts(const std::string& path);
  ~KernelFacts();
  KernelFacts(const KernelFacts&) = delete;
  KernelFacts& operator=(const KernelFacts&) = delete;

  // --- symbols -------------------------------------------------------------
  const std::vector<Symbol>& Functions() const { return functions_; }  // STT_FUNC, by address
  const Symbol* Function(std::string_view name) const;                 // the first of the name
  bool HasSymbol(std::string_view name) const;                         // of any type
  // The function symbol that holds `address`: the one that begins nearest
  // below it, a global one before a local one at the same address.
  const Symbol* FunctionAt(uint64_t address) const;
  // "SYMBOL+OFFSET", as kprobe_events takes an address; "_text+OFFSET"
  // when several function symbols have that name (kallsyms would find the
  // first); empty when no function symbol holds it.
  std::string Place(uint64_t address) const;

  // --- what the kernel refuses ---------------------------------------------
  // The name the kprobe blacklist holds `address` under: a function that
  // NOKPROBE_SYMBOL() listed (it left a _kbl_addr_FUNC variable), or a
  // section the kernel never probes (".kprobes_text"...). Empty when none.
  std::string BlacklistedAs(uint64_t address) const;
  // Whether ftrace can trace the function symbol holding `address` (its
  // code begins with a call of __fentry__, after an endbr64 with IBT), or
  // it is a part (FUNC.cold, FUNC.part.N) of such a function: kprobe_events
  // refuses the rest.
  bool Traceable(uint64_t address) const;
  // The image's bytes at an address (of a section with contents).
  std::string Bytes(uint64_t address, size_t size) const;
  // Where the unconditional direct jump at `address` goes (x86-64's jmp
  // rel8 and rel32); nothing for any other instruction.
  std::optional<uint64_t> JumpTarget(uint64_t address) const;

  // --- DWARF ---------------------------------------------------------------
  Dwarf* dwarf() const { return dwarf_; }
  Dwarf_Die Die(Dwarf_Off offset) const;
  Dwarf_Die CuOf(Dwarf_Die* die) const;
  // Top-level DW_TAG_subprogram DIEs whose name (their own, or their
  // abstract origin's) is `name`, in DIE order.
  const std::vector<Dwarf_Off>& Named(const std::string& name) const;
  // The names of top-level subprograms that begin with `prefix`.
  std::vector<std::string> NamesStartingWith(const std::string& prefix) const;
  // Every instance of the function `name` the DWARF describes, by entry
  // address: each out-of-line subprogram with code (clones too), each
  // inlined copy of it in the CUs that declare it. An inlined_subroutine
  // that stands for no call of it has `part_of_itself` set: gcc's split
  // part inlined back into the function itself ("called" from the
  // function's own declaration line, inside the function), or code gcc
  // found the same as another function's tail (called from the function's
  // declaration line by a function declared elsewhere; a macro that
  // declares caller and callee on one line, SYSCALL_DEFINE, makes real
  // calls).
  std::vector<Instance> Instances(const std::string& name) const;
  // The function or copy `die` as an instance (its holder and whether it
  // is part of itself are left out), and where a probe on it goes.
  Instance InstanceOf(Dwarf_Die* die) const;
  uint64_t EntryOf(Dwarf_Die* die) const { return InstanceOf(die).entry; }
  // The DIEs that hold `die` in the DIE tree, outermost (the CU) first.
  std::vector<Dwarf_Off> AncestorsOf(Dwarf_Die* die) const;
  // Inlined copies anywhere in the image for which `wanted(copy, holder)`
  // holds (`holder`: the out-of-line subprogram around it), in DIE order,
  // at most `limit`: how a test finds a subject with the pattern it checks
  // (a walk of every CU's scopes takes about a second).
  std::vector<Dwarf_Off> FindCopies(const std::function<bool(Dwarf_Die*, Dwarf_Die*)>& wanted, size_t limit) const;
  // The same for variables and parameters of every function and copy
  // (`holder`: the out-of-line subprogram they are in).
  std::vector<Dwarf_Off> FindVariables(const std::function<bool(Dwarf_Die*, Dwarf_Die*)>& wanted, size_t limit) const;
  // The function (its name) whose out-of-line code holds `address`.
  std::string OutOfLineAt(uint64_t address) const;
  // The concrete DIEs that hold `address`, innermost first, up to the
  // out-of-line subprogram (lexical blocks and inlined copies).
  std::vector<Dwarf_Die> ScopesAt(uint64_t address) const;
  // The source file a DIE was declared in, and its line.
  std::string DeclFile(Dwarf_Die* die) const;
  int DeclLine(Dwarf_Die* die) const;
  // Children of a scope that are variables or parameters, in DIE order.
  std::vector<Dwarf_Die> Variables(Dwarf_Die* scope, bool parameters_only) const;
  // A DIE's name, its own or its abstract origin's.
  static std::string Name(Dwarf_Die* die);
  // The DIE at the end of a chain of abstract origins.
  Dwarf_Off Origin(Dwarf_Die* die) const;
  static std::vector<Range> RangesOf(Dwarf_Die* die, bool with_empty);

  // --- lines ---------------------------------------------------------------
  const std::vector<LineRow>& Lines(Dwarf_Die* cu) const;
  // The first address of each block of is_stmt rows of `file`:`line` inside
  // `ranges`, as perf and kprobectl probe a line: a run of the line's rows
  // is one block, which a row of another line ends unless that row is a
  // marker at the next row's address (a "view", no code of its own).
  std::vector<uint64_t> LineBlocks(Dwarf_Die* cu, const std::string& file, int line,
                                   const std::vector<Range>& ranges) const;
  // The line a probe at `address` is on: among the is_stmt rows that start
  // there, the first of `own_file`, else the first; else the row in force.
  std::pair<std::string, int> LineAt(Dwarf_Die* cu, uint64_t address, const std::string& own_file) const;
  // The last line of a function declared at `file`:`decl_line` in the CU:
  // the line before the next function declared after it in that file (a
  // declaration bounds nothing); INT32_MAX when none follows.
  int LastOwnLine(Dwarf_Die* cu, const std::string& file, int decl_line) const;

 private:
  void ReadSymbols();
  void IndexFunctions();
  std::string FileName(Dwarf_Die* cu, Dwarf_Word index) const;

  int fd_ = -1;
  struct Elf* elf_ = nullptr;
  Dwarf* dwarf_ = nullptr;
  std::vector<Symbol> functions_;                              // by address
  std::map<std::string, size_t, std::less<>> function_index_;  // name -> first in functions_
  std::map<std::string, size_t, std::less<>> function_count_;  // name -> how many have it
  std::map<std::string, uint64_t, std::less<>> all_symbols_;   // name -> value
  std::map<std::string, std::vector<Dwarf_Off>, std::less<>> named_;
  mutable std::map<Dwarf_Off, std::vector<LineRow>> lines_;
};

}  // namespace kprobectl::test
