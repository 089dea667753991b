// SPDX-License-Identifier: GPL-2.0-or-later
//
// The kernel's fetch-argument types (":TYPE" in kprobe_events/uprobe_events):
// u8..u64, s8..s64, x8..x64, char, string, ustring, symbol, symstr,
// b<W>@<O>/<C>, %pd, %pD, and arrays T[N]. Parsed once here, used by the
// spec parser (to reject bad types early) and by the resolver (to decide
// string wrapping and kernel feature checks).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "kprobectl/result.h"

namespace kprobectl {

struct FetchType {
  enum Base {
    kUnsigned,
    kSigned,
    kHex,
    kChar,
    kString,
    kUString,
    kSymbol,
    kSymStr,
    kBitfield,
    kDentry,
    kFile
  } base = kHex;
  unsigned bits = 64;       // integer width; for bitfields the container size
  unsigned bit_width = 0;   // bitfields
  unsigned bit_offset = 0;  // bitfields
  unsigned array_len = 0;   // 0 = not an array

  // The event records a string (symstr: the symbol an address names).
  bool IsString() const { return base == kString || base == kUString || base == kSymStr; }
  // The fetched value is where a string is, which the kernel copies;
  // symstr takes an address as a value, as symbol does ("For the symstr,
  // it doesn't need to dereference", kernel/trace/trace_probe.c).
  bool ReadsString() const { return base == kString || base == kUString; }
  bool operator==(const FetchType&) const = default;

  static FetchType Integer(Base base, unsigned bits) { return FetchType{base, bits}; }
  static FetchType Of(Base base) { return FetchType{base, base == kChar ? 8u : 64u}; }
  static FetchType Bitfield(unsigned width, unsigned offset, unsigned container) {
    return FetchType{kBitfield, container, width, offset};
  }
  FetchType ArrayOf(unsigned len) const {
    FetchType t = *this;
    t.array_len = len;
    return t;
  }
};

// Returns a message (without caret) on error; `what` names the bad part.
Result<FetchType> ParseFetchType(std::string_view text);
// The kernel's spelling: "s32", "string", "b3@4/32", "u8[16]"; the inverse
// of ParseFetchType.
std::string FormatFetchType(const FetchType& type);

// A bitfield of `bit_size` bits starting `bit_start` bits into its object
// (little-endian), declared with a type of `type_size` bytes: the kernel's
// b<width>@<offset>/<container> and the byte offset of the container, the
// declared type's size tried first, then 64 bits.
Result<std::pair<FetchType, int64_t>> BitfieldFetch(uint64_t bit_start, uint64_t bit_size, uint64_t type_size);

// The bitfield type that reads `width` bits `skip` bits into a value the
// kernel fetches whole, a register (x86-64 keeps a member k bytes into a
// register's piece in bits 8k and up): b<width>@<skip>/<container>, the
// smallest container that holds them; none past 64 bits.
std::optional<FetchType> ValueBitsFetch(uint64_t width, uint64_t skip);

}  // namespace kprobectl
