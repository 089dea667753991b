// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/event_names.h"

#include <cctype>

#include "kprobectl/strings.h"

namespace kprobectl {

std::string UserGroupName(std::string_view binary_path) {
  std::string_view base = binary_path.substr(binary_path.rfind('/') + 1);
  // perf 6.1 cuts at the first '-' or '.', keeping '_' (measured:
  // target_O0 -> probe_target_O0, my-app -> probe_my, libc.so.6 -> probe_libc).
  size_t end = 0;
  while (end < base.size() && (std::isalnum(static_cast<unsigned char>(base[end])) || base[end] == '_')) ++end;
  return "probe_" + std::string(base.substr(0, end));
}

std::string EventBaseFromSymbol(std::string_view symbol) {
  if (symbol.starts_with('.')) symbol.remove_prefix(1);
  size_t cut = symbol.find_first_of(".@");
  if (cut != std::string_view::npos && cut > 0) symbol = symbol.substr(0, cut);
  std::string out;
  for (char c : symbol) out += IsIdentChar(c) ? c : '_';
  if (!out.empty() && !IsIdentStart(out[0])) out.insert(0, "_");
  return out;
}

std::string EventBase(const ProbePoint& point, std::string_view symbol) {
  if (point.address && symbol.empty()) {
    std::string hex = Hex(*point.address);
    return "abs_" + hex.substr(2);
  }
  std::string base = EventBaseFromSymbol(symbol);
  // Line 0 is the function's declaration, its entry: no suffix, as perf
  // names it (its commit "Generate event name with line number").
  if (point.line && *point.line != 0 && !point.function.empty()) base += "_L" + std::to_string(*point.line);
  return base;
}

Result<std::string> EventNamer::Take(std::string_view group, std::string_view base, bool retprobe, bool extra_address) {
  std::string stem = std::string(base) + (retprobe ? "__return" : "");
  auto too_long = [&](const std::string& name) {
    return Fail("event name '" + name + "' is " + std::to_string(name.size()) +
                    " characters long; the kernel takes at most " + std::to_string(kMaxEventNameLength),
                "name the event yourself: [GROUP:]EVENT=" + std::string(base.substr(0, 20)) + "...");
  };
  if (group.size() > kMaxEventNameLength) return too_long(std::string(group));
  std::string name = stem;
  if (taken_.contains(std::string(group) + "/" + name)) {
    if (!force_ && !extra_address) {
      if (ours_.contains(std::string(group) + "/" + name))
        return Fail("two probes of this command are both named '" + std::string(group) + ":" + name + "'",
                    "name them with EVENT=..., or add -f to append a number");
      return Fail("event '" + std::string(group) + ":" + name + "' already exists",
                  "remove it with 'kprobectl del " + std::string(group) + ":" + name +
                      "', name the new one with EVENT=..., or add -f to append a number");
    }
    for (int i = 1;; ++i) {
      name = stem + "_" + std::to_string(i);
      if (!taken_.contains(std::string(group) + "/" + name)) break;
    }
  }
  if (name.size() > kMaxEventNameLength) return too_long(name);
  taken_.insert(std::string(group) + "/" + name);
  ours_.insert(std::string(group) + "/" + name);
  return name;
}

}  // namespace kprobectl
