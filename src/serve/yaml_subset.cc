// SPDX-License-Identifier: GPL-2.0-or-later
//
// A recursive descent over lines: each block is the run of lines indented
// more than its parent's key. A mapping's value on the key's line is a
// scalar or a flow sequence; below it, a deeper block, or a sequence at the
// key's own indentation ("key:\n- a"), as YAML allows.
#include "kprobectl/yaml_subset.h"

#include <algorithm>

namespace kprobectl {

namespace {

struct Line {
  int number = 0;
  size_t indent = 0;
  std::string text;  // without indentation, comment and trailing blanks
};

// The text before a comment: '#' at the start or after a blank, outside quotes.
std::string_view StripComment(std::string_view line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (i == 0 || line[i - 1] == ' ')) {
      return line.substr(0, i);
    }
  }
  return line;
}

class Parser {
 public:
  Parser(std::vector<Line> lines, std::string path) : lines_(std::move(lines)), path_(std::move(path)) {}

  Result<YamlNode> Document() {
    if (lines_.empty()) return YamlNode{};
    YamlNode node = KP_TRY(Block(lines_[0].indent));
    if (next_ < lines_.size()) return Fail(At(lines_[next_]) + "this line's indentation matches no key above it");
    return node;
  }

 private:
  std::string At(const Line& line) const { return path_ + ":" + std::to_string(line.number) + ": "; }

  static bool IsItem(const Line& line) { return line.text == "-" || line.text.starts_with("- "); }

  Result<YamlNode> Block(size_t indent) { return IsItem(lines_[next_]) ? Sequence(indent) : Mapping(indent); }

  Result<YamlNode> Sequence(size_t indent) {
    YamlNode node{YamlNode::kList, lines_[next_].number, {}, {}, {}};
    while (next_ < lines_.size() && lines_[next_].indent == indent && IsItem(lines_[next_])) {
      const Line& line = lines_[next_++];
      std::string_view rest = std::string_view(line.text).substr(1);
      while (rest.starts_with(' ')) rest.remove_prefix(1);
      YamlNode item = KP_TRY(Value(rest, line));
      if (item.kind != YamlNode::kScalar)
        return Fail(At(line) + "a list item here is one value", "write '- VALUE', one a line");
      node.list.push_back(std::move(item));
    }
    return node;
  }

  Result<YamlNode> Mapping(size_t indent) {
    YamlNode node{YamlNode::kMap, lines_[next_].number, {}, {}, {}};
    while (next_ < lines_.size() && lines_[next_].indent == indent && !IsItem(lines_[next_])) {
      const Line& line = lines_[next_++];
      auto [key, rest] = KP_TRY(Key(line));
      if (std::any_of(node.map.begin(), node.map.end(), [&](const YamlEntry& entry) { return entry.key == key; }))
        return Fail(At(line) + "'" + key + "' is given twice", "keep one");
      YamlNode value;
      if (!rest.empty()) {
        value = KP_TRY(Value(rest, line));
      } else if (next_ < lines_.size() &&
                 (lines_[next_].indent > indent || (lines_[next_].indent == indent && IsItem(lines_[next_])))) {
        value = KP_TRY(Block(lines_[next_].indent));
        value.line = line.number;  // a block is where its key is
      } else {
        value.line = line.number;
      }
      node.map.push_back(YamlEntry{std::move(key), std::move(value)});
    }
    if (next_ < lines_.size() && lines_[next_].indent > indent)
      return Fail(At(lines_[next_]) + "this line's indentation matches no key above it");
    return node;
  }

  // "key: rest" -> key, rest.
  Result<std::pair<std::string, std::string_view>> Key(const Line& line) {
    std::string_view text = line.text;
    std::string key;
    size_t colon;
    if (text.starts_with('"') || text.starts_with('\'')) {
      size_t end = text.find(text[0], 1);
      if (end == std::string_view::npos) return Fail(At(line) + "a quote is not closed");
      key = std::string(text.substr(1, end - 1));
      colon = end + 1;
      if (colon >= text.size() || text[colon] != ':') return Fail(At(line) + "expected ':' after the key");
    } else {
      colon = text.find(": ");
      if (colon == std::string_view::npos && text.ends_with(':')) colon = text.size() - 1;
      if (colon == std::string_view::npos)
        return Fail(At(line) + "expected 'KEY: VALUE', not '" + std::string(text) + "'");
      key = std::string(text.substr(0, colon));
    }
    if (key.empty() || key.starts_with('?') || key.starts_with('&') || key.starts_with('!'))
      return Fail(At(line) + "'" + key + "' is not a plain key");
    std::string_view rest = text.substr(colon + 1);
    while (rest.starts_with(' ')) rest.remove_prefix(1);
    return std::pair{key, rest};
  }

  Result<YamlNode> Value(std::string_view text, const Line& line) {
    YamlNode node{YamlNode::kScalar, line.number, {}, {}, {}};
    if (text.empty()) return Fail(At(line) + "a list item without a value");
    if (text.starts_with('[')) {
      if (!text.ends_with(']')) return Fail(At(line) + "a '[' list is not closed on its line");
      node.kind = YamlNode::kList;
      std::string_view inside = text.substr(1, text.size() - 2);
      while (!inside.empty()) {
        size_t comma = inside.find(',');
        std::string_view item = inside.substr(0, comma);
        while (item.starts_with(' ')) item.remove_prefix(1);
        while (item.ends_with(' ')) item.remove_suffix(1);
        if (!item.empty()) node.list.push_back(KP_TRY(Value(item, line)));
        if (comma == std::string_view::npos) break;
        inside.remove_prefix(comma + 1);
      }
      return node;
    }
    if (text.starts_with('"') || text.starts_with('\'')) {
      if (text.size() < 2 || !text.ends_with(text[0]) ||
          text.substr(1, text.size() - 2).find(text[0]) != std::string_view::npos)
        return Fail(At(line) + "a quoted value must be the whole value, one quote at each end",
                    "quotes inside a value are not read");
      if (text[0] == '"' && text.find('\\') != std::string_view::npos)
        return Fail(At(line) + "escapes (\\) in a double-quoted value are not read", "use single quotes");
      node.scalar = std::string(text.substr(1, text.size() - 2));
      return node;
    }
    static constexpr std::string_view kRefused = "{&*!|>%@`";
    if (kRefused.find(text[0]) != std::string_view::npos)
      return Fail(At(line) + "'" + std::string(1, text[0]) + "' starts YAML that kprobectl does not read",
                  "a web configuration needs plain values, quoted values and lists");
    node.scalar = std::string(text);
    return node;
  }

  std::vector<Line> lines_;
  std::string path_;
  size_t next_ = 0;
};

}  // namespace

Result<YamlNode> ParseYamlSubset(std::string_view text, const std::string& path) {
  std::vector<Line> lines;
  int number = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view raw = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++number;
    if (raw.ends_with('\r')) raw.remove_suffix(1);
    if (number == 1 && raw == "---") continue;
    std::string_view content = StripComment(raw);
    size_t indent = content.find_first_not_of(' ');
    if (indent == std::string_view::npos) continue;
    if (content[indent] == '\t')
      return Fail(path + ":" + std::to_string(number) + ": a tab in the indentation", "indent with spaces");
    content.remove_prefix(indent);
    while (content.ends_with(' ') || content.ends_with('\t')) content.remove_suffix(1);
    if (content == "---" || content == "...")
      return Fail(path + ":" + std::to_string(number) + ": one YAML document only");
    lines.push_back({number, indent, std::string(content)});
  }
  return Parser(std::move(lines), path).Document();
}

}  // namespace kprobectl
