// SPDX-License-Identifier: GPL-2.0-or-later
//
// JSON written by hand, one object at a time, for the --json outputs of
// list, funcs, vars and hist. Strings go through the trace printer's
// escaping (bytes that are not UTF-8 as \u00XX), so every output of
// kprobectl escapes the same way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kprobectl {

// "text", quoted and escaped.
std::string JsonString(std::string_view text);
// [a,b,c] of values already JSON.
std::string JsonArray(const std::vector<std::string>& values);
// ["a","b"] of strings.
std::string JsonStrings(const std::vector<std::string>& strings);

class JsonObject {
 public:
  JsonObject& String(std::string_view key, std::string_view value);
  JsonObject& Number(std::string_view key, uint64_t value);
  JsonObject& Signed(std::string_view key, int64_t value);
  JsonObject& Bool(std::string_view key, bool value);
  // A value already JSON (an object, an array, null).
  JsonObject& Raw(std::string_view key, std::string_view json);
  std::string str() const { return text_ + "}"; }

 private:
  JsonObject& Key(std::string_view key);
  std::string text_ = "{";
};

}  // namespace kprobectl
