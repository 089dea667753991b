// SPDX-License-Identifier: GPL-2.0-or-later
//
// The reference: `perf probe -x FIXTURE -D SPEC` (Debian's linux-perf) must
// put its probes where we put ours, on every fixture build.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>
#include <set>

#include "kprobectl/strings.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

std::string PerfOrSkip() {
  for (const char* path : {"/usr/bin/perf", "/usr/local/bin/perf"})
    if (access(path, X_OK) == 0) return path;
  const char* ci = std::getenv("CI");
  if (ci && std::string(ci) == "true") FAIL("perf is not installed (scripts/setup installs linux-perf)");
  std::cerr << "SKIPPED: perf is not installed\n";
  std::_Exit(4);
}

// The targets ("/path:0xOFF") of the definitions a tool printed.
std::vector<std::string> Targets(const std::string& definitions) {
  std::vector<std::string> out;
  for (const std::string& line : SplitLines(definitions)) {
    auto words = SplitWords(line);
    if (words.size() >= 2 && (words[0].starts_with("p:") || words[0].starts_with("r:"))) out.push_back(words[1]);
  }
  return out;
}

}  // namespace

TEST_CASE("our probe addresses are perf probe's") {
  std::string perf = PerfOrSkip();
  for (const char* fixture : {"target_O0", "target_O2", "target_nopie"}) {
    for (const char* spec : {"compute", "greet", "many_args", "helper", "call_helper_here", "main", "compute%return",
                             "compute+4", "greet+8"}) {
      INFO(fixture << " " << spec);
      std::string bin = FixturePath(fixture);
      int status = 0;
      std::string theirs = RunProgram({perf, "probe", "-q", "-x", bin, "-D", spec}, &status);
      REQUIRE(status == 0);
      auto ours = RunKprobectl({"-x", bin, "-D", spec});
      REQUIRE(ours.status == 0);
      CHECK(Targets(ours.out) == Targets(theirs));
      CHECK_FALSE(Targets(ours.out).empty());
    }
  }
}

namespace {

std::set<std::string> TargetSet(const std::string& definitions) {
  auto targets = Targets(definitions);
  return {targets.begin(), targets.end()};
}

}  // namespace

// Through DWARF, perf probes every is_stmt row of a line, so a statement
// with three rows fires three times per execution; kprobectl probes the
// first row of each block of rows (one event per execution), so its
// addresses are a subset of perf's. For inlined copies, perf takes
// DW_AT_entry_pc even where gcc gives the copy an empty first range, an
// address where none of the copy's code (or its variables) is; kprobectl
// takes the copy's first instruction, in the same function.
TEST_CASE("through DWARF, our probe addresses are perf probe's (or the first of each block of them)") {
  std::string perf = PerfOrSkip();
  for (const char* fixture : {"records_O0", "records_O2"}) {
    std::string bin = FixturePath(fixture);
    for (const char* spec :
         {"process", "summarize", "tally", "tally@records_other.c", "process:3", "process;records_total*",
          "records.c:59", "summarize%return", "process:4", "main:5", "summarize:2"}) {
      INFO(fixture << " " << spec);
      int status = 0;
      std::string theirs = RunProgram({perf, "probe", "-q", "-x", bin, "-D", spec}, &status);
      REQUIRE(status == 0);
      auto ours = RunKprobectl({"-x", bin, "-D", spec});
      REQUIRE(ours.status == 0);
      auto our_set = TargetSet(ours.out);
      auto their_set = TargetSet(theirs);
      CHECK_FALSE(our_set.empty());
      for (const std::string& target : our_set) {
        INFO(target);
        CHECK(their_set.contains(target));
      }
    }
    INFO(fixture << " scale (inlined twice)");
    int status = 0;
    std::string theirs = RunProgram({perf, "probe", "-q", "-x", bin, "-D", "scale"}, &status);
    auto ours = RunKprobectl({"-x", bin, "-D", "scale"});
    REQUIRE(ours.status == 0);
    CHECK(TargetSet(ours.out).size() == 2);
    CHECK(TargetSet(theirs).size() == 2);
  }
}
