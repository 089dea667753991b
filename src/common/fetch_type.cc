// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/fetch_type.h"

#include "kprobectl/strings.h"

namespace kprobectl {

namespace {

constexpr std::string_view kTypeHint =
    "types: u8 u16 u32 u64, s8..s64, x8..x64, char, string, ustring, symbol, symstr, "
    "b<width>@<offset>/<container>, %pd, %pD, and arrays such as u8[16]";

bool ParseWidth(std::string_view s, unsigned& bits) {
  if (s == "8" || s == "16" || s == "32" || s == "64") {
    bits = static_cast<unsigned>(*ParseUnsigned(s));
    return true;
  }
  return false;
}

}  // namespace

Result<FetchType> ParseFetchType(std::string_view text) {
  FetchType type;
  std::string_view base = text;
  if (!text.empty() && text.back() == ']') {
    size_t open = text.rfind('[');
    auto len =
        open == std::string_view::npos ? std::nullopt : ParseUnsigned(text.substr(open + 1, text.size() - open - 2));
    if (!len || *len == 0 || *len > 64)
      return Fail("invalid array type '" + std::string(text) + "': the length must be a number from 1 to 64",
                  std::string(kTypeHint));
    type.array_len = static_cast<unsigned>(*len);
    base = text.substr(0, open);
  }
  auto unknown = [&] { return Fail("unknown type '" + std::string(base) + "'", std::string(kTypeHint)); };
  if (base.size() >= 2 && (base[0] == 'u' || base[0] == 's' || base[0] == 'x') &&
      ParseWidth(base.substr(1), type.bits)) {
    type.base = base[0] == 'u' ? FetchType::kUnsigned : base[0] == 's' ? FetchType::kSigned : FetchType::kHex;
  } else if (base == "char") {
    type.base = FetchType::kChar, type.bits = 8;
  } else if (base == "string") {
    type.base = FetchType::kString;
  } else if (base == "ustring") {
    type.base = FetchType::kUString;
  } else if (base == "symbol") {
    type.base = FetchType::kSymbol;
  } else if (base == "symstr") {
    type.base = FetchType::kSymStr;
  } else if (base == "%pd") {
    type.base = FetchType::kDentry;
  } else if (base == "%pD") {
    type.base = FetchType::kFile;
  } else if (!base.empty() && base[0] == 'b') {
    size_t at = base.find('@'), slash = base.find('/');
    if (at == std::string_view::npos || slash == std::string_view::npos || slash < at)
      return Fail("invalid bitfield type '" + std::string(base) + "'",
                  "write b<width>@<offset>/<container>, e.g. b4@2/32");
    auto width = ParseUnsigned(base.substr(1, at - 1));
    auto offset = ParseUnsigned(base.substr(at + 1, slash - at - 1));
    type.base = FetchType::kBitfield;
    if (!ParseWidth(base.substr(slash + 1), type.bits) || !width || !offset || *width == 0 ||
        *width + *offset > type.bits)
      return Fail("invalid bitfield type '" + std::string(base) +
                      "': width and offset must fit in a container of 8, 16, 32 or 64 bits",
                  "write b<width>@<offset>/<container>, e.g. b4@2/32");
    type.bit_width = static_cast<unsigned>(*width);
    type.bit_offset = static_cast<unsigned>(*offset);
  } else {
    return unknown();
  }
  if (type.array_len && (type.base == FetchType::kBitfield || type.base == FetchType::kSymStr ||
                         type.base == FetchType::kDentry || type.base == FetchType::kFile))
    return Fail("type '" + std::string(text) + "' cannot be an array",
                "arrays take integer, char, string or symbol elements");
  return type;
}

std::string FormatFetchType(const FetchType& type) {
  std::string out;
  switch (type.base) {
    case FetchType::kUnsigned:
      out = "u" + std::to_string(type.bits);
      break;
    case FetchType::kSigned:
      out = "s" + std::to_string(type.bits);
      break;
    case FetchType::kHex:
      out = "x" + std::to_string(type.bits);
      break;
    case FetchType::kChar:
      out = "char";
      break;
    case FetchType::kString:
      out = "string";
      break;
    case FetchType::kUString:
      out = "ustring";
      break;
    case FetchType::kSymbol:
      out = "symbol";
      break;
    case FetchType::kSymStr:
      out = "symstr";
      break;
    case FetchType::kDentry:
      out = "%pd";
      break;
    case FetchType::kFile:
      out = "%pD";
      break;
    case FetchType::kBitfield:
      out = "b" + std::to_string(type.bit_width) + "@" + std::to_string(type.bit_offset) + "/" +
            std::to_string(type.bits);
      break;
  }
  if (type.array_len) out += "[" + std::to_string(type.array_len) + "]";
  return out;
}

Result<std::pair<FetchType, int64_t>> BitfieldFetch(uint64_t bit_start, uint64_t bit_size, uint64_t type_size) {
  for (uint64_t container : {type_size * 8, uint64_t{64}}) {
    if (container != 8 && container != 16 && container != 32 && container != 64) continue;
    uint64_t container_byte = (bit_start / container) * (container / 8);
    uint64_t offset = bit_start - container_byte * 8;
    if (offset + bit_size <= container)
      return std::pair<FetchType, int64_t>{
          FetchType::Bitfield(static_cast<unsigned>(bit_size), static_cast<unsigned>(offset),
                              static_cast<unsigned>(container)),
          static_cast<int64_t>(container_byte)};
  }
  return Fail("a bitfield of " + std::to_string(bit_size) + " bits that no 64-bit container holds");
}

std::optional<FetchType> ValueBitsFetch(uint64_t width, uint64_t skip) {
  for (unsigned container : {8u, 16u, 32u, 64u})
    if (skip + width <= container)
      return FetchType::Bitfield(static_cast<unsigned>(width), static_cast<unsigned>(skip), container);
  return std::nullopt;
}

}  // namespace kprobectl
