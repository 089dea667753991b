// SPDX-License-Identifier: GPL-2.0-or-later
//
// Bytes of a DWARF section read without libdw (line program headers,
// .debug_aranges, abbreviation tables, unit headers), where every offset
// and count comes from a file that may be corrupt: a read past the end
// fails the reader (ok = false, and every later read returns 0) and never
// moves it past its end. Little-endian files on a little-endian host
// (x86-64, arm64) only: their callers check the file.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <string_view>

namespace kprobectl::dwarf {

struct ByteReader {
  const unsigned char* p;
  const unsigned char* end;
  bool ok = true;

  uint64_t Left() const { return ok && p < end ? static_cast<uint64_t>(end - p) : 0; }
  bool Need(uint64_t n) {
    if (ok && p <= end && static_cast<uint64_t>(end - p) >= n) return true;
    ok = false;
    return false;
  }
  void Skip(uint64_t n) {
    if (Need(n)) p += n;
  }
  uint64_t Fixed(unsigned size) {  // size <= 8
    if (size > 8 || !Need(size)) return 0;
    uint64_t v = 0;
    std::memcpy(&v, p, size);
    p += size;
    return v;
  }
  uint64_t Uleb() {
    uint64_t v = 0;
    for (unsigned shift = 0; Need(1); shift += 7) {
      unsigned char byte = *p++;
      if (shift < 64) v |= uint64_t{byte & 0x7fu} << shift;
      if (!(byte & 0x80)) return v;
    }
    return 0;
  }
  std::string_view String() {
    const void* nul = Need(1) ? std::memchr(p, 0, static_cast<size_t>(end - p)) : nullptr;
    if (!nul) {
      ok = false;
      return {};
    }
    std::string_view s(reinterpret_cast<const char*>(p),
                       static_cast<size_t>(static_cast<const unsigned char*>(nul) - p));
    p = static_cast<const unsigned char*>(nul) + 1;
    return s;
  }
};

// Whether every declaration of the abbreviation tables in `r` is allowed:
// `allowed(tag, 0)` is asked of each declaration's tag, then
// `allowed(tag, form)` of each of its attributes' forms. With
// `one_table` the walk ends at the first table's end (a 0 code), else it
// runs over the whole section (one table per unit). False on bytes that do
// not parse.
bool AbbrevFormsAllowed(ByteReader r, bool one_table, const std::function<bool(uint64_t tag, uint64_t form)>& allowed);

}  // namespace kprobectl::dwarf
