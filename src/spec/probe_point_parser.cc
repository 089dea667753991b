// SPDX-License-Identifier: GPL-2.0-or-later
//
// The probe point grammar follows perf's parse_perf_probe_point(), including
// its rule for telling a file from a function: the head is a source file when
// the point has no '+', '@' or '%', has a ':' or ';', and the head has a '.'.
// '\' escapes any of "=@+:;" inside names.
#include <cctype>
#include <optional>

#include "kprobectl/probe_spec.h"
#include "kprobectl/strings.h"

namespace kprobectl {

namespace {

// Line numbers are ints in DWARF consumers and in our index; an offset
// inside one function never needs more than 31 bits.
constexpr uint64_t kMaxLine = 0x7fffffff;
constexpr uint64_t kMaxOffset = 0x7fffffff;

constexpr std::string_view kPointHint =
    "a probe point is [[GROUP:]EVENT=]FUNC[@SRC][:LINE|+OFFSET|%return|;PATTERN], "
    "SRC:LINE, SRC;PATTERN, 0xADDRESS, [sdt_]PROVIDER:NAME (a USDT marker), tp:TRACEPOINT or ev:SYSTEM:EVENT";

// After "operator" at the start of a C++ scope, past its symbol
// ("operator<<=", "operator()", "operator[]"); else `i` itself.
size_t SkipOperator(std::string_view text, size_t i, size_t from) {
  if (text.substr(i, 8) != "operator" || (i > from && text[i - 1] != ':')) return i;
  size_t j = i + 8;
  if (text.substr(j, 2) == "()") return j + 2;
  while (j < text.size() && std::string_view("<>=!+-*/%^&|~[],").find(text[j]) != std::string_view::npos) ++j;
  return j;
}

class PointParser {
 public:
  PointParser(std::string_view text, size_t begin, size_t end) : text_(text), begin_(begin), end_(end) {}

  Result<ProbePoint> Parse(std::string* group, std::string* event) {
    ProbePoint point;
    point.pos = begin_;
    size_t start = begin_;
    if (size_t eq = FindUnescaped(start, ";=@+%"); eq < end_ && text_[eq] == '=') {
      KP_TRY_VOID(ParseEventName(start, eq, group, event));
      start = eq + 1;
    }
    if (start == end_) return SyntaxError(start, "expected a function, a source file or an address");
    if (text_.substr(start, end_ - start).starts_with("tp:")) return ParseTracepoint(start + 3, point);
    if (text_.substr(start, end_ - start).starts_with("ev:")) return ParseEvent(start + 3, point);
    if (auto marker = ParseMarker(start, point)) return *marker;

    // "NAME": a function named verbatim, whatever it holds (perf's quoted
    // names, for Go's "net/http.(*Server).Serve" or Rust's "<T as Trait>::f").
    if (text_[start] == '"') return ParseQuoted(start, point);
    bool file_spec = false;
    if (FindUnescaped(start, "+@%") == end_) {
      size_t sep = FindUnescaped(start, ";:");
      if (sep < end_ && text_.substr(start, sep - start).find('.') != std::string_view::npos) file_spec = true;
    }
    size_t sep = FindSeparator(start, ";:+@%");
    std::string head = Unescape(start, sep);
    if (file_spec) {
      point.file = head;
    } else if (head.starts_with("0x") || head.starts_with("0X")) {
      auto address = ParseUnsigned(head);
      if (!address) return SyntaxError(start, "invalid address '" + head + "'", "write it in hex, e.g. 0x1139");
      point.address = address;
    } else {
      if (head.empty()) return SyntaxError(start, "expected a function name");
      bool cxx_brackets = head.find_first_of("(<") != std::string::npos;  // "max<int>(int, long)"
      for (size_t i = start; i < sep && !cxx_brackets; ++i)
        if (std::isspace(static_cast<unsigned char>(text_[i])))
          return SyntaxError(i, "unexpected blank in the function name");
      point.function = head;
    }

    return ParseAfterHead(sep, point);
  }

 private:
  Result<ProbePoint> ParseQuoted(size_t start, ProbePoint point) {
    std::string name;
    size_t i = start + 1;
    for (; i < end_ && text_[i] != '"'; ++i) {
      if (text_[i] == '\\' && i + 1 < end_ && text_[i + 1] == '"') ++i;
      name += text_[i];
    }
    if (i == end_) return SyntaxError(start, "a quoted function name needs its closing '\"'");
    if (name.empty()) return SyntaxError(start, "expected a function name inside the quotes");
    size_t sep = i + 1;
    if (sep < end_ && std::string_view(";:+@%").find(text_[sep]) == std::string_view::npos)
      return SyntaxError(sep, "expected ':', '+', '@', '%' or ';' after the quoted function name");
    point.function = std::move(name);
    return ParseAfterHead(sep, point);
  }

  // What follows the function or file: :LINE, +OFFSET, @SRC, %return, ;PATTERN.
  Result<ProbePoint> ParseAfterHead(size_t sep, ProbePoint point) {
    while (sep < end_) {
      char kind = text_[sep];
      size_t part = sep + 1;
      if (kind == ';') {
        if (part == end_) return SyntaxError(part, "expected a pattern after ';'");
        point.lazy_pattern = std::string(text_.substr(part, end_ - part));
        break;
      }
      // "sym@@VER" (the default version): the second '@' belongs to the version.
      size_t next = FindUnescaped(kind == '@' && part < end_ && text_[part] == '@' ? part + 1 : part, ";:+@%");
      std::string_view raw = text_.substr(part, next - part);
      switch (kind) {
        case ':': {
          if (point.line) return SyntaxError(sep, "a probe point takes one line number");
          auto line = ParseUnsigned(raw);
          if (!line || raw.starts_with("0x")) return SyntaxError(part, "expected a line number after ':'");
          if (*line > kMaxLine) return SyntaxError(part, "line number out of range (at most 2147483647)");
          point.line = line;
          break;
        }
        case '+': {
          if (point.offset) return SyntaxError(sep, "a probe point takes one offset");
          auto offset = ParseUnsigned(raw);
          if (!offset) return SyntaxError(part, "expected a byte offset after '+' (decimal or 0x hex)");
          if (*offset > kMaxOffset) return SyntaxError(part, "offset out of range (at most 0x7fffffff)");
          point.offset = offset;
          break;
        }
        case '@': {
          std::string value = Unescape(part, next);
          if (value.empty()) return SyntaxError(part, "expected a source file, '*' or a symbol version after '@'");
          if (value == "*") {
            point.any_file = true;
          } else if (value[0] == '@' || LooksLikeVersion(value)) {
            if (!point.version.empty()) return SyntaxError(sep, "a symbol takes one version");
            point.version = value;
          } else {
            if (!point.file.empty()) return SyntaxError(sep, "a probe point takes one source file (SRC@SRC)");
            point.file = value;
          }
          break;
        }
        case '%': {
          if (raw != "return")
            return SyntaxError(part, "unknown probe place '%" + std::string(raw) + "'",
                               "the only place is %return, for a return probe");
          point.retprobe = true;
          break;
        }
      }
      sep = next;
    }
    KP_TRY_VOID(CheckCombination(point));
    return point;
  }

  static bool LooksLikeVersion(std::string_view s) {
    // GLIBC_2.2.5, GLIBC_PRIVATE, CXXABI_1.3: upper case, digits, '_' and '.'.
    if (s.empty() || !std::isupper(static_cast<unsigned char>(s[0]))) return false;
    for (char c : s)
      if (!std::isupper(static_cast<unsigned char>(c)) && !std::isdigit(static_cast<unsigned char>(c)) && c != '_' &&
          c != '.')
        return false;
    return true;
  }

  Result<void> CheckCombination(const ProbePoint& p) {
    auto error = [&](std::string what) { return SyntaxError(begin_, std::move(what)); };
    if (p.lazy_pattern && p.line) return error("a lazy pattern (;PATTERN) cannot be used with a line number");
    if (p.lazy_pattern && p.offset) return error("a lazy pattern (;PATTERN) cannot be used with an offset");
    if (p.line && p.offset) return error("an offset (+OFFSET) cannot be used with a line number");
    if (p.retprobe && (p.offset || p.line || p.lazy_pattern))
      return error("%return cannot be used with an offset, a line number or a lazy pattern");
    if (p.function.empty() && !p.address && !p.file.empty() && !p.line && !p.lazy_pattern)
      return error("a source file needs a line number (SRC:LINE) or a pattern (SRC;PATTERN)");
    if (p.function.empty() && !p.address && p.offset) return error("an offset needs a function (FUNC+OFFSET)");
    if (p.address && (p.line || p.lazy_pattern || !p.file.empty() || p.any_file || !p.version.empty()))
      return error("an address takes only +OFFSET or %return");
    return {};
  }

  Result<void> ParseEventName(size_t start, size_t eq, std::string* group, std::string* event) {
    size_t colon = text_.find(':', start);
    size_t ev_start = start;
    if (colon < eq) {
      *group = std::string(text_.substr(start, colon - start));
      if (!IsIdentifier(*group))
        return SyntaxError(start, "invalid group name '" + *group + "'",
                           "group and event names are letters, digits and '_', not starting with a digit");
      ev_start = colon + 1;
    }
    *event = std::string(text_.substr(ev_start, eq - ev_start));
    if (!IsIdentifier(*event))
      return SyntaxError(ev_start, "invalid event name '" + *event + "'",
                         "group and event names are letters, digits and '_', not starting with a digit");
    return {};
  }

  size_t FindUnescaped(size_t from, std::string_view chars) const {
    for (size_t i = from; i < end_; ++i) {
      if (text_[i] == '\\') {
        ++i;
        continue;
      }
      if (chars.find(text_[i]) != std::string_view::npos) return i;
    }
    return end_;
  }

  // As FindUnescaped, over the head of a point that may name C++: a
  // scope's "::", what brackets hold and an operator's own characters are
  // part of the name ("ns::Cart::add:3" is line 3 of ns::Cart::add).
  size_t FindSeparator(size_t from, std::string_view chars) const {
    int depth = 0;
    for (size_t i = from; i < end_; ++i) {
      char c = text_[i];
      if (c == '\\') {
        ++i;
        continue;
      }
      if (size_t past = SkipOperator(text_.substr(0, end_), i, from); past != i) {
        i = past - 1;
        continue;
      }
      if (c == ':' && i + 1 < end_ && text_[i + 1] == ':') {
        ++i;
        continue;
      }
      if (c == '(' || c == '<') ++depth;
      if ((c == ')' || c == '>') && depth > 0) {
        --depth;
        continue;
      }
      if (depth == 0 && chars.find(c) != std::string_view::npos) return i;
    }
    return end_;
  }

  std::string Unescape(size_t from, size_t to) const { return kprobectl::Unescape(text_.substr(from, to - from)); }

  // tp:NAME: a tracepoint, by name (letters, digits, '_').
  Result<ProbePoint> ParseTracepoint(size_t at, ProbePoint point) {
    size_t i = at;
    while (i < end_ && IsIdentChar(text_[i])) ++i;
    if (i == at) return SyntaxError(at, "expected a tracepoint name after 'tp:'");
    if (i < end_)
      return SyntaxError(i, "a tracepoint probe is tp:NAME; nothing follows the name",
                         "e.g. tp:sched_switch prev->pid next->comm (the kernel reads them by name through BTF)");
    point.tracepoint = std::string(text_.substr(at, i - at));
    return point;
  }

  // ev:SYSTEM:EVENT (or SYSTEM.EVENT, as the kernel writes it, or
  // SYSTEM/EVENT, as tracefs paths have it): an event probe.
  Result<ProbePoint> ParseEvent(size_t at, ProbePoint point) {
    size_t i = at;
    while (i < end_ && IsIdentChar(text_[i])) ++i;
    if (i == at || i == end_ || (text_[i] != ':' && text_[i] != '.' && text_[i] != '/'))
      return SyntaxError(i, "expected ev:SYSTEM:EVENT", std::string(kEventHint));
    size_t name = i + 1;
    size_t j = name;
    while (j < end_ && IsIdentChar(text_[j])) ++j;
    if (j == name)
      return SyntaxError(name, "expected an event name after '" + std::string(1, text_[i]) + "'",
                         std::string(kEventHint));
    if (j < end_)
      return SyntaxError(j, "an event probe is ev:SYSTEM:EVENT; nothing follows the event's name",
                         std::string(kEventHint));
    point.event_system = std::string(text_.substr(at, i - at));
    point.event_name = std::string(text_.substr(name, j - name));
    return point;
  }

  static constexpr std::string_view kEventHint =
      "e.g. ev:syscalls:sys_enter_openat filename (the event's fields by name; 'kprobectl vars ev:SYSTEM:EVENT' "
      "lists them)";

  static bool IsMarkerChar(char c) { return IsIdentChar(c) || c == '*' || c == '?' || c == '[' || c == ']'; }

  // A USDT marker: %[sdt_]PROVIDER:NAME, %NAME, sdt_PROVIDER:NAME, or
  // PROVIDER:NAME when NAME does not start with a digit (FUNC:LINE does) and
  // the ':' is not a C++ scope's "::". Nullopt when the point is no marker.
  std::optional<Result<ProbePoint>> ParseMarker(size_t start, ProbePoint point) {
    bool percent = text_[start] == '%';
    size_t at = percent ? start + 1 : start;
    size_t colon = at;
    while (colon < end_ && IsMarkerChar(text_[colon])) ++colon;
    bool has_name = colon < end_ && text_[colon] == ':' && colon + 1 < end_ && text_[colon + 1] != ':';
    if (!percent) {
      if (!has_name || colon == at) return std::nullopt;
      bool sdt_prefix = text_.substr(at, colon - at).starts_with("sdt_");
      if (!sdt_prefix && std::isdigit(static_cast<unsigned char>(text_[colon + 1]))) return std::nullopt;
    }
    size_t name_start = has_name ? colon + 1 : at;
    size_t name_end = name_start;
    while (name_end < end_ && IsMarkerChar(text_[name_end])) ++name_end;
    if (name_end == name_start || (has_name && colon == at))
      return SyntaxError(at, "expected a USDT marker, [sdt_]PROVIDER:NAME, after '%'",
                         "list the markers of a binary with 'kprobectl -x BINARY funcs --sdt'");
    if (name_end < end_)
      return SyntaxError(name_end, "a USDT marker is [%][sdt_]PROVIDER:NAME; nothing follows the name",
                         "arguments come after a blank: sdt_python:function__entry arg1:string");
    point.sdt_provider = has_name ? std::string(text_.substr(at, colon - at)) : "*";
    point.sdt_name = std::string(text_.substr(name_start, name_end - name_start));
    return point;
  }

  std::unexpected<kprobectl::Error> SyntaxError(size_t pos, std::string what,
                                                std::string hint = std::string(kPointHint)) {
    return std::unexpected(kprobectl::Error{CaretMessage("invalid probe point: " + what, text_, pos), std::move(hint)});
  }

  std::string_view text_;
  size_t begin_, end_;
};

// Where a probe point that starts `text` ends, when it names C++ with
// blanks inside brackets ("shop::max<int>(int, long)", "Pair<int, long>::
// first"); nullopt when the point has no such blanks. An "operator" name's
// own brackets (operator<, operator()) do not count; ';' ends the look
// (a pattern follows), and so do unbalanced brackets.
std::optional<size_t> CxxPointEnd(std::string_view text) {
  int depth = 0;
  bool blank_inside = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == ';' || c == '"' || c == '\\') return std::nullopt;
    if (size_t past = SkipOperator(text, i, 0); past != i) {
      i = past - 1;
      continue;
    }
    if (c == '(' || c == '<') ++depth;
    if ((c == ')' || c == '>') && --depth < 0) return std::nullopt;
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (depth == 0) return blank_inside ? std::optional<size_t>(i) : std::nullopt;
      blank_inside = true;
    }
  }
  return depth == 0 && blank_inside ? std::optional<size_t>(text.size()) : std::nullopt;
}

// Where a probe point that starts `text` ends when its function is quoted
// ("\"<r::Cart as core::fmt::Debug>::fmt\"%return", EV="NAME"): at the
// first blank after the closing quote; nullopt when it is not quoted.
std::optional<size_t> QuotedPointEnd(std::string_view text) {
  size_t open = 0;
  while (open < text.size() && (IsIdentChar(text[open]) || text[open] == ':')) ++open;
  if (open < text.size() && open > 0 && text[open] == '=') ++open;
  if (open >= text.size() || text[open] != '"') return std::nullopt;
  if (open > 0 && text[open - 1] != '=') return std::nullopt;
  size_t i = open + 1;
  for (; i < text.size() && text[i] != '"'; ++i)
    if (text[i] == '\\' && i + 1 < text.size()) ++i;
  while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  return i;
}

// Splits on blanks outside double quotes (for \"immediate strings"); a C++
// point's blanks inside brackets stay in it.
std::vector<std::pair<size_t, size_t>> Tokenize(std::string_view text) {
  std::vector<std::pair<size_t, size_t>> tokens;
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (auto quoted_end = QuotedPointEnd(text.substr(i))) {
    tokens.emplace_back(i, i + *quoted_end);
    i += *quoted_end;
  } else if (auto end = CxxPointEnd(text.substr(i))) {
    tokens.emplace_back(i, i + *end);
    i += *end;
  }
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i == text.size()) break;
    size_t start = i;
    bool quoted = false;
    // An argument that starts with a cast, "((struct sk_buff *)skbaddr)->len"
    // or "len=(...", keeps the blanks inside its parentheses.
    size_t name_end = start;
    while (name_end < text.size() && IsIdentChar(text[name_end])) ++name_end;
    bool cast = !tokens.empty() && (text[start] == '(' || (name_end > start && name_end + 1 < text.size() &&
                                                           text[name_end] == '=' && text[name_end + 1] == '('));
    int depth = 0;
    for (; i < text.size(); ++i) {
      if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '"' && !quoted) {
        quoted = true;
        ++i;
      } else if (text[i] == '"' && quoted) {
        quoted = false;
      } else if (cast && !quoted && text[i] == '(') {
        ++depth;
      } else if (cast && !quoted && text[i] == ')' && depth > 0) {
        --depth;
      } else if (!quoted && depth == 0 && std::isspace(static_cast<unsigned char>(text[i]))) {
        break;
      }
    }
    tokens.emplace_back(start, i);
  }
  return tokens;
}

}  // namespace

Result<ProbePoint> ParseProbePoint(std::string_view spec_text, size_t begin, size_t end, std::string* group,
                                   std::string* event) {
  return PointParser(spec_text, begin, end).Parse(group, event);
}

Result<ProbeSpec> ParseProbeSpec(std::string_view text) {
  ProbeSpec spec;
  spec.text = std::string(text);
  auto tokens = Tokenize(spec.text);
  if (tokens.empty()) return Fail("empty probe spec", std::string(kPointHint));
  spec.point = KP_TRY(ParseProbePoint(spec.text, tokens[0].first, tokens[0].second, &spec.group, &spec.event));
  for (size_t i = 1; i < tokens.size(); ++i)
    spec.args.push_back(KP_TRY(ParseProbeArg(spec.text, tokens[i].first, tokens[i].second)));
  return spec;
}

bool NeedsDebuginfo(const ArgExpr& expr) {
  return expr.kind == ArgKind::kVariable || expr.kind == ArgKind::kVars || expr.kind == ArgKind::kParams;
}

bool NeedsDebuginfo(const ProbeSpec& spec) {
  const ProbePoint& p = spec.point;
  if (!p.tracepoint.empty()) return false;  // the kernel reads its arguments by name (BTF)
  if (!p.event_name.empty()) return false;  // the event's fields, typed by its format
  if (!p.sdt_name.empty()) return false;    // a marker's arguments are in its note
  if (p.line || p.lazy_pattern || !p.file.empty()) return true;
  for (const ProbeArg& arg : spec.args)
    if (NeedsDebuginfo(arg.expr)) return true;
  return false;
}

std::string DescribePoint(const ProbePoint& p) {
  if (!p.tracepoint.empty()) return "tp:" + p.tracepoint;
  if (!p.event_name.empty()) return "ev:" + p.event_system + ":" + p.event_name;
  if (!p.sdt_name.empty()) return "%" + p.sdt_provider + ":" + p.sdt_name;
  std::string out = p.address ? Hex(*p.address) : p.function.empty() ? p.file : p.function;
  if (!p.version.empty()) out += "@" + p.version;
  if (!p.function.empty() && !p.file.empty()) out += "@" + p.file;
  if (p.line) out += ":" + std::to_string(*p.line);
  if (p.offset) out += "+" + std::to_string(*p.offset);
  if (p.lazy_pattern) out += ";" + *p.lazy_pattern;
  if (p.retprobe) out += "%return";
  return out;
}

}  // namespace kprobectl
