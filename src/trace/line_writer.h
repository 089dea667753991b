// SPDX-License-Identifier: GPL-2.0-or-later
//
// The printer's hot path writes through a raw pointer into room reserved
// for the whole line (std::string::resize_and_overwrite), so that no value
// pays a capacity check, a terminator write or a call per character. Each
// writer takes where to write and returns where it stopped; the caller
// reserved at least the kMax* bound of what it writes. In: numbers and
// bytes from the kernel. Out: their text, as printer.cc prints it.
//
// Why by hand: a profile of bench/trace_decode_bench (perf record, 4 kHz)
// had 19% in JSON escaping (a string append per byte), 12% in memmove and
// 16% in std::to_chars plus the append of its result; the page's decoding
// was under 5%.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace kprobectl::line {

// Bounds of what one writer writes.
inline constexpr size_t kMaxDecimal = 20;  // "-9223372036854775808", "18446744073709551615"
inline constexpr size_t kMaxHex = 18;      // "0xffffffffffffffff"
inline constexpr size_t kMaxTimestamp = 27;
// An escaped byte: text's "\xff" is 4, JSON's "\u00ff" 6; then the quotes.
inline constexpr size_t kTextEscape = 4;
inline constexpr size_t kJsonEscape = 6;
inline constexpr size_t EscapedBound(size_t bytes, bool json) { return 2 + bytes * (json ? kJsonEscape : kTextEscape); }

// A field's value: 1, 2, 4 or else 8 bytes, in the host's byte order (the
// ring buffer's).
inline uint64_t ReadUnsigned(const uint8_t* p, unsigned size) {
  switch (size) {
    case 1:
      return *p;
    case 2: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      uint64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

inline int64_t ReadSigned(const uint8_t* p, unsigned size) {
  switch (size) {
    case 1:
      return static_cast<int8_t>(*p);
    case 2: {
      int16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case 4: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

// Names and numbers are short: copied inline with overlapping moves, not
// by a call to memcpy (a call per name was 7% of the printer's time).
inline char* Write(char* p, std::string_view s) {
  const char* from = s.data();
  size_t n = s.size();
  if (n >= 8 && n <= 16) {
    std::memcpy(p, from, 8);
    std::memcpy(p + n - 8, from + n - 8, 8);
  } else if (n >= 4 && n < 8) {
    std::memcpy(p, from, 4);
    std::memcpy(p + n - 4, from + n - 4, 4);
  } else if (n < 4) {
    if (n) p[0] = from[0];
    if (n > 1) p[1] = from[1];
    if (n > 2) p[2] = from[2];
  } else {
    std::memcpy(p, from, n);
  }
  return p + n;
}

inline constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

inline unsigned DecimalDigits(uint64_t v) {
  static constexpr uint64_t kPowers[20] = {1,
                                           10,
                                           100,
                                           1000,
                                           10000,
                                           100000,
                                           1000000,
                                           10000000,
                                           100000000,
                                           1000000000,
                                           10000000000,
                                           100000000000,
                                           1000000000000,
                                           10000000000000,
                                           100000000000000,
                                           1000000000000000,
                                           10000000000000000,
                                           100000000000000000,
                                           1000000000000000000,
                                           10000000000000000000u};
  // log10 from log2 (1233/4096 ~ log10(2)), then one comparison to correct it.
  unsigned t = static_cast<unsigned>(std::bit_width(v | 1) * 1233) >> 12;
  return t + (v >= kPowers[t]) + (v == 0);
}

inline char* WriteUnsigned(char* p, uint64_t v) {
  char* end = p + DecimalDigits(v);
  char* q = end;
  // Pairs of digits from the right, in 64-bit arithmetic only while the
  // value needs it (most values are small).
  while (v > UINT32_MAX) {
    auto pair = static_cast<size_t>(v % 100) * 2;
    v /= 100;
    q -= 2;
    std::memcpy(q, kDigitPairs + pair, 2);
  }
  auto w = static_cast<uint32_t>(v);
  while (w >= 100) {
    uint32_t pair = w % 100 * 2;
    w /= 100;
    q -= 2;
    std::memcpy(q, kDigitPairs + pair, 2);
  }
  if (w >= 10) {
    std::memcpy(q - 2, kDigitPairs + w * 2, 2);
  } else {
    q[-1] = static_cast<char>('0' + w);
  }
  return end;
}

inline char* WriteSigned(char* p, int64_t v) {
  if (v >= 0) return WriteUnsigned(p, static_cast<uint64_t>(v));
  *p++ = '-';
  return WriteUnsigned(p, ~static_cast<uint64_t>(v) + 1);
}

inline char* WriteHex(char* p, uint64_t v) {
  static constexpr char kHex[] = "0123456789abcdef";
  *p++ = '0';
  *p++ = 'x';
  int digits = v ? static_cast<int>(std::bit_width(v) + 3) / 4 : 1;
  for (int i = digits - 1; i >= 0; --i, v >>= 4) p[i] = kHex[v & 15];
  return p + digits;
}

// "SECONDS.MICROSECONDS", the kernel's trace clock in ns.
inline char* WriteTimestamp(char* p, uint64_t ns) {
  p = WriteUnsigned(p, ns / 1000000000);
  *p++ = '.';
  auto micros = static_cast<unsigned>((ns / 1000) % 1000000);
  std::memcpy(p, kDigitPairs + (micros / 10000) * 2, 2);
  std::memcpy(p + 2, kDigitPairs + (micros / 100 % 100) * 2, 2);
  std::memcpy(p + 4, kDigitPairs + (micros % 100) * 2, 2);
  return p + 6;
}

// Bytes that print as themselves in both forms: printable ASCII but the
// quote and the backslash.
inline constexpr std::array<bool, 256> kPlain = [] {
  std::array<bool, 256> plain{};
  for (int c = 0x20; c < 0x7f; ++c) plain[static_cast<size_t>(c)] = c != '"' && c != '\\';
  return plain;
}();

// Length of the valid UTF-8 sequence at s[i], or 0. (Lead bytes are
// checked, continuations counted: what the printer has always passed.)
inline size_t Utf8Length(std::string_view s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
  return n;
}

// The bytes with C escapes (json false) or as a JSON string's contents
// (json true), without the quotes; at most EscapedBound() - 2 bytes.
template <bool kJson>
inline char* WriteEscaped(char* p, std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t n = bytes.size();
  for (size_t i = 0; i < n;) {
    size_t run = i;
    while (run < n && kPlain[b[run]]) ++run;
    p = Write(p, bytes.substr(i, run - i));
    if (run == n) break;
    i = run;
    unsigned char c = b[i];
    char named = c == '"' ? '"' : c == '\\' ? '\\' : c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : 0;
    if (named) {
      *p++ = '\\';
      *p++ = named;
      ++i;
      continue;
    }
    if (size_t len = c >= 0x80 ? Utf8Length(bytes, i) : 0) {
      std::memcpy(p, b + i, len);
      p += len;
      i += len;
      continue;
    }
    // Not UTF-8, or a control byte: text's \xNN; JSON's \u00NN (the byte
    // as the code point of the same value, so the JSON stays valid).
    p = kJson ? Write(p, "\\u00") : Write(p, "\\x");
    *p++ = kHex[c >> 4];
    *p++ = kHex[c & 15];
    ++i;
  }
  return p;
}

template <bool kJson>
inline char* WriteQuoted(char* p, std::string_view bytes) {
  *p++ = '"';
  p = WriteEscaped<kJson>(p, bytes);
  *p++ = '"';
  return p;
}

}  // namespace kprobectl::line
