// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/json_object.h"

#include "kprobectl/trace_printer.h"

namespace kprobectl {

std::string JsonString(std::string_view text) {
  std::string out;
  AppendJsonString(out, text);
  return out;
}

std::string JsonArray(const std::vector<std::string>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + values[i];
  return out + "]";
}

std::string JsonStrings(const std::vector<std::string>& strings) {
  std::vector<std::string> quoted;
  for (const std::string& s : strings) quoted.push_back(JsonString(s));
  return JsonArray(quoted);
}

JsonObject& JsonObject::Key(std::string_view key) {
  if (text_.size() > 1) text_ += ',';
  AppendJsonString(text_, key);
  text_ += ':';
  return *this;
}

JsonObject& JsonObject::String(std::string_view key, std::string_view value) {
  Key(key);
  AppendJsonString(text_, value);
  return *this;
}

JsonObject& JsonObject::Number(std::string_view key, uint64_t value) {
  Key(key).text_ += std::to_string(value);
  return *this;
}

JsonObject& JsonObject::Signed(std::string_view key, int64_t value) {
  Key(key).text_ += std::to_string(value);
  return *this;
}

JsonObject& JsonObject::Bool(std::string_view key, bool value) {
  Key(key).text_ += value ? "true" : "false";
  return *this;
}

JsonObject& JsonObject::Raw(std::string_view key, std::string_view json) {
  Key(key).text_ += json;
  return *this;
}

}  // namespace kprobectl
