// SPDX-License-Identifier: GPL-2.0-or-later
//
// A variable split over several places (DW_OP_piece, DW_OP_bit_piece): gcc
// writes such a location for a struct passed by value in two registers
// (Linux 6.1's do_tcp_setsockopt: sockptr_t optval is RCX for its first 8
// bytes and R8 for the next 8) and for a struct whose members it keeps
// apart (some in registers, some in stack slots, some nowhere). In: the
// location expression. Out: the pieces, each a place of its own, and, for
// the bits of one member, the piece that holds them all.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dwarf_location.h"

namespace kprobectl::dwarf {

struct Piece {
  uint64_t bits = 0;  // its size
  enum Kind {
    kPlace,         // in `place`
    kOptimizedOut,  // nowhere: an empty piece
    kUnreadable,    // somewhere the kernel cannot read: `why`
  } kind = kOptimizedOut;
  Place place;
  // Where the piece begins in the value of a register (DW_OP_bit_piece's
  // offset, or gcc's DW_OP_bregN 0, DW_OP_lit16, DW_OP_shr for the upper
  // bits), or, for memory, in bits past the place's address.
  uint64_t skip = 0;
  // A register's part (gcc's DW_OP_shr, DW_OP_and of low bits): how many of
  // its bits from `skip` the piece holds; the piece's bits past them are
  // zeros. 0: a plain register, memory or a constant.
  uint64_t zeros_after = 0;
  std::string why;
};

struct Pieces {
  std::vector<Piece> list;  // in the order of the variable's bits
  std::string of;           // the variable, "'optval'", for messages
  uint64_t size = 0;        // the variable's size in bytes
};

// The pieces of a location expression that has DW_OP_piece or
// DW_OP_bit_piece, as a place of kind kPieces at offset 0; optimized out
// when no piece is anywhere.
Result<Place> PiecesPlace(DwarfInfo& info, Dwarf_Attribute* attr, const Dwarf_Op* ops, size_t len,
                          const LocationContext& context);

// The bits [start, start + size) of a variable in pieces (bit 0 is the
// first bit of its first byte): the place of the piece that holds them all,
// and how many bits into that place's value (a register's) or memory they
// begin. Memory is returned at the byte where they begin (`skip` < 8), a
// constant as the constant they make (`skip` 0). What `what` names lies
// across pieces, or in a piece that is optimized out or unreadable: an
// error saying which.
struct PieceBits {
  Place place;
  uint64_t skip = 0;
  uint64_t width = 0;  // the bits to read: `size`, or fewer where the rest are known zeros
};
Result<PieceBits> PieceAt(const Pieces& pieces, uint64_t start, uint64_t size, const std::string& what);

// "bytes 0-7 in one place, 8-15 in another" (", 16-23 optimized out"), for messages.
std::string DescribePieces(const Pieces& pieces);

// The kernel's bitfield type for `width` bits that begin `skip` bits into a
// register (b<width>@<skip>/<container>, the smallest container that holds
// them), or an error when they do not fit in 64 bits.
Result<FetchType> RegisterBits(uint64_t width, uint64_t skip, const std::string& what);

}  // namespace kprobectl::dwarf
