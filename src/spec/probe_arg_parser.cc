// SPDX-License-Identifier: GPL-2.0-or-later
//
// ARG := [NAME=]EXPR[:TYPE]. EXPR is a C-like variable access (resolved
// through DWARF later) or one of the kernel's own fetchargs, which pass
// through after validation: $argN, $stackN, $stack, $retval, $comm, %REG,
// @SYM[+-OFF], @ADDR, @+OFF, +|-[u]OFF(EXPR), \IMM.
#include <cctype>

#include "kprobectl/fetch_type.h"
#include "kprobectl/probe_spec.h"
#include "kprobectl/strings.h"

namespace kprobectl {

namespace {

constexpr std::string_view kArgHint =
    "an argument is [NAME=]EXPR[:TYPE]; EXPR is a variable (var->member.field[N]), $vars, "
    "$params, $retval, $comm, $argN, $stackN, $stack, %REG, @SYMBOL[+OFF], @ADDR, "
    "+OFF(EXPR) or \\IMMEDIATE";

class ArgParser {
 public:
  ArgParser(std::string_view text, size_t begin, size_t end) : text_(text), pos_(begin), end_(end) {}

  Result<ProbeArg> Parse() {
    ProbeArg arg;
    arg.pos = pos_;
    arg.text = std::string(text_.substr(pos_, end_ - pos_));
    size_t name_end = pos_;
    while (name_end < end_ && IsIdentChar(text_[name_end])) ++name_end;
    if (name_end > pos_ && name_end < end_ && text_[name_end] == '=' && IsIdentStart(text_[pos_])) {
      arg.name = std::string(text_.substr(pos_, name_end - pos_));
      pos_ = name_end + 1;
    } else if (pos_ < end_ && text_[pos_] == '=') {
      return SyntaxError(pos_, "expected an argument name before '='");
    }
    size_t type_colon = FindTypeColon();
    size_t expr_end = type_colon;
    if (type_colon < end_) {
      arg.type_pos = type_colon + 1;
      arg.type = std::string(text_.substr(type_colon + 1, end_ - type_colon - 1));
      if (arg.type.empty()) return SyntaxError(type_colon + 1, "expected a type after ':'");
      auto type = ParseFetchType(arg.type);
      if (!type)
        return std::unexpected(kprobectl::Error{
            CaretMessage("invalid argument: " + type.error().message, text_, type_colon + 1), type.error().hint});
    }
    size_t saved_end = end_;
    end_ = expr_end;
    arg.expr = KP_TRY(ParseExpr());
    if (pos_ != end_) return SyntaxError(pos_, "unexpected '" + std::string(1, text_[pos_]) + "'");
    if (arg.expr.kind == ArgKind::kComm && !arg.type.empty() && arg.type != "string")
      return SyntaxError(arg.type_pos, "$comm is a string; it takes no other type");
    end_ = saved_end;
    return arg;
  }

 private:
  // The last ':' outside quotes, brackets and parentheses starts the type.
  size_t FindTypeColon() const {
    size_t found = end_;
    int depth = 0;
    bool quoted = false;
    for (size_t i = pos_; i < end_; ++i) {
      char c = text_[i];
      if (quoted) {
        if (c == '"') quoted = false;
        continue;
      }
      if (c == '"')
        quoted = true;
      else if (c == '(' || c == '[')
        ++depth;
      else if (c == ')' || c == ']')
        --depth;
      else if (c == ':' && depth == 0)
        found = i;
    }
    return found;
  }

  Result<ArgExpr> ParseExpr() {
    ArgExpr expr;
    expr.pos = pos_;
    if (pos_ == end_) return SyntaxError(pos_, "expected an expression");
    char c = text_[pos_];
    if (c == '$') return ParseSpecial();
    if (c == '%') {
      ++pos_;
      std::string reg = Ident();
      if (reg.empty()) return SyntaxError(pos_, "expected a register name after '%'");
      expr.kind = ArgKind::kRegister;
      expr.name = reg;
      return expr;
    }
    if (c == '@') return ParseMemory();
    if (c == '+' || c == '-') return ParseDeref();
    if (c == '\\') {
      ++pos_;
      return ParseImmediate(expr);
    }
    if (IsIdentStart(c)) return ParseVariable();
    // Go names its unnamed results ~r0, ~r1... (as its DWARF and delve do).
    if (c == '~' && pos_ + 1 < end_ && IsIdentStart(text_[pos_ + 1])) {
      ++pos_;
      ArgExpr result = KP_TRY(ParseVariable());
      result.name.insert(0, "~");
      --result.pos;
      return result;
    }
    if (c == '(') return ParseCast();
    return SyntaxError(pos_, "expected a variable, $special, %register, @symbol, +OFFSET(...) or \\immediate");
  }

  Result<ArgExpr> ParseSpecial() {
    ArgExpr expr;
    expr.pos = pos_;
    ++pos_;
    std::string word = Ident();
    auto numbered = [&](std::string_view prefix, ArgKind kind, uint64_t min) -> Result<ArgExpr> {
      auto n = ParseUnsigned(std::string_view(word).substr(prefix.size()));
      // The kernel's bound for both (PARAM_MAX_STACK: a 16 KiB stack in words).
      if (!n || *n < min || *n > kMaxParam || word.find('x') != std::string::npos)
        return SyntaxError(expr.pos, "invalid '$" + word + "': expected $" + std::string(prefix) + "N with " +
                                         std::to_string(min) + " <= N <= " + std::to_string(kMaxParam));
      expr.kind = kind;
      expr.number = *n;
      return expr;
    };
    if (word == "vars")
      expr.kind = ArgKind::kVars;
    else if (word == "params")
      expr.kind = ArgKind::kParams;
    else if (word == "retval")
      expr.kind = ArgKind::kRetval;
    else if (word == "comm")
      expr.kind = ArgKind::kComm;
    else if (word == "stack")
      expr.kind = ArgKind::kStack;
    else if (word.starts_with("arg") && word.size() > 3)
      return numbered("arg", ArgKind::kArg, 1);
    else if (word.starts_with("stack") && word.size() > 5)
      return numbered("stack", ArgKind::kStackN, 0);
    else
      return SyntaxError(expr.pos, "unknown special variable '$" + word + "'",
                         "special variables are $vars, $params, $retval, $comm, $argN, $stackN and $stack");
    return expr;
  }

  Result<ArgExpr> ParseMemory() {
    ArgExpr expr;
    expr.pos = pos_;
    ++pos_;
    if (pos_ < end_ && text_[pos_] == '+') {  // @+OFF: uprobe file-relative address
      ++pos_;
      auto n = Number();
      if (!n) return SyntaxError(pos_, "expected a file offset after '@+'");
      expr.kind = ArgKind::kAddress;
      expr.file_relative = true;
      expr.number = *n;
      return expr;
    }
    if (pos_ < end_ && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      auto n = Number();
      if (!n) return SyntaxError(expr.pos + 1, "expected an address after '@'");
      expr.kind = ArgKind::kAddress;
      expr.number = *n;
      return expr;
    }
    size_t start = pos_;
    while (pos_ < end_ && (IsIdentChar(text_[pos_]) || text_[pos_] == '.')) ++pos_;
    if (pos_ == start) return SyntaxError(pos_, "expected a symbol or an address after '@'");
    expr.kind = ArgKind::kSymbol;
    expr.name = std::string(text_.substr(start, pos_ - start));
    if (pos_ < end_ && (text_[pos_] == '+' || text_[pos_] == '-')) {
      bool negative = text_[pos_] == '-';
      ++pos_;
      expr.offset = KP_TRY(Signed(negative, pos_, "an offset after the symbol"));
    }
    return expr;
  }

  Result<ArgExpr> ParseDeref() {
    size_t start = pos_;
    bool negative = text_[pos_] == '-';
    ++pos_;
    bool user = false;
    if (pos_ < end_ && text_[pos_] == 'u') {
      user = true;
      ++pos_;
    }
    int64_t offset = KP_TRY(Signed(negative, pos_, "an offset in +OFFSET(EXPR)"));
    if (pos_ >= end_ || text_[pos_] != '(') return SyntaxError(pos_, "expected '(' after the offset");
    ++pos_;
    // The kernel runs at most 16 fetch operations per argument; bounding
    // the nesting here also bounds this parser's recursion.
    if (++depth_ > kMaxDerefs)
      return SyntaxError(start, "more than " + std::to_string(kMaxDerefs) + " nested dereferences",
                         "the kernel fetches an argument in at most 16 steps");
    ArgExpr inner = KP_TRY(ParseExpr());
    --depth_;
    if (pos_ >= end_ || text_[pos_] != ')') return SyntaxError(pos_, "expected ')'");
    ++pos_;
    if (inner.kind == ArgKind::kVars || inner.kind == ArgKind::kParams)
      return SyntaxError(start, "$vars and $params cannot be dereferenced");
    if (inner.kind == ArgKind::kComm) return SyntaxError(start, "$comm is a string and cannot be dereferenced");
    inner.derefs.push_back({offset, user});
    return inner;
  }

  Result<ArgExpr> ParseImmediate(ArgExpr expr) {
    size_t start = pos_;
    if (pos_ < end_ && text_[pos_] == '"') {
      size_t close = text_.find('"', pos_ + 1);
      if (close == std::string_view::npos || close >= end_) return SyntaxError(pos_, "unterminated string immediate");
      pos_ = close + 1;
    } else {
      if (pos_ < end_ && text_[pos_] == '-') ++pos_;
      if (!Number()) return SyntaxError(start, "expected a number or \"string\" after '\\'");
    }
    expr.kind = ArgKind::kImmediate;
    expr.name = std::string(text_.substr(start, pos_ - start));
    return expr;
  }

  // C's cast, for an event probe's field that holds a pointer its format
  // does not type: ((TYPE *)FIELD)->member..., or (TYPE *)FIELD alone. As
  // in C, "(TYPE *)FIELD->member" would cast the member, which is refused.
  Result<ArgExpr> ParseCast() {
    size_t start = pos_;
    bool wrapped = pos_ + 1 < end_ && text_[pos_ + 1] == '(';
    if (wrapped) ++pos_;
    size_t close = text_.find(')', pos_);
    if (close == std::string_view::npos || close >= end_)
      return SyntaxError(pos_, "expected ')' after the cast's type");
    std::string type(Trim(text_.substr(pos_ + 1, close - pos_ - 1)));
    if (type.empty()) return SyntaxError(pos_ + 1, "expected a type in the cast, e.g. (struct sk_buff *)");
    pos_ = close + 1;
    if (pos_ >= end_ || !IsIdentStart(text_[pos_]))
      return SyntaxError(pos_, "a cast applies to a field by name: (" + type + ")FIELD");
    ArgExpr expr;
    expr.pos = pos_;
    expr.kind = ArgKind::kVariable;
    expr.name = Ident();
    expr.cast = type;
    expr.cast_pos = start;
    if (!wrapped) {
      if (pos_ < end_ && (text_[pos_] == '.' || text_[pos_] == '[' || text_.substr(pos_, 2) == "->"))
        return SyntaxError(pos_, "as in C, a cast applies to all that follows it",
                           "write ((" + type + ")" + expr.name + ")" + std::string(text_.substr(pos_, end_ - pos_)) +
                               " for a member of what " + expr.name + " points to");
      return expr;
    }
    if (pos_ >= end_ || text_[pos_] != ')')
      return SyntaxError(pos_, "expected ')' closing the cast: ((" + type + ")" + expr.name + ")->MEMBER");
    ++pos_;
    KP_TRY_VOID(ParseAccessors(expr));
    return expr;
  }

  Result<ArgExpr> ParseVariable() {
    ArgExpr expr;
    expr.pos = pos_;
    expr.kind = ArgKind::kVariable;
    expr.name = Ident();
    KP_TRY_VOID(ParseAccessors(expr));
    return expr;
  }

  Result<void> ParseAccessors(ArgExpr& expr) {
    while (pos_ < end_) {
      ArgAccessor acc;
      acc.pos = pos_;
      if (text_.substr(pos_, 2) == "->" || text_[pos_] == '.') {
        acc.kind = text_[pos_] == '.' ? ArgAccessor::kDot : ArgAccessor::kArrow;
        pos_ += acc.kind == ArgAccessor::kDot ? 1 : 2;
        acc.member = Ident();
        if (acc.member.empty()) return SyntaxError(pos_, "expected a member name");
      } else if (text_[pos_] == '[') {
        ++pos_;
        size_t num_pos = pos_;
        bool negative = pos_ < end_ && text_[pos_] == '-';
        if (negative) ++pos_;
        acc.index = KP_TRY(Signed(negative, num_pos, "an array index"));
        if (pos_ >= end_ || text_[pos_] != ']') return SyntaxError(pos_, "expected ']'");
        ++pos_;
        acc.kind = ArgAccessor::kIndex;
      } else {
        break;
      }
      expr.accessors.push_back(std::move(acc));
    }
    return {};
  }

  std::string Ident() {
    size_t start = pos_;
    if (pos_ < end_ && IsIdentStart(text_[pos_]))
      while (pos_ < end_ && IsIdentChar(text_[pos_])) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  // A signed offset or index: its magnitude must fit an int64_t, as the
  // kernel reads offsets as a long.
  Result<int64_t> Signed(bool negative, size_t at, std::string_view what) {
    auto n = Number();
    if (!n) return SyntaxError(at, "expected " + std::string(what));
    if (*n > static_cast<uint64_t>(INT64_MAX))
      return SyntaxError(at, std::string(what) + " out of range (at most 0x7fffffffffffffff either way)");
    return negative ? -static_cast<int64_t>(*n) : static_cast<int64_t>(*n);
  }

  std::optional<uint64_t> Number() {
    size_t start = pos_;
    while (pos_ < end_ && std::isalnum(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    auto n = ParseUnsigned(text_.substr(start, pos_ - start));
    if (!n) pos_ = start;
    return n;
  }

  std::unexpected<kprobectl::Error> SyntaxError(size_t pos, std::string what,
                                                std::string hint = std::string(kArgHint)) {
    return std::unexpected(kprobectl::Error{CaretMessage("invalid argument: " + what, text_, pos), std::move(hint)});
  }

  static constexpr int kMaxDerefs = 16;
  static constexpr uint64_t kMaxParam = 2048;

  std::string_view text_;
  size_t pos_, end_;
  int depth_ = 0;
};

}  // namespace

Result<ProbeArg> ParseProbeArg(std::string_view spec_text, size_t begin, size_t end) {
  return ArgParser(spec_text, begin, end).Parse();
}

}  // namespace kprobectl
