// SPDX-License-Identifier: GPL-2.0-or-later
//
// End-to-end against the machine's real uprobe_events: kprobectl adds probes
// to a fixture program, the program runs, and the values the kernel recorded
// must be the ones the program printed. Each test uses its own group and a
// private tracefs instance, and removes both even when it fails.
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "kprobectl/strings.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

TEST_CASE("uprobes: entry and return probes record the values the program used") {
  std::string tracefs = RealTracefsOrSkip();
  for (const char* fixture : {"target_O2", "target_O0", "target_nopie"}) {
    INFO(fixture);
    std::string group = UniqueGroup("a");
    GroupCleaner cleaner(tracefs, group);
    std::string bin = FixturePath(fixture);
    auto added = RunKprobectl({"-x", bin, "-q", "-a", group + ":entry=compute a=$arg1:s32 b=$arg2:s32", "-a",
                               group + ":ret=compute%return r=$retval:s32", "-a",
                               group + ":greet=greet name=$arg1:string times=%si:s32 c=$comm", "-a",
                               group + ":many=many_args a1=$arg1:s64 a7=$arg7:s64 a8=$arg8:s64", "-a",
                               group + ":helper=helper x=$arg1:s32", "-a",
                               group + ":counter=compute counter=@fixture_counter:s32", "-a",
                               group + ":greet_ret=greet%return s=+0($retval):string"});
    INFO(added.err);
    REQUIRE(added.status == 0);
    CHECK(GroupDefinitions(tracefs, group).size() == 8);  // helper has two instances

    TraceInstance instance(tracefs, group);
    for (const char* event :
         {"entry", "ret__return", "greet", "many", "helper", "helper_1", "counter", "greet_ret__return"})
      instance.Enable(event);
    int status = 0;
    std::string output = RunProgram({bin, "5", "9", "kprobectl", "3"}, &status);
    REQUIRE(status == 0);
    // The program's own account of what it did.
    CHECK(output ==
          "compute 5 9 -> 1045\n"
          "compute 6 9 -> 1054\n"
          "compute 7 9 -> 1063\n"
          "many_args 5 9 3 4 5 6 75 89 -> 196\n"
          "greet \"kprobectl\" 9 -> \"kprobectl x9\"\n"
          "helper 5 -> 15\n"
          "other helper 9 -> 109\n"
          "counter 1000\n");

    auto events = TraceEvents(instance.Lines());
    auto entries = events["entry"];
    auto returns = events["ret__return"];  // perf appends __return to given names too
    REQUIRE(entries.size() == 3);
    REQUIRE(returns.size() == 3);
    for (int i = 0; i < 3; ++i) {
      CHECK(entries[static_cast<size_t>(i)]["a"] == std::to_string(5 + i));
      CHECK(entries[static_cast<size_t>(i)]["b"] == "9");
      CHECK(returns[static_cast<size_t>(i)]["r"] == std::to_string((5 + i) * 9 + 1000));
    }
    auto greet = events["greet"];
    REQUIRE(greet.size() == 1);
    CHECK(greet[0]["name"] == "\"kprobectl\"");
    CHECK(greet[0]["times"] == "9");
    CHECK(greet[0]["c"] == "\"" + bin.substr(bin.rfind('/') + 1) + "\"");
    auto greet_ret = events["greet_ret__return"];
    REQUIRE(greet_ret.size() == 1);
    CHECK(greet_ret[0]["s"] == "\"kprobectl x9\"");
    auto many = events["many"];
    REQUIRE(many.size() == 1);
    CHECK(many[0]["a1"] == "5");
    CHECK(many[0]["a7"] == "75");  // on the stack: +8(%sp)
    CHECK(many[0]["a8"] == "89");  // +16(%sp)
    // Two static helper()s: one probe each, each hit once, with its own argument.
    auto helper = events["helper"];
    auto helper_1 = events["helper_1"];
    REQUIRE(helper.size() == 1);
    REQUIRE(helper_1.size() == 1);
    std::set<std::string> helper_args{helper[0]["x"], helper_1[0]["x"]};
    CHECK(helper_args == std::set<std::string>{"5", "9"});
    auto counter = events["counter"];
    REQUIRE(counter.size() == 3);
    CHECK(counter[0]["counter"] == "1000");
  }
}

TEST_CASE("uprobes: list shows the events and del removes them all") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("b");
  GroupCleaner cleaner(tracefs, group);
  std::string bin = FixturePath("target_O2");
  auto added = RunKprobectl({"-x", bin, "add", group + ":e=compute+4", "%di"});
  REQUIRE(added.status == 0);
  CHECK(added.out.empty());
  CHECK(added.err.starts_with("Added new event:\n  " + group + ":e\t(on compute+4@" + FixtureSourceDir() +
                              "/target.c in " + bin + " with di)\n"));
  auto listed = RunKprobectl({"list", group + ":*"});
  CHECK(listed.out ==
        "  " + group + ":e\t(on compute+4@" + FixtureSourceDir() + "/target.c in " + bin + " with di)\t[hits 0]\n");
  auto deleted = RunKprobectl({"del", group + ":*"});
  CHECK(deleted.status == 0);
  CHECK(deleted.out.empty());
  CHECK(deleted.err == "Removed event: " + group + ":e\n");
  CHECK(GroupDefinitions(tracefs, group).empty());
}

TEST_CASE("uprobes: an enabled event is not deleted without -f") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("c");
  GroupCleaner cleaner(tracefs, group);
  REQUIRE(RunKprobectl({"-x", FixturePath("target_O2"), "-q", "add", group + ":e=compute"}).status == 0);
  {
    TraceInstance instance(tracefs, group);
    instance.Enable("e");
    auto refused = RunKprobectl({"del", group + ":e"});
    CHECK(refused.status == 1);
    CHECK(refused.err.starts_with("kprobectl: error: enabled, so not deleted: " + group + ":e\n"));
    CHECK(GroupDefinitions(tracefs, group).size() == 1);
    auto forced = RunKprobectl({"del", "-f", group + ":e"});
    CHECK(forced.status == 0);
  }
  CHECK(GroupDefinitions(tracefs, group).empty());
}

TEST_CASE("uprobes: when the kernel rejects the last definition, none stays") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("d");
  GroupCleaner cleaner(tracefs, group);
  std::string before = ReadFile(tracefs + "/uprobe_events");
  // The last name clashes with a static event, which only the kernel knows.
  auto result = RunKprobectl({"-x", FixturePath("target_O2"), "-a", group + ":one=compute $arg1", "-a",
                              group + ":two=greet", "-a", "sched:sched_switch=compute"});
  CHECK(result.status == 1);
  CHECK(result.err.starts_with(
      "kprobectl: error: the kernel rejected the probe definition: Given group/event name is already used by "
      "another event\n"
      "    p:sched/sched_switch " +
      FixturePath("target_O2") + ":0x"));
  CHECK(GroupDefinitions(tracefs, group).empty());
  CHECK(ReadFile(tracefs + "/uprobe_events") == before);
}

TEST_CASE("uprobes: bad input is refused before anything is written") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("e");
  GroupCleaner cleaner(tracefs, group);
  std::string before = ReadFile(tracefs + "/uprobe_events");
  for (std::vector<std::string> args :
       std::vector<std::vector<std::string>>{{"-a", group + ":ok=compute", "-a", group + ":bad=compute+4 $arg1"},
                                             {"-a", group + ":ok=compute", "-a", group + ":bad=nosuch"},
                                             {"-a", group + ":ok=compute", "-a", group + ":bad=compute %rdi"},
                                             {"-a", group + ":ok=compute", "-a", group + ":bad=compute:3"},
                                             {"-a", group + ":ok=compute", "-a", group + ":bad=compute+x"}}) {
    args.insert(args.begin(), {"-x", FixturePath("target_O2")});
    auto result = RunKprobectl(args);
    INFO(result.err);
    CHECK(result.status == 1);
    CHECK(result.err.starts_with("kprobectl: error: "));
    CHECK(ReadFile(tracefs + "/uprobe_events") == before);
  }
}
