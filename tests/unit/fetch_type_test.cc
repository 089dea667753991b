// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/fetch_type.h"

#include <catch2/catch.hpp>

using namespace kprobectl;

TEST_CASE("every kernel fetch type parses") {
  struct Row {
    const char* text;
    FetchType::Base base;
    unsigned bits, array_len;
  } rows[] = {
      {"u8", FetchType::kUnsigned, 8, 0},
      {"u16", FetchType::kUnsigned, 16, 0},
      {"u32", FetchType::kUnsigned, 32, 0},
      {"u64", FetchType::kUnsigned, 64, 0},
      {"s8", FetchType::kSigned, 8, 0},
      {"s16", FetchType::kSigned, 16, 0},
      {"s32", FetchType::kSigned, 32, 0},
      {"s64", FetchType::kSigned, 64, 0},
      {"x8", FetchType::kHex, 8, 0},
      {"x16", FetchType::kHex, 16, 0},
      {"x32", FetchType::kHex, 32, 0},
      {"x64", FetchType::kHex, 64, 0},
      {"char", FetchType::kChar, 8, 0},
      {"string", FetchType::kString, 64, 0},
      {"ustring", FetchType::kUString, 64, 0},
      {"symbol", FetchType::kSymbol, 64, 0},
      {"symstr", FetchType::kSymStr, 64, 0},
      {"%pd", FetchType::kDentry, 64, 0},
      {"%pD", FetchType::kFile, 64, 0},
      {"u8[16]", FetchType::kUnsigned, 8, 16},
      {"string[4]", FetchType::kString, 64, 4},
      {"char[8]", FetchType::kChar, 8, 8},
  };
  for (const Row& row : rows) {
    INFO(row.text);
    auto type = ParseFetchType(row.text);
    REQUIRE(type);
    CHECK(type->base == row.base);
    CHECK(type->bits == row.bits);
    CHECK(type->array_len == row.array_len);
  }
}

TEST_CASE("bitfield types carry width, offset and container") {
  auto type = ParseFetchType("b4@2/32");
  REQUIRE(type);
  CHECK(type->base == FetchType::kBitfield);
  CHECK(type->bit_width == 4);
  CHECK(type->bit_offset == 2);
  CHECK(type->bits == 32);
  CHECK(ParseFetchType("b64@0/64"));
  CHECK_FALSE(ParseFetchType("b0@0/8"));
  CHECK_FALSE(ParseFetchType("b4@6/8"));
  CHECK_FALSE(ParseFetchType("b4@2/24"));
  CHECK_FALSE(ParseFetchType("b4/2@32"));
}

TEST_CASE("types that cannot be arrays, and bad names, are refused") {
  for (const char* text : {"b4@2/32[2]", "symstr[2]", "%pd[2]", "int", "u128", "x", "u8[65]", "u8[]", "s08"}) {
    INFO(text);
    CHECK_FALSE(ParseFetchType(text));
  }
}

TEST_CASE("FormatFetchType writes what ParseFetchType reads") {
  for (const char* text :
       {"u8",     "u16",    "u32", "u64", "s8",      "s64",      "x16",    "x64",     "char",      "string", "ustring",
        "symbol", "symstr", "%pd", "%pD", "b4@2/32", "b1@63/64", "u8[16]", "char[4]", "string[2]", "x32[64]"}) {
    INFO(text);
    auto type = ParseFetchType(text);
    REQUIRE(type);
    CHECK(FormatFetchType(*type) == text);
  }
  CHECK(FormatFetchType(FetchType::Bitfield(3, 4, 32)) == "b3@4/32");
  CHECK(FormatFetchType(FetchType::Integer(FetchType::kSigned, 32).ArrayOf(4)) == "s32[4]");
  CHECK(FormatFetchType(FetchType::Of(FetchType::kChar)) == "char");
}
