// SPDX-License-Identifier: GPL-2.0-or-later
//
// Where an object is at one address: a value (in a register, a constant,
// or a register plus a pending offset) or memory at a fetched value plus an
// offset. See dwarf_location.cc for which DWARF expressions map here.
#pragma once

#include <elfutils/libdw.h>

#include <string>

#include "kprobectl/debuginfo.h"
#include "kprobectl/result.h"

namespace kprobectl::dwarf {

class DwarfInfo;

struct Place {
  VariableFetch base;  // the value v (root, then derefs)
  enum Kind {
    kValue,   // the object's value is v + offset (offset 0 unless it is a pointer)
    kMemory,  // the object is in memory at v + offset
  } kind = kValue;
  int64_t offset = 0;
};

struct LocationContext {
  std::string what;                       // "variable 'x'", for messages
  uint64_t address = 0;                   // the probe address
  Dwarf_Die* frame = nullptr;             // the out-of-line function whose code holds the address
  bool function_entry = false;            // the address is `frame`'s first instruction
  Dwarf_Attribute* frame_base = nullptr;  // `frame`'s DW_AT_frame_base
  uint64_t size = 0;                      // the object's size in bytes (for DW_OP_piece)
};

Result<Place> LocationToPlace(DwarfInfo& info, Dwarf_Attribute* attr, const Dwarf_Op* ops, size_t len,
                              const LocationContext& context);
// The object's value as a fetch.
Result<VariableFetch> ReadPlace(const Place& place, const std::string& what);
// What a pointer at `pointer` points to, plus `offset` bytes.
Result<Place> Pointee(const Place& pointer, int64_t offset, const std::string& what);

}  // namespace kprobectl::dwarf
