// SPDX-License-Identifier: GPL-2.0-or-later
//
// Where an object is at one address: a value (in a register, a constant,
// or a register plus a pending offset), memory at a fetched value plus an
// offset, or pieces of it in several such places (DW_OP_piece). See
// dwarf_location.cc for which DWARF expressions map here, dwarf_pieces.cc
// for the pieces.
#pragma once

#include <elfutils/libdw.h>

#include <memory>
#include <string>

#include "kprobectl/debuginfo.h"
#include "kprobectl/result.h"

namespace kprobectl::dwarf {

class DwarfInfo;
struct Pieces;

struct Place {
  VariableFetch base;  // the value v (root, then derefs)
  enum Kind {
    kValue,   // the object's value is v + offset (offset 0 unless it is a pointer)
    kMemory,  // the object is in memory at v + offset
    kPieces,  // the object is `offset` bytes into a variable split over `pieces`
  } kind = kValue;
  int64_t offset = 0;
  std::shared_ptr<const Pieces> pieces;  // kPieces
};

struct LocationContext {
  std::string what;                       // "variable 'x'", for messages
  uint64_t address = 0;                   // the probe address
  Dwarf_Die* frame = nullptr;             // the out-of-line function whose code holds the address
  bool function_entry = false;            // the address is `frame`'s first instruction
  Dwarf_Attribute* frame_base = nullptr;  // `frame`'s DW_AT_frame_base
  uint64_t size = 0;                      // the object's size in bytes (for DW_OP_piece)
};

// A location expression without DW_OP_piece (or with one piece that holds
// the whole object) as a place.
Result<Place> SinglePlace(DwarfInfo& info, Dwarf_Attribute* attr, const Dwarf_Op* ops, size_t len,
                          const LocationContext& context);

Result<Place> LocationToPlace(DwarfInfo& info, Dwarf_Attribute* attr, const Dwarf_Op* ops, size_t len,
                              const LocationContext& context);
// The object's value as a fetch.
Result<VariableFetch> ReadPlace(const Place& place, const std::string& what);
// What a pointer at `pointer` points to, plus `offset` bytes.
Result<Place> Pointee(const Place& pointer, int64_t offset, const std::string& what);

}  // namespace kprobectl::dwarf
