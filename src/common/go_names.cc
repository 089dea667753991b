// SPDX-License-Identifier: GPL-2.0-or-later
//
// Go's symbols are its own names, not mangled: "pkg/path.Func",
// "pkg.(*Type).Method", "pkg.Type.Method", "pkg.Func.func1" (a closure),
// "pkg.Func[go.shape.int_0]" (a generic function's instantiation for the
// shapes in brackets, Go 1.18+). A '.' is a scope here, never a clone's
// suffix as in C, and brackets hold types, never a glob's class.
#include <cctype>

#include "kprobectl/lang_names.h"
#include "kprobectl/strings.h"

namespace kprobectl {

namespace {

constexpr std::string_view kAnyTypeArgs = "[...]";

// Past the bracketed list that opens at `i` (nested brackets counted);
// npos when it does not close.
size_t PastBrackets(std::string_view s, size_t i) {
  int depth = 0;
  for (; i < s.size(); ++i) {
    if (s[i] == '[') ++depth;
    if (s[i] == ']' && --depth == 0) return i + 1;
  }
  return std::string_view::npos;
}

}  // namespace

std::string GoGlob(std::string_view written) {
  std::string out;
  for (size_t i = 0; i < written.size(); ++i) {
    char c = written[i];
    if (c == '\\' && i + 1 < written.size()) {
      out += written.substr(i, 2);
      ++i;
    } else if (written.substr(i, kAnyTypeArgs.size()) == kAnyTypeArgs) {
      out += "\\[*]";
      i += kAnyTypeArgs.size() - 1;
    } else if (c == '[' || c == ']' || (c == '*' && i > 0 && written[i - 1] == '(')) {
      out += '\\';
      out += c;
    } else {
      out += c;
    }
  }
  return out;
}

std::string GoDisplayName(std::string_view symbol) {
  std::string out;
  for (size_t i = 0; i < symbol.size();) {
    size_t past = symbol[i] == '[' ? PastBrackets(symbol, i) : std::string_view::npos;
    if (past != std::string_view::npos) {
      out += kAnyTypeArgs;
      i = past;
      continue;
    }
    out += symbol[i++];
  }
  return out;
}

std::string GoEventBase(std::string_view name) {
  std::string out;
  bool gap = false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '[') {
      size_t past = PastBrackets(name, i);
      if (past != std::string_view::npos) {
        i = past - 1;
        gap = true;
        continue;
      }
    }
    if (!IsIdentChar(name[i])) {
      gap = true;
      continue;
    }
    if (gap && !out.empty()) out += "__";
    gap = false;
    out += name[i];
  }
  if (!out.empty() && !IsIdentStart(out[0])) out.insert(0, "_");
  return out;
}

}  // namespace kprobectl
