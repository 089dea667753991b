// SPDX-License-Identifier: GPL-2.0-or-later
//
// The layouts, from Go's src/debug/gosym/pclntab.go and runtime/symtab.go:
// a header of the magic (0xfffffffb Go 1.2, 0xfffffffa 1.16, 0xfffffff0
// 1.18, 0xfffffff1 1.20), two zero bytes, the pc quantum and the pointer
// size, then pointer-sized words; the function table, nfunc pairs of (entry
// pc, offset of its _func) and one more entry pc (the end of the last), the
// pairs of 4-byte words relative to the text start since 1.18, of pointers
// before; each _func begins with its entry (4 bytes since 1.18, a pointer
// before), its name's offset and then args, 4 bytes each.
#include "go_pclntab.h"

#include <cstring>

namespace kprobectl {

namespace {

struct Table {
  std::string_view bytes;
  bool ok = true;

  uint64_t Word(uint64_t at, unsigned size) {
    if (!ok || at > bytes.size() || size > bytes.size() - at) {
      ok = false;
      return 0;
    }
    uint64_t v = 0;
    std::memcpy(&v, bytes.data() + at, size);  // little-endian file and host
    return v;
  }
};

}  // namespace

std::optional<uint32_t> GoArgumentAreaSize(std::string_view pclntab, uint64_t text_start, uint64_t pc) {
  Table t{pclntab};
  const uint64_t magic = t.Word(0, 4);
  const uint64_t ptr = t.Word(7, 1);
  if (!t.ok || t.Word(4, 2) != 0 || (ptr != 4 && ptr != 8)) return std::nullopt;
  const auto word = [&](unsigned n) { return t.Word(8 + n * ptr, static_cast<unsigned>(ptr)); };
  uint64_t nfunc = word(0), functab = 0, funcdata = 0;
  unsigned field = static_cast<unsigned>(ptr);  // a function table entry's words
  bool relative = false;                        // entries relative to the text start
  switch (magic) {
    case 0xfffffff0:
    case 0xfffffff1:
      functab = funcdata = word(7);
      field = 4;
      relative = true;
      break;
    case 0xfffffffa:
      functab = funcdata = word(6);
      break;
    case 0xfffffffb:
      functab = 8 + ptr;
      break;
    default:
      return std::nullopt;
  }
  if (!t.ok || nfunc == 0 || nfunc > pclntab.size()) return std::nullopt;
  const auto entry = [&](uint64_t i) { return t.Word(functab + 2 * i * field, field) + (relative ? text_start : 0); };
  if (pc < entry(0) || pc >= entry(nfunc) || !t.ok) return std::nullopt;
  // The last function whose entry is at or below pc.
  uint64_t lo = 0, hi = nfunc;
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    (entry(mid) <= pc ? lo : hi) = mid;
  }
  const uint64_t func = funcdata + t.Word(functab + (2 * lo + 1) * field, field);
  const uint64_t args = t.Word(func + field + 4, 4);
  if (!t.ok) return std::nullopt;
  return static_cast<uint32_t>(args);
}

}  // namespace kprobectl
