// SPDX-License-Identifier: GPL-2.0-or-later
//
// The oracle's second half: where a variable is at an address, written as
// kprobe_events fetches it (Documentation/trace/kprobetrace.rst), from its
// DWARF location read with libdw (kernel_facts.h says why not through
// kprobectl). In: a variable's DIE, an address. Out: "%di:x64",
// "+200(+112(%di)):x64", "\0:x64", a struct in pieces member by member
// ("%r8:b1@0/8"), or that it has no location there, or that its location
// is a form this oracle does not read (then the test says so and fails,
// never guesses). The x86-64 forms only: the VM kernels are x86-64.
#pragma once

#include <elfutils/libdw.h>

#include <optional>
#include <string>
#include <vector>

namespace kprobectl::test {

struct Fetch {
  enum Kind {
    kFetched,  // `text` is the fetch, with its type: "%di:x64"
    kNone,     // no location at the address (optimized out there), or one no probe can read: `text` says which
    kUnknown,  // a form the oracle does not read: `text` is its operations
  };
  Kind kind = kNone;
  std::string text;
};

// The kprobe_events name of an x86-64 DWARF register (psABI figure 3.36):
// 0 -> "%ax", 5 -> "%di", 12 -> "%r12"; empty past 15.
std::string RegisterName(unsigned dwarf_number);

// The operations of `var`'s location that a probe at `address` sees: it
// fires before the instruction there, at the address's first view, so an
// entry of the list that starts exactly there wins, in list order, even an
// empty one (gcc's [a, a) says where a value is at view 0 of a); else the
// entry that holds the address. Nothing when none does.
std::optional<std::vector<Dwarf_Op>> LocationAt(Dwarf_Die* var, uint64_t address);
// The operations of every entry of `var`'s location list, with its range.
struct LocationEntry {
  uint64_t start = 0, end = 0;
  std::vector<Dwarf_Op> ops;
};
std::vector<LocationEntry> LocationList(Dwarf_Die* var);

// A type as C spells it, qualifiers and all: "const char*", "struct pt_regs*",
// "long unsigned int", "sockptr_t".
std::string TypeName(Dwarf_Die* type);
// A variable's type's C spelling ("void" without one).
std::string TypeNameOf(Dwarf_Die* var);
// The kernel's type for a scalar: "s64", "u8", "x64" for a pointer; empty
// for anything else.
std::string FetchTypeOf(Dwarf_Die* type);
// Through typedefs and qualifiers.
Dwarf_Die Peeled(Dwarf_Die type);

// `var` fetched whole at `address`. `frame_entry`: the address is the
// first instruction of the out-of-line function around it, where
// DW_OP_entry_value(DW_OP_regN) is that register.
Fetch FetchAt(Dwarf_Die* var, uint64_t address, bool frame_entry);

// A struct whose location is in pieces (DW_OP_piece, DW_OP_bit_piece), or
// nothing when its location at `address` is not. Each scalar member in
// declaration order (anonymous members' members in their place), with its
// path ("kernel", "is_kernel", "[1].imm") and its fetch.
struct MemberFetch {
  std::string path;
  Fetch fetch;
  bool bitfield = false;
  // What its piece is: a constant, a register, a register's bit 0
  // (DW_OP_bregN 0, DW_OP_lit1, DW_OP_and), a register shifted right
  // (DW_OP_bregN 0, DW_OP_constNu S, DW_OP_shr), or none of these.
  enum Piece { kConstant, kRegister, kRegisterBit, kRegisterShifted, kOther } piece = kOther;
  bool zero_extended = false;  // a shifted register holds fewer bits than the member: zeros follow
};
std::optional<std::vector<MemberFetch>> MembersInPieces(Dwarf_Die* var, uint64_t address);
// The pieces of `var`'s location at `address`, as "bytes 0-7 and 8-15".
std::string PiecesText(Dwarf_Die* var, uint64_t address);

}  // namespace kprobectl::test
