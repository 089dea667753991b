// SPDX-License-Identifier: GPL-2.0-or-later
//
// Small string helpers shared by every stage: splitting, trimming, number
// parsing with strict rules, and the caret diagnostics used by every syntax error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kprobectl {

std::vector<std::string> SplitLines(std::string_view text);
std::vector<std::string> SplitWords(std::string_view text);  // on blanks
std::string_view Trim(std::string_view s);
std::string Join(const std::vector<std::string>& parts, std::string_view sep);

// Parses a whole string as an unsigned number: decimal, or hex with 0x.
// Returns nullopt on anything else (sign, trailing junk, overflow).
std::optional<uint64_t> ParseUnsigned(std::string_view s);
// As ParseUnsigned with an optional leading '+' or '-'.
std::optional<int64_t> ParseSigned(std::string_view s);

std::string Hex(uint64_t value);  // "0x1a2b"

// `value` with `decimals` digits after the point, trailing zeros (and a
// bare point) dropped, whatever the locale: "12.5", "3".
std::string DecimalText(double value, int decimals);
// A duration for a person: "1.25 s", "830 ms", "12 us", "0 s".
std::string DurationText(double seconds);

// A name as written in a probe point or a line range without its '\'
// escapes: "weird\\:name" is "weird:name" (a '\' at the end stays).
std::string Unescape(std::string_view text);

// A syntax error message that quotes the input and puts a caret under the
// offending position:
//   <what>
//     <input>
//     <spaces>^
std::string CaretMessage(std::string_view what, std::string_view input, size_t pos);

bool IsIdentStart(char c);
bool IsIdentChar(char c);
bool IsIdentifier(std::string_view s);
// A member path as one identifier, for a fetcharg name: "optval.user" is
// "optval_user", "t.v[3]" "t_v_3", "p->a" "p_a" (the kernel refuses '.').
std::string IdentifierOf(std::string_view path);

}  // namespace kprobectl
