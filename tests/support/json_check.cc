// SPDX-License-Identifier: GPL-2.0-or-later
#include "json_check.h"

#include <cctype>
#include <vector>

namespace kprobectl::test {

namespace {

class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}
  bool Document() {
    Blank();
    if (!Value(0, true)) return false;
    Blank();
    return i_ == s_.size();
  }
  // Finds `path` while parsing; `found` gets the value's text.
  bool Find(std::vector<std::string> path, std::optional<std::string>& found) {
    path_ = std::move(path);
    found_ = &found;
    return Document();
  }

 private:
  void Blank() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool Literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }
  // `on_path`: the keys so far are the first `depth` of the path sought.
  bool Value(size_t depth, bool on_path) {
    if (i_ >= s_.size()) return false;
    char c = s_[i_];
    if (c == '{') return Object(depth, on_path);
    if (c == '[') return Array(depth);
    if (c == '"') return String(nullptr);
    if (c == 't') return Literal("true");
    if (c == 'f') return Literal("false");
    if (c == 'n') return Literal("null");
    return Number();
  }
  bool Number() {
    size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) return false;
    if (s_[i_] == '0')
      ++i_;
    else
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) return false;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) return false;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    return i_ > start;
  }
  bool String(std::string* out) {
    ++i_;
    while (i_ < s_.size()) {
      auto c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        if (++i_ >= s_.size()) return false;
        char e = s_[i_];
        if (e == 'u') {
          for (size_t k = 1; k <= 4; ++k)
            if (i_ + k >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_ + k]))) return false;
          i_ += 5;
          continue;
        }
        if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) return false;
        if (out) *out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
        ++i_;
        continue;
      }
      size_t n = c < 0x80 ? 1 : c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
      if (n == 0 || i_ + n > s_.size()) return false;
      for (size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(s_[i_ + k]) & 0xc0) != 0x80) return false;
      if (out) out->append(s_.substr(i_, n));
      i_ += n;
    }
    return false;
  }
  bool Object(size_t depth, bool on_path) {
    ++i_;
    Blank();
    if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
    for (;;) {
      Blank();
      if (i_ >= s_.size() || s_[i_] != '"') return false;
      std::string key;
      if (!String(&key)) return false;
      Blank();
      if (i_ >= s_.size() || s_[i_] != ':') return false;
      ++i_;
      Blank();
      bool child_on_path = on_path && depth < path_.size() && key == path_[depth];
      size_t start = i_;
      if (!Value(depth + 1, child_on_path)) return false;
      if (child_on_path && depth + 1 == path_.size() && found_ && !*found_)
        *found_ = std::string(s_.substr(start, i_ - start));
      Blank();
      if (i_ < s_.size() && s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
      return false;
    }
  }
  bool Array(size_t depth) {
    ++i_;
    Blank();
    if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
    for (;;) {
      Blank();
      if (!Value(depth + 1, false)) return false;
      Blank();
      if (i_ < s_.size() && s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
      return false;
    }
  }

  std::string_view s_;
  size_t i_ = 0;
  std::vector<std::string> path_;
  std::optional<std::string>* found_ = nullptr;
};

}  // namespace

bool JsonValid(std::string_view text) { return Reader(text).Document(); }

std::optional<std::string> JsonField(std::string_view text, std::string_view path) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t dot = path.find('.');; dot = path.find('.', start)) {
    parts.emplace_back(path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  std::optional<std::string> found;
  if (!Reader(text).Find(parts, found)) return std::nullopt;
  return found;
}

}  // namespace kprobectl::test
