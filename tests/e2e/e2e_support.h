// SPDX-License-Identifier: GPL-2.0-or-later
//
// What the end-to-end tests of `trace` share: the kprobectl binary run as
// a user runs it, a fixture traced while it runs, the values a trace
// recorded, and the check that nothing stayed behind.
#pragma once

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "kprobectl/strings.h"
#include "test_support.h"

namespace kprobectl::test {

inline const std::string kKprobectl = KP_KPROBECTL_BIN;

inline std::vector<std::string> Instances(const std::string& tracefs) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(tracefs + "/instances"))
    if (entry.path().filename().string().starts_with("kprobectl-")) out.push_back(entry.path().filename());
  return out;
}

inline void CheckNothingLeft(const std::string& tracefs, const std::string& group) {
  CHECK(GroupDefinitions(tracefs, group).empty());
  CHECK(Instances(tracefs).empty());
  CHECK_FALSE(std::filesystem::exists(tracefs + "/events/" + group));
}

// The values of field `name` in text trace lines, in order.
inline std::vector<std::string> Values(const std::string& text, const std::string& name) {
  std::vector<std::string> out;
  for (const std::string& line : SplitLines(text)) {
    size_t at = line.find(" " + name + "=");
    if (at == std::string::npos) continue;
    size_t start = at + name.size() + 2;
    out.push_back(line.substr(start, line.find(' ', start) - start));
  }
  return out;
}

// `trace -o` on a fixture run as the command, with these --probe specs:
// the trace and the command's output, once it exited 0.
inline std::pair<std::string, std::string> TraceFixture(const std::string& name, TempDir& dir,
                                                        const std::vector<std::string>& probes) {
  std::string bin = FixturePath(name);
  std::vector<std::string> args = {kKprobectl, "trace", "-o", dir / "trace.txt", "-x", bin};
  for (const std::string& probe : probes) args.insert(args.end(), {"--probe", probe});
  args.insert(args.end(), {"--", bin});
  int status = Wait(Spawn(args, dir / "out", dir / "err"));
  INFO(ReadFile(dir / "err"));
  CHECK(status == 0);
  return {ReadFile(dir / "trace.txt"), ReadFile(dir / "out")};
}

// What a program printed as FIELD=VALUE on its lines that begin with
// PREFIX, in order (VALUE up to a blank).
inline std::vector<std::string> Printed(const std::string& out, const std::string& prefix, const std::string& field) {
  std::vector<std::string> values;
  for (const std::string& line : SplitLines(out))
    if (line.starts_with(prefix)) values.push_back(Values(" " + line.substr(prefix.size()), field).at(0));
  return values;
}

// What a program printed as NAME="..." (Go's %q, Rust's {:?}; the
// fixtures' strings need no escapes), as trace prints a counted string
// fetched with `bound`: cut there, "..." after a cut.
inline std::vector<std::string> PrintedCut(const std::string& out, const std::string& prefix, size_t bound) {
  std::vector<std::string> cut;
  for (const std::string& line : SplitLines(out)) {
    if (!line.starts_with(prefix)) continue;
    size_t open = prefix.size(), close = line.find('"', open + 1);
    std::string text = line.substr(open + 1, close - open - 1);
    cut.push_back("\"" + text.substr(0, bound) + "\"" + (text.size() > bound ? "..." : ""));
  }
  return cut;
}

}  // namespace kprobectl::test
