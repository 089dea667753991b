// SPDX-License-Identifier: GPL-2.0-or-later
//
// The reference: `perf probe -x FIXTURE -D SPEC` (Debian's linux-perf) must
// put its probes where we put ours, on every fixture build.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>

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
    for (const char* spec : {"compute", "greet", "many_args", "helper", "call_helper_here", "main",
                             "compute%return", "compute+4", "greet+8"}) {
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
