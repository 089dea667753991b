// SPDX-License-Identifier: GPL-2.0-or-later
//
// Frames as printed, taken apart; stacks folded. A printed frame is the
// function and its offset, then where it is: the kernel prints a module in
// brackets (%pS), kprobectl a user file in parentheses. A flame graph
// merges calls by function, so the offset goes (an address with no symbol
// stays whole: it is the only name there is).
#include <algorithm>
#include <cctype>
#include <map>

#include "kprobectl/flame_graph.h"

namespace kprobectl {

namespace {

bool AllHex(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

// "FUNC+0x1c" or "FUNC+0x1c/0x80": FUNC; anything else as it is.
std::string_view WithoutOffset(std::string_view name) {
  size_t plus = name.rfind("+0x");
  if (plus == std::string_view::npos || plus == 0) return name;
  std::string_view offset = name.substr(plus + 3);
  size_t slash = offset.find("/0x");
  if (slash != std::string_view::npos && !AllHex(offset.substr(slash + 3))) return name;
  return AllHex(offset.substr(0, slash)) ? name.substr(0, plus) : name;
}

void AppendEscaped(std::string& out, std::string_view name) {
  for (char c : name) {
    if (c == ';')
      out += "%3B";
    else if (c == '%')
      out += "%25";
    else if (c == '\n')
      out += "%0A";
    else
      out += c;
  }
}

}  // namespace

StackFrame ParseFrame(std::string_view printed, StackFrame::Side side) {
  StackFrame frame;
  frame.side = side;
  std::string_view name = printed;
  char open = side == StackFrame::kKernel ? '[' : '(', close = side == StackFrame::kKernel ? ']' : ')';
  if (side != StackFrame::kLabel && name.ends_with(close)) {
    size_t at = name.rfind(std::string{' ', open});
    if (at != std::string_view::npos) {
      frame.object = std::string(name.substr(at + 2, name.size() - at - 3));
      name = name.substr(0, at);
    }
  }
  frame.name = std::string(side == StackFrame::kLabel ? name : WithoutOffset(name));
  // A user frame's file is a path; anything else in its parentheses is a
  // note ("[unknown]", the trampoline's "a return probe holds...").
  if (side == StackFrame::kUser && !frame.object.starts_with('/')) frame.object.clear();
  return frame;
}

std::string FoldedStacks(const StackProfile& profile) {
  bool user = false, kernel = false;
  for (const CountedStack& s : profile.stacks)
    for (const StackFrame& f : s.frames) {
      user |= f.side == StackFrame::kUser;
      kernel |= f.side == StackFrame::kKernel;
    }
  // By their text: frames of two files with one name are one to the tools.
  std::map<std::string, uint64_t> merged;
  for (const CountedStack& s : profile.stacks) {
    if (s.count == 0) continue;
    std::string line;
    for (const StackFrame& f : s.frames) {
      if (!line.empty()) line += ';';
      AppendEscaped(line, f.name);
      if (user && kernel && f.side == StackFrame::kKernel) line += "_[k]";
    }
    merged[line.empty() ? "[no stack]" : line] += s.count;
  }
  std::string out;
  for (const auto& [line, count] : merged) out += line + ' ' + std::to_string(count) + '\n';
  return out;
}

}  // namespace kprobectl
