// SPDX-License-Identifier: GPL-2.0-or-later
//
// Where hist counts (aggregation_place.h): each reason kprobectl counts
// rather than the kernel, whole, in the order they are asked; and the
// --stack modes parsed at the command line's edge.
#include "kprobectl/aggregation_place.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>

#include "cli/commands.h"
#include "kprobectl/cli.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

AggregationSpec Spec(AggregationWords words) { return *ParseAggregation(words); }

// A kernel whose hist triggers take everything.
CountingAsk Ask(AggregationWords words) {
  CountingAsk ask;
  ask.spec = Spec(std::move(words));
  ask.kernel = HistSupport{true, true, true};
  return ask;
}

// The place, as one line: "kernel", or "kprobectl: WHY"; the error's
// message and hint when it refuses.
std::string Place(const CountingAsk& ask) {
  auto place = ChooseCountingPlace(ask);
  if (!place) return "error: " + place.error().message + " | " + place.error().hint;
  if (place->in_kernel) return place->why_user_space.empty() ? "kernel" : "kernel, yet: " + place->why_user_space;
  return "kprobectl: " + place->why_user_space;
}

}  // namespace

TEST_CASE("hist place: the kernel counts what its hist triggers can") {
  CHECK(Place(Ask({{"comm"}, {"size"}, {}, "", 0})) == "kernel");
  CountingAsk latency = Ask({{"comm"}, {}, {}, "", 0});
  latency.latency = true;
  CHECK(Place(latency) == "kernel");
  CHECK(Place(Ask({{"kstack"}, {}, {}, "", 0})) == "kernel");
}

TEST_CASE("hist place: each reason kprobectl counts, whole") {
  CHECK(Place(Ask({{"ustack"}, {}, {}, "", 0})) ==
        "kprobectl: -k ustack: the kernel's hist triggers have no user-stack key (kprobectl unwinds each event's "
        "user stack)");
  CountingAsk no_hist = Ask({{"comm"}, {}, {}, "", 0});
  no_hist.kernel = HistSupport{};
  CHECK(Place(no_hist) == "kprobectl: this kernel has no hist triggers (CONFIG_HIST_TRIGGERS)");
  CHECK(Place(Ask({{"comm"}, {}, {"size"}, "", 0})) ==
        "kprobectl: --max size: a hist trigger sums its values and keeps no maximum");
  CountingAsk no_synthetic = Ask({{"comm"}, {}, {}, "", 0});
  no_synthetic.latency = true;
  no_synthetic.kernel.synthetic = false;
  CHECK(Place(no_synthetic) ==
        "kprobectl: this kernel has no synthetic events (CONFIG_SYNTH_EVENTS) to pair entries and returns");
  CountingAsk kept = Ask({{"comm"}, {}, {}, "", 0});
  kept.kept_return = "probe_demo:compute__return";
  kept.kept_args = {"a", "b"};
  CHECK(Place(kept) ==
        "kprobectl: probe_demo:compute__return's a, b kept by its entry probe (the kernel keeps no arguments for "
        "this return probe), which kprobectl pairs with each return");
  CountingAsk asked = Ask({{"comm"}, {}, {}, "", 0});
  asked.user_space = true;
  CHECK(Place(asked) == "kprobectl: --in-user-space");
}

TEST_CASE("hist place: the first reason that holds is the one given") {
  // No hist triggers at all, with --max and --in-user-space too.
  CountingAsk several = Ask({{"comm"}, {}, {"size"}, "", 0});
  several.kernel = HistSupport{};
  several.user_space = true;
  CHECK(Place(several) == "kprobectl: this kernel has no hist triggers (CONFIG_HIST_TRIGGERS)");
  // -k ustack before the kernel's lack of hist triggers.
  CountingAsk ustack = Ask({{"ustack"}, {}, {}, "", 0});
  ustack.kernel = HistSupport{};
  CHECK(Place(ustack) ==
        "kprobectl: -k ustack: the kernel's hist triggers have no user-stack key (kprobectl unwinds each event's "
        "user stack)");
  // --max before a kept return, a kept return before --in-user-space.
  CountingAsk max_kept = Ask({{"comm"}, {}, {"size"}, "", 0});
  max_kept.kept_return = "probe_demo:compute__return";
  max_kept.kept_args = {"a"};
  max_kept.user_space = true;
  CHECK(Place(max_kept) == "kprobectl: --max size: a hist trigger sums its values and keeps no maximum");
  max_kept.spec = Spec({{"comm"}, {}, {}, "", 0});
  CHECK(Place(max_kept) ==
        "kprobectl: probe_demo:compute__return's a kept by its entry probe (the kernel keeps no arguments for this "
        "return probe), which kprobectl pairs with each return");
}

TEST_CASE("hist place: --latency with a stack key is refused on either side") {
  for (const char* key : {"kstack", "ustack"}) {
    CountingAsk ask = Ask({{key}, {}, {}, "", 0});
    ask.latency = true;
    CHECK(Place(ask) ==
          "error: --latency with a stack key: the time is counted at the return, whose stack is not the call's | "
          "count the entry probe by its stack: hist --probe 'FUNC' -k kstack (or ustack)");
  }
}

TEST_CASE("hist place: the README's hist lines are read with the probes' features") {
  KernelFeatures none = ParseFeatures("", true, true);
  CHECK(!none.hist.hist);
  CHECK(!none.hist.buckets);
  CHECK(!none.hist.synthetic);
  KernelFeatures all = AllFeatures();
  CHECK(all.hist.hist);
  CHECK(all.hist.buckets);
  CHECK(all.hist.synthetic);
}

TEST_CASE("stack modes: each --stack mode parsed once, a bad one refused naming it") {
  using cli::StackMode;
  CHECK(*cli::ParseStackMode("") == StackMode::kNone);
  CHECK(*cli::ParseStackMode("auto") == StackMode::kAuto);
  CHECK(*cli::ParseStackMode("kernel") == StackMode::kKernel);
  CHECK(*cli::ParseStackMode("user") == StackMode::kUser);
  CHECK(*cli::ParseStackMode("both") == StackMode::kBoth);
  auto bad = cli::ParseStackMode("sideways");
  REQUIRE(!bad);
  CHECK(bad.error().message == "--stack=sideways: which stack to record is 'kernel', 'user' or 'both'");
  CHECK(bad.error().hint ==
        "--stack alone records each probe's own side: the kernel's stack for kernel probes, user space's for "
        "uprobes");
}

TEST_CASE("stack modes: a bad --stack mode is refused before tracefs is touched") {
  TempDir tracefs;
  std::ostringstream out, err;
  int status =
      RunCli({"--tracefs", tracefs.path(), "trace", "--stack=sideways", "--", "/bin/true"}, out, err, KernelEnv{});
  CHECK(status == 1);
  CHECK(out.str().empty());
  CHECK(err.str() ==
        "kprobectl: error: --stack=sideways: which stack to record is 'kernel', 'user' or 'both'\n"
        "  hint: --stack alone records each probe's own side: the kernel's stack for kernel probes, user space's "
        "for uprobes\n");
  CHECK(std::filesystem::is_empty(tracefs.path()));
}
