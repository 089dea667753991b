// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/glob.h"

#include "kprobectl/strings.h"

namespace kprobectl {

namespace {

// Matches a bracket expression at pattern[p] (just after '['). Sets `next` to
// the index after ']'. Returns false for a malformed class (then '[' is literal).
bool MatchClass(std::string_view pattern, size_t p, char c, bool& matched, size_t& next) {
  bool negate = p < pattern.size() && (pattern[p] == '!' || pattern[p] == '^');
  if (negate) ++p;
  bool found = false;
  bool first = true;
  while (p < pattern.size() && (first || pattern[p] != ']')) {
    first = false;
    char lo = pattern[p];
    if (lo == '\\' && p + 1 < pattern.size()) lo = pattern[++p];
    char hi = lo;
    if (p + 2 < pattern.size() && pattern[p + 1] == '-' && pattern[p + 2] != ']') {
      hi = pattern[p + 2];
      p += 2;
    }
    if (lo <= c && c <= hi) found = true;
    ++p;
  }
  if (p >= pattern.size()) return false;
  matched = found != negate;
  next = p + 1;
  return true;
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0;
  size_t star_p = std::string_view::npos, star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size()) {
      char pc = pattern[p];
      if (pc == '*') {
        star_p = ++p;
        star_t = t;
        continue;
      }
      if (pc == '?') {
        ++p, ++t;
        continue;
      }
      if (pc == '[') {
        bool matched = false;
        size_t next = 0;
        if (MatchClass(pattern, p + 1, text[t], matched, next)) {
          if (matched) {
            p = next, ++t;
            continue;
          }
        } else if (text[t] == '[') {
          ++p, ++t;
          continue;
        }
      } else {
        if (pc == '\\' && p + 1 < pattern.size()) pc = pattern[++p];
        if (pc == text[t]) {
          ++p, ++t;
          continue;
        }
      }
    }
    if (star_p == std::string_view::npos) return false;
    p = star_p;
    t = ++star_t;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool IsGlob(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
      continue;
    }
    if (s[i] == '*' || s[i] == '?' || s[i] == '[') return true;
  }
  return false;
}

struct GlobFilter::Node {
  enum Kind { kGlob, kNot, kAnd, kOr } kind;
  std::string glob;
  std::unique_ptr<Node> left, right;
};

namespace {

using Node = GlobFilter::Node;

// filter := term ('|' term)* ; term := factor ('&' factor)* ;
// factor := '!' factor | '(' filter ')' | glob
class FilterParser {
 public:
  FilterParser(std::string_view text, const std::function<std::string(std::string_view)>& leaf)
      : text_(text), leaf_(leaf) {}

  Result<std::unique_ptr<Node>> Parse() {
    auto node = KP_TRY(ParseOr());
    SkipBlanks();
    if (pos_ != text_.size()) return SyntaxError("expected '&', '|' or the end");
    return node;
  }

 private:
  std::unexpected<kprobectl::Error> SyntaxError(std::string_view what) {
    return std::unexpected(
        kprobectl::Error{CaretMessage("invalid filter: " + std::string(what), text_, pos_),
                         "combine globs with '!', '&', '|' and parentheses, e.g. 'vfs_* & !vfs_read'"});
  }
  void SkipBlanks() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  static std::unique_ptr<Node> Binary(Node::Kind kind, std::unique_ptr<Node> l, std::unique_ptr<Node> r) {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->left = std::move(l);
    n->right = std::move(r);
    return n;
  }
  Result<std::unique_ptr<Node>> ParseOr() {
    auto node = KP_TRY(ParseAnd());
    for (SkipBlanks(); pos_ < text_.size() && text_[pos_] == '|'; SkipBlanks()) {
      ++pos_;
      node = Binary(Node::kOr, std::move(node), KP_TRY(ParseAnd()));
    }
    return node;
  }
  Result<std::unique_ptr<Node>> ParseAnd() {
    auto node = KP_TRY(ParseFactor());
    for (SkipBlanks(); pos_ < text_.size() && text_[pos_] == '&'; SkipBlanks()) {
      ++pos_;
      node = Binary(Node::kAnd, std::move(node), KP_TRY(ParseFactor()));
    }
    return node;
  }
  // Where a '[' opens a class that never closes, or npos.
  static size_t UnclosedClass(std::string_view glob) {
    for (size_t i = 0; i < glob.size(); ++i) {
      if (glob[i] == '\\') {
        ++i;
        continue;
      }
      if (glob[i] != '[') continue;
      size_t j = i + 1;
      if (j < glob.size() && (glob[j] == '!' || glob[j] == '^')) ++j;
      if (j < glob.size() && glob[j] == ']') ++j;  // a leading ']' is a member
      size_t close = glob.find(']', j);
      if (close == std::string_view::npos) return i;
      i = close;
    }
    return std::string_view::npos;
  }

  Result<std::unique_ptr<Node>> ParseFactor() {
    SkipBlanks();
    // Each '!' and '(' recurses: bound the nesting, not the stack.
    if (++depth_ > kMaxDepth) return SyntaxError("nested too deeply (more than 100 '!' or '(')");
    auto node = ParseFactorAt();
    --depth_;
    return node;
  }

  Result<std::unique_ptr<Node>> ParseFactorAt() {
    if (pos_ < text_.size() && text_[pos_] == '!') {
      ++pos_;
      return Binary(Node::kNot, KP_TRY(ParseFactor()), nullptr);
    }
    if (pos_ < text_.size() && text_[pos_] == '(') {
      ++pos_;
      auto inner = KP_TRY(ParseOr());
      SkipBlanks();
      if (pos_ >= text_.size() || text_[pos_] != ')') return SyntaxError("expected ')'");
      ++pos_;
      return inner;
    }
    size_t start = pos_;
    for (; pos_ < text_.size() && std::string_view("!&|) ").find(text_[pos_]) == std::string_view::npos; ++pos_) {
      if (text_[pos_] != '(') continue;
      size_t close = text_.find(')', pos_);
      if (pos_ == start || close == std::string_view::npos) break;  // a group, or no name's '('
      pos_ = close;
    }
    if (pos_ == start) return SyntaxError("expected a glob");
    if (size_t open = UnclosedClass(text_.substr(start, pos_ - start)); open != std::string_view::npos) {
      pos_ = start + open;
      return SyntaxError("'[' without its ']'");
    }
    auto n = std::make_unique<Node>();
    n->kind = Node::kGlob;
    n->glob = std::string(text_.substr(start, pos_ - start));
    if (leaf_) n->glob = leaf_(n->glob);
    return n;
  }

  static constexpr int kMaxDepth = 100;
  std::string_view text_;
  const std::function<std::string(std::string_view)>& leaf_;
  size_t pos_ = 0;
  int depth_ = 0;
};

bool Evaluate(const Node& n, std::string_view name) {
  switch (n.kind) {
    case Node::kGlob:
      return GlobMatch(n.glob, name);
    case Node::kNot:
      return !Evaluate(*n.left, name);
    case Node::kAnd:
      return Evaluate(*n.left, name) && Evaluate(*n.right, name);
    case Node::kOr:
      return Evaluate(*n.left, name) || Evaluate(*n.right, name);
  }
  return false;
}

}  // namespace

GlobFilter::GlobFilter(std::unique_ptr<Node> root) : root_(std::move(root)) {}
GlobFilter::GlobFilter(GlobFilter&&) noexcept = default;
GlobFilter& GlobFilter::operator=(GlobFilter&&) noexcept = default;
GlobFilter::~GlobFilter() = default;

Result<GlobFilter> GlobFilter::Parse(std::string_view expression,
                                     const std::function<std::string(std::string_view)>& leaf) {
  FilterParser parser(expression, leaf);
  auto root = KP_TRY(parser.Parse());
  return GlobFilter(std::move(root));
}

bool GlobFilter::Matches(std::string_view name) const { return Evaluate(*root_, name); }

}  // namespace kprobectl
