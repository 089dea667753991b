// SPDX-License-Identifier: GPL-2.0-or-later
//
// The -L range grammar, as perf's parse_line_range_desc() reads it: the
// lines after the first ':' first, then the name: FUNC@SRC when it has an
// '@', a file when it has a '/' or a '.', else a function, which must look
// like one (a C identifier, or a C++ name).
#include <cctype>

#include "kprobectl/cxx_names.h"
#include "kprobectl/line_range.h"
#include "kprobectl/strings.h"

namespace kprobectl {

namespace {

constexpr uint64_t kMaxLine = 0x7fffffff;  // DWARF consumers keep lines in an int
constexpr std::string_view kRangeHint =
    "a line range is FUNC[@SRC][:START[+COUNT|-END]] or SRC[:START[+COUNT|-END]] (lines of FUNC count from its "
    "declaration)";

class RangeParser {
 public:
  explicit RangeParser(std::string_view text) : text_(text) {}

  Result<LineRange> Parse() {
    LineRange range;
    size_t colon = FindColon();
    KP_TRY_VOID(ParseName(colon, range));
    if (colon == text_.size()) {
      if (range.function.empty()) range.start = 1;
      return range;
    }
    return ParseLines(colon + 1, range);
  }

 private:
  // The ':' before the lines: not a C++ scope's "::", not inside brackets,
  // not escaped.
  size_t FindColon() const {
    int depth = 0;
    for (size_t i = 0; i < text_.size(); ++i) {
      char c = text_[i];
      if (c == '\\') {
        ++i;
      } else if (c == '(' || c == '<') {
        ++depth;
      } else if ((c == ')' || c == '>') && depth > 0) {
        --depth;
      } else if (c == ':' && depth == 0) {
        if (i + 1 < text_.size() && text_[i + 1] == ':')
          ++i;
        else
          return i;
      }
    }
    return text_.size();
  }

  // The first unescaped `c` outside brackets in [from, to), or `to`.
  size_t Find(char c, size_t from, size_t to) const {
    int depth = 0;
    for (size_t i = from; i < to; ++i) {
      if (text_[i] == '\\') {
        ++i;
        continue;
      }
      if (text_[i] == '(' || text_[i] == '<') ++depth;
      if ((text_[i] == ')' || text_[i] == '>') && depth > 0) --depth;
      if (text_[i] == c && depth == 0) return i;
    }
    return to;
  }

  std::string Unescape(size_t from, size_t to) const { return kprobectl::Unescape(text_.substr(from, to - from)); }

  Result<void> ParseName(size_t end, LineRange& range) {
    if (end == 0) return Error(0, "expected a function or a source file");
    if (size_t semi = Find(';', 0, end); semi < end)
      return Error(semi, "a line range takes no ;PATTERN", "patterns are for probe points: FUNC;PATTERN, SRC;PATTERN");
    if (size_t at = Find('@', 0, end); at < end) {
      if (at + 1 == end) return Error(at + 1, "expected a source file or '*' after '@'");
      std::string file = Unescape(at + 1, end);
      if (file != "*") range.file = file;
      if (at == 0) {
        if (range.file.empty()) return Error(0, "'@*' alone names nothing: give a function before it");
        return {};
      }
      return ParseFunction(0, at, range);
    }
    for (size_t i = 0; i < end; ++i) {
      if (text_[i] == '\\') {
        ++i;
      } else if (text_[i] == '/' || text_[i] == '.') {
        range.file = Unescape(0, end);
        return {};
      }
    }
    return ParseFunction(0, end, range);
  }

  Result<void> ParseFunction(size_t from, size_t to, LineRange& range) {
    std::string name = Unescape(from, to);
    // A name with '\' escapes is as meant (perf's probe points allow them).
    bool escaped = text_.substr(from, to - from).find('\\') != std::string_view::npos;
    if (escaped || IsIdentifier(name) || IsCxxName(name)) {
      range.function = name;
      return {};
    }
    size_t bad = from;
    while (bad < to && IsIdentChar(text_[bad]) &&
           !(bad == from && std::isdigit(static_cast<unsigned char>(text_[bad]))))
      ++bad;
    return Error(bad, "'" + name + "' is not a function name");
  }

  // Digits at `at`; nullopt (and `at` unmoved) when there are none.
  Result<std::optional<uint64_t>> Number(size_t& at) {
    size_t start = at;
    uint64_t value = 0;
    while (at < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at]))) {
      value = value * 10 + static_cast<uint64_t>(text_[at] - '0');
      if (value > kMaxLine) return Error(start, "line number out of range (at most 2147483647)");
      ++at;
    }
    if (at == start) return std::optional<uint64_t>();
    return std::optional<uint64_t>(value);
  }

  Result<LineRange> ParseLines(size_t at, LineRange range) {
    auto start = KP_TRY(Number(at));
    if (!start) return Error(at, "expected a line number after ':'");
    range.start = *start;
    if (at < text_.size() && (text_[at] == '+' || text_[at] == '-')) {
      char op = text_[at++];
      size_t number_at = at;
      auto n = KP_TRY(Number(at));
      if (!n) return Error(at, op == '+' ? "expected a number of lines after '+'" : "expected a line number after '-'");
      if (op == '+') {
        if (*n == 0) return Error(number_at, "a range of 0 lines shows nothing: +COUNT counts lines from START");
        range.end = range.start + *n - 1;
      } else {
        if (*n < range.start)
          return Error(number_at, "the range ends (line " + std::to_string(*n) + ") before it starts (line " +
                                      std::to_string(range.start) + ")");
        range.end = n;
      }
    }
    if (at < text_.size())
      return Error(
          at, "unexpected '" + std::string(text_.substr(at)) + "' after the line" + (range.end ? " range" : " number"));
    return range;
  }

  std::unexpected<kprobectl::Error> Error(size_t pos, std::string what, std::string hint = std::string(kRangeHint)) {
    return std::unexpected(kprobectl::Error{CaretMessage("invalid line range: " + what, text_, pos), std::move(hint)});
  }

  std::string_view text_;
};

}  // namespace

Result<LineRange> ParseLineRange(std::string_view text) { return RangeParser(text).Parse(); }

}  // namespace kprobectl
