// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/strings.h"

#include <cctype>
#include <charconv>
#include <cstdio>

namespace kprobectl {

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::vector<std::string> SplitWords(std::string_view text) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) words.emplace_back(text.substr(start, i - start));
  }
  return words;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::optional<uint64_t> ParseUnsigned(std::string_view s) {
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  if (s.empty()) return std::nullopt;
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value, base);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

std::optional<int64_t> ParseSigned(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  auto magnitude = ParseUnsigned(s);
  if (!magnitude) return std::nullopt;
  if (negative) {
    if (*magnitude > static_cast<uint64_t>(INT64_MAX) + 1) return std::nullopt;
    return static_cast<int64_t>(0 - *magnitude);
  }
  if (*magnitude > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(*magnitude);
}

std::string Hex(uint64_t value) {
  char buf[32];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, value, 16);
  (void)ec;
  return "0x" + std::string(buf, ptr);
}

std::string Unescape(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) ++i;
    out += text[i];
  }
  return out;
}

std::string CaretMessage(std::string_view what, std::string_view input, size_t pos) {
  if (pos > input.size()) pos = input.size();
  std::string out(what);
  out += "\n    ";
  out += input;
  out += "\n    ";
  out.append(pos, ' ');
  out += '^';
  return out;
}

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
std::string IdentifierOf(std::string_view path) {
  std::string out;
  for (char c : path) {
    if (IsIdentChar(c))
      out += c;
    else if (!out.empty() && out.back() != '_')
      out += '_';
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

bool IsIdentifier(std::string_view s) {
  if (s.empty() || !IsIdentStart(s[0])) return false;
  for (char c : s)
    if (!IsIdentChar(c)) return false;
  return true;
}

std::string DecimalText(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  std::string out = buf;
  if (out.find('.') != std::string::npos) {
    while (out.ends_with('0')) out.pop_back();
    if (out.ends_with('.')) out.pop_back();
  }
  return out == "-0" ? "0" : out;
}

std::string DurationText(double seconds) {
  // Three significant digits at most, in the unit that keeps the number above 1.
  auto text = [](double value, const char* unit) {
    return DecimalText(value, value >= 100 ? 0 : value >= 10 ? 1 : 2) + " " + unit;
  };
  if (seconds <= 0) return "0 s";
  if (seconds >= 1) return text(seconds, "s");
  if (seconds >= 1e-3) return text(seconds * 1e3, "ms");
  if (seconds >= 1e-6) return text(seconds * 1e6, "us");
  return text(seconds * 1e9, "ns");
}

}  // namespace kprobectl
