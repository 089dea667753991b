// SPDX-License-Identifier: GPL-2.0-or-later
//
// A trace or hist run's hold on the kernel (src/cli/tracing_run.h), made
// against a prepared tracefs (this machine's README, a plain directory):
// what it writes, in order, and its teardown in the order its members are
// declared in reverse, the instance before the probes its events are.
#include "cli/tracing_run.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>

#include "kprobectl/leftovers.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

TEST_CASE("tracing run: made in order, taken down in reverse, the instance before the probes") {
  FakeTracefs tracefs;
  std::filesystem::create_directories(tracefs.dir / "instances");
  cli::Options options;
  options.tracefs = tracefs.path();
  options.verbose = true;  // each write said, in order
  std::ostringstream out, err;
  TraceEventDef def = *ParseDefinition("p:kprobectl_run/hit /bin/true:0x10", ProbeKind::kUser);
  std::string instance = tracefs.dir / ("instances/" + InstanceName(getpid()));
  {
    auto run = cli::TracingRun::Open(options, {out, err});
    REQUIRE(run);
    // The README read once, at Open: this machine's has uprobes, no kprobes.
    CHECK((*run)->features().uprobe_events);
    CHECK_FALSE((*run)->features().kprobe_events);
    REQUIRE((*run)->AddProbes({def}));
    REQUIRE((*run)->CreateSession(0, 0));
    CHECK(std::filesystem::is_directory(instance));
    CHECK((*run)->command() == nullptr);
  }
  std::string events = tracefs.dir / "uprobe_events";
  CHECK(err.str() == "write " + events + ": p:kprobectl_run/hit /bin/true:0x10\n" +  //
                         "mkdir " + instance + "\n" +                                //
                         "rmdir " + instance + "\n" +                                //
                         "write " + events + ": -:kprobectl_run/hit\n");
  CHECK(out.str().empty());
  CHECK_FALSE(std::filesystem::exists(instance));
  CHECK(ReadFile(events) == "p:kprobectl_run/hit /bin/true:0x10\n-:kprobectl_run/hit\n");
}

TEST_CASE("tracing run: a tracefs that cannot be opened is the error, nothing made") {
  TempDir empty;
  cli::Options options;
  options.tracefs = empty / "missing";
  std::ostringstream out, err;
  auto run = cli::TracingRun::Open(options, {out, err});
  REQUIRE(!run);
  CHECK(run.error().message == "--tracefs '" + options.tracefs + "' is not a directory");
  CHECK(err.str().empty());
}
