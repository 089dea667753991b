// SPDX-License-Identifier: GPL-2.0-or-later
//
// kprobectl trace for real (uprobes): the kprobectl binary runs as its own
// process, as a user runs it, so that signals reach it as they would. Each
// test checks the values and their order, and that nothing stays behind:
// no probe, no enabled event, no instance, whichever way tracing stopped.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <thread>

#include "e2e_support.h"
#include "json_check.h"
#include "kprobectl/strings.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

TEST_CASE("trace: a command's events in order, its exit status, nothing left") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("t");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  std::string bin = FixturePath("types");
  int status = Wait(Spawn({kKprobectl, "trace", "-o", dir / "trace.txt", "-x", bin, "--probe", group + ":tick=tick i",
                           "--probe", group + ":all=all_types s32 str:string bad:string", "--", bin, "200"},
                          dir / "out", dir / "err"));
  INFO(ReadFile(dir / "err"));
  CHECK(status == 0);
  std::string trace = ReadFile(dir / "trace.txt");
  std::vector<std::string> expected;
  for (int i = 0; i < 200; ++i) expected.push_back(std::to_string(i));
  CHECK(Values(trace, "i") == expected);
  CHECK(Values(trace, "s32") == std::vector<std::string>{"-2147483648", "2147483647"});
  CHECK(Values(trace, "bad") == std::vector<std::string>{"(fault)", "\"ok\""});
  // Every line: "COMM-PID [CPU] SECONDS.MICROS: GROUP:EVENT: (FUNC+0xOFF) ..."
  for (const std::string& line : SplitLines(trace)) {
    INFO(line);
    CHECK(line.find("types-") != std::string::npos);
    CHECK((line.find(": " + group + ":tick: (tick+0x0) i=") != std::string::npos ||
           line.find(": " + group + ":all: (all_types+0x0) s32=") != std::string::npos));
  }
  CHECK(ReadFile(dir / "err").find("kprobectl: 202 events printed, 0 lost") != std::string::npos);
  CheckNothingLeft(tracefs, group);

  // The command inherits no descriptor of ours (ring-buffer pipes, the output file).
  status = Wait(Spawn({kKprobectl, "trace", "-q", "-o", dir / "x", "-x", bin, "--probe", group + ":tick=tick", "--",
                       "/bin/sh", "-c", "[ ! -e /proc/$$/fd/3 ] && [ ! -e /proc/$$/fd/4 ]"}));
  CHECK(status == 0);
  CheckNothingLeft(tracefs, group);

  // The command's exit status becomes ours.
  status = Wait(
      Spawn({kKprobectl, "trace", "-q", "-x", bin, "--probe", group + ":tick=tick", "--", "/bin/sh", "-c", "exit 3"}));
  CHECK(status == 3);
  CheckNothingLeft(tracefs, group);
  // A command that cannot run is an error, and cleans up too.
  status = Wait(Spawn({kKprobectl, "trace", "-x", bin, "--probe", group + ":tick=tick", "--", "/nonexistent/cmd"}, "",
                      dir / "err2"));
  CHECK(status == 1);
  CHECK(ReadFile(dir / "err2").starts_with("kprobectl: error: cannot run '/nonexistent/cmd': No such file"));
  CheckNothingLeft(tracefs, group);
}

TEST_CASE("trace: --json lines are valid JSON with typed values") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("j");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  std::string bin = FixturePath("types");
  int status = Wait(Spawn({kKprobectl, "trace", "--json", "-o", dir / "t.json", "-x", bin, "--probe",
                           group + ":all=all_types s8 u64 h=s16:x16 str:string bad:string values:s64[3] c=str[0]",
                           "--probe", group + ":ret=all_types%return $retval", "--", bin},
                          "", dir / "err"));
  INFO(ReadFile(dir / "err"));
  CHECK(status == 0);
  auto lines = SplitLines(ReadFile(dir / "t.json"));
  REQUIRE(lines.size() == 4);
  for (const std::string& line : lines) {
    INFO(line);
    CHECK(JsonValid(line));
    CHECK(JsonField(line, "comm") == "\"types\"");
    CHECK(JsonField(line, "pid"));
    CHECK(JsonField(line, "cpu"));
    CHECK(JsonField(line, "time"));
  }
  CHECK(*JsonField(lines[0], "event") == "\"" + group + ":all\"");
  CHECK(*JsonField(lines[0], "probe") == "\"all_types+0x0\"");
  CHECK(*JsonField(lines[0], "args.s8") == "-128");
  CHECK(*JsonField(lines[0], "args.u64") == "18446744073709551615");
  CHECK(*JsonField(lines[0], "args.h") == "\"0x8000\"");
  CHECK(*JsonField(lines[0], "args.str") ==
        "\"quote\\\" back\\\\ nl\\n tab\\t bytes\\u00ff\\u00fe utf8 \xc3\xa9 end\"");
  CHECK(*JsonField(lines[0], "args.bad") == "null");
  CHECK(*JsonField(lines[0], "args.values") == "[-1,0,1234567890123]");
  CHECK(*JsonField(lines[0], "args.c") == "\"q\"");
  CHECK(*JsonField(lines[1], "event") == "\"" + group + ":ret__return\"");
  CHECK(JsonField(lines[1], "caller")->starts_with("\"main+0x"));
  CHECK(*JsonField(lines[2], "args.bad") == "\"ok\"");
  CheckNothingLeft(tracefs, group);

  // To standard output (a pipe, as for jq), the events stay a JSON stream
  // whatever the command prints: its standard output goes to ours of errors.
  for (bool json : {true, false}) {
    INFO(json);
    std::vector<std::string> args{kKprobectl, "trace",
                                  "-x",       bin,
                                  "--probe",  group + ":all=all_types s8",
                                  "--",       "/bin/sh",
                                  "-c",       "echo the command speaks; exec " + bin};
    if (json) args.insert(args.begin() + 2, "--json");
    status = Wait(Spawn(args, dir / "stdout", dir / "stderr"));
    CHECK(status == 0);
    std::string events = ReadFile(dir / "stdout");
    INFO(events);
    CHECK(events.find("the command speaks") == std::string::npos);
    CHECK(ReadFile(dir / "stderr").find("the command speaks\n") != std::string::npos);
    auto printed = SplitLines(events);
    CHECK(printed.size() == 2);
    for (const std::string& line : printed)
      CHECK((json ? JsonValid(line) : line.find(group + ":all: (all_types+0x0) s8=") != std::string::npos));
    CheckNothingLeft(tracefs, group);
  }
}

TEST_CASE("trace: SIGINT and SIGTERM in the middle leave nothing behind") {
  std::string tracefs = RealTracefsOrSkip();
  std::string bin = FixturePath("types");
  for (int sig : {SIGINT, SIGTERM}) {
    INFO("signal " << sig);
    std::string group = UniqueGroup(sig == SIGINT ? "i" : "s");
    GroupCleaner cleaner(tracefs, group);
    TempDir dir;
    // kprobectl traces until a signal; a separate process makes events.
    int tracer = Spawn({kKprobectl, "trace", "-o", dir / "t.txt", "-x", bin, "--probe", group + ":tick=tick i"}, "",
                       dir / "err");
    REQUIRE(WaitFor([&] {
      auto instances = Instances(tracefs);
      return !instances.empty() &&
             ReadFile(tracefs + "/instances/" + instances[0] + "/events/" + group + "/tick/enable").starts_with("1");
    }));
    int worker = Spawn({bin, "1000000", "2000"});
    CHECK(WaitFor([&] { return Values(ReadFile(dir / "t.txt"), "i").size() >= 20; }));
    kill(tracer, sig);
    CHECK(Wait(tracer) == 0);
    kill(worker, SIGKILL);
    Wait(worker);
    auto seen = Values(ReadFile(dir / "t.txt"), "i");
    REQUIRE(seen.size() >= 20);
    // In order, none missing from the first seen to the last.
    long first = std::stol(seen[0]);
    for (size_t i = 0; i < seen.size(); ++i) CHECK(seen[i] == std::to_string(first + static_cast<long>(i)));
    CHECK(ReadFile(dir / "err").find(" events printed, 0 lost") != std::string::npos);
    CheckNothingLeft(tracefs, group);
  }
}

TEST_CASE("trace: -d, --filter, --pid, a bad filter, a write error") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("d");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  std::string bin = FixturePath("types");
  // -d: stops by itself. Only a hang fails (Wait's bound): sanitizers and a
  // busy machine make any tighter bound flaky; speed is bench/'s business.
  CHECK(Wait(Spawn({kKprobectl, "trace", "-q", "-d", "0.5", "-x", bin, "--probe", group + ":tick=tick"}), 60) == 0);
  CheckNothingLeft(tracefs, group);
  // --filter: the kernel drops what does not match.
  CHECK(Wait(Spawn({kKprobectl, "trace", "-o", dir / "f.txt", "--filter", "i >= 195", "-x", bin, "--probe",
                    group + ":tick=tick i", "--", bin, "200"})) == 0);
  CHECK(Values(ReadFile(dir / "f.txt"), "i") == std::vector<std::string>{"195", "196", "197", "198", "199"});
  CheckNothingLeft(tracefs, group);
  // A filter the kernel refuses: its explanation, and nothing left.
  int status = Wait(Spawn({kKprobectl, "trace", "--filter", "nosuchfield == 1", "-x", bin, "--probe",
                           group + ":tick=tick i", "--", bin, "5"},
                          "", dir / "bad_filter"));
  CHECK(status == 1);
  CHECK(
      ReadFile(dir / "bad_filter")
          .starts_with("kprobectl: error: the kernel rejected the filter 'nosuchfield == 1' for " + group + "/tick:"));
  CheckNothingLeft(tracefs, group);
  // --pid: only that process's events.
  int busy = Spawn({bin, "1000000", "1000"});
  CHECK(Wait(Spawn({kKprobectl, "trace", "-o", dir / "p.txt", "--pid", std::to_string(busy), "-x", bin, "--probe",
                    group + ":tick=tick i", "--", bin, "50"})) == 0);
  kill(busy, SIGKILL);
  Wait(busy);
  for (const std::string& line : SplitLines(ReadFile(dir / "p.txt")))
    CHECK(line.find("-" + std::to_string(busy) + " ") != std::string::npos);
  CheckNothingLeft(tracefs, group);
  // A write error stops tracing with an error, and cleans up.
  status = Wait(
      Spawn({kKprobectl, "trace", "-o", "/dev/full", "-x", bin, "--probe", group + ":tick=tick i", "--", bin, "100"},
            "", dir / "full"));
  CHECK(status == 1);
  CHECK(ReadFile(dir / "full").find("kprobectl: error: cannot write the trace to /dev/full: No space left on device") !=
        std::string::npos);
  CheckNothingLeft(tracefs, group);
}

TEST_CASE("trace: --latency times each call and draws histograms") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("l");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  std::string bin = FixturePath("types");
  // Only the return probe is given: kprobectl adds the entry it needs.
  int status = Wait(Spawn({kKprobectl, "trace", "--latency", "-o", dir / "l.txt", "-x", bin, "--probe",
                           group + ":tick=tick%return $retval", "--", bin, "20"},
                          "", dir / "err"));
  CHECK(status == 0);
  auto lines = SplitLines(ReadFile(dir / "l.txt"));
  REQUIRE(lines.size() == 20);
  for (const std::string& line : lines) {
    INFO(line);
    CHECK(line.find(group + ":tick__return: (main+0x") != std::string::npos);
    CHECK(line.find(" latency=") != std::string::npos);
  }
  std::string err = ReadFile(dir / "err");
  CHECK(err.find("\ntick: 20 calls, min ") != std::string::npos);
  CHECK(err.find(" |@") != std::string::npos);
  CheckNothingLeft(tracefs, group);
}

TEST_CASE("trace: --stack, a call stack after each event, unwound through CFI and symbolised") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("k");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  // target_O2 is built without frame pointers (-O2): its stack is found
  // through its .eh_frame, from what the probe captured.
  std::string bin = FixturePath("target_O2");
  int status = Wait(Spawn(
      {kKprobectl, "trace", "-o", dir / "t", "--stack", "-x", bin, "--probe", group + ":c=compute a b", "--", bin}, "",
      dir / "err"));
  INFO(ReadFile(dir / "err"));
  CHECK(status == 0);
  auto lines = SplitLines(ReadFile(dir / "t"));
  INFO(ReadFile(dir / "t"));
  REQUIRE(lines.size() >= 3);
  CHECK(lines[0].find(group + ":c: (compute+0x0) a=6 b=7") != std::string::npos);
  CHECK(lines[1] == " => compute+0x0 (" + bin + ")");
  CHECK(lines[2].starts_with(" => main+0x"));
  CHECK(lines[2].ends_with(" (" + bin + ")"));
  CheckNothingLeft(tracefs, group);

  // JSON: the frames as an array; the kernel's stack as well with =both.
  status = Wait(Spawn({kKprobectl, "trace", "--json", "-o", dir / "j", "--stack=both", "-x", bin, "--probe",
                       group + ":c=compute a b", "--", bin},
                      "", dir / "err"));
  CHECK(status == 0);
  auto json = SplitLines(ReadFile(dir / "j"));
  REQUIRE(json.size() == 1);
  CHECK(JsonValid(json[0]));
  auto user = JsonField(json[0], "user_stack");
  REQUIRE(user);
  CHECK(user->starts_with("[\"compute+0x0 (" + bin + ")\",\"main+0x"));
  auto kernel = JsonField(json[0], "kernel_stack");
  REQUIRE(kernel);
  CHECK(kernel->starts_with("[\""));  // the uprobe's handler path: the kernel's symbols
  CheckNothingLeft(tracefs, group);

  // Inside a function a return probe waits on, the return address is
  // uprobes' trampoline: said, not shown as an unknown address.
  status = Wait(Spawn({kKprobectl, "trace", "-o", dir / "r", "--stack", "-x", bin, "--probe", group + ":c=compute",
                       "--probe", group + ":m=main%return", "--", bin},
                      "", dir / "err"));
  CHECK(status == 0);
  auto pending = SplitLines(ReadFile(dir / "r"));
  INFO(ReadFile(dir / "r"));
  REQUIRE(pending.size() >= 3);
  CHECK(pending[1] == " => compute+0x0 (" + bin + ")");
  CHECK(pending[2].starts_with(" => main+0x"));
  CHECK(pending[3] == " => [uretprobe trampoline] (a return probe holds this frame's return address)");
  CheckNothingLeft(tracefs, group);

  // An event added before (no capture): the kernel's own frame-pointer walk,
  // whose first frame is the probe's.
  REQUIRE(RunKprobectl({"-q", "-x", bin, "add", group + ":e=compute a"}).status == 0);
  status =
      Wait(Spawn({kKprobectl, "trace", "-o", dir / "u", "--stack=user", group + ":e", "--", bin}, "", dir / "err"));
  CHECK(status == 0);
  auto walked = SplitLines(ReadFile(dir / "u"));
  INFO(ReadFile(dir / "u"));
  REQUIRE(walked.size() >= 2);
  CHECK(walked[1] == " => compute+0x0 (" + bin + ")");
  REQUIRE(RunKprobectl({"-q", "del", group + ":*"}).status == 0);
  CheckNothingLeft(tracefs, group);

  auto bad = RunKprobectl({"trace", "--stack=sideways", "-x", bin, "--probe", "compute", "--", "/bin/true"});
  CHECK(bad.status == 1);
  CHECK(
      bad.err.starts_with("kprobectl: error: --stack=sideways: which stack to record is 'kernel', 'user' or "
                          "'both'\n"));
  CheckNothingLeft(tracefs, group);
}

// No kernel keeps a function's arguments for a user return probe: trace
// fetches them with an entry probe of its own and prints them with the
// return of the same call. walk() recurses (each return its own call's
// arguments, innermost first) and prints what it was called with; past
// uprobes' nesting limit (64 return probes pending in a thread) the
// innermost returns are not recorded, and each recorded return still
// prints its own call's arguments, not a deeper call's.
TEST_CASE("trace: a user return probe's arguments, kept by its entry, call by call through recursion") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("r");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  std::string bin = FixturePath("recursive");
  for (const char* depth : {"3", "80"}) {
    INFO("depth " << depth);
    int status = Wait(Spawn({kKprobectl, "trace", "-o", dir / "t", "-x", bin, "--probe",
                             group + ":w=walk%return depth tag $retval", "--", bin, depth, "2"},
                            dir / "out", dir / "err"));
    INFO(ReadFile(dir / "err"));
    CHECK(status == 0);
    std::string trace = ReadFile(dir / "t");
    std::string out = ReadFile(dir / "out");
    std::vector<std::string> depths = Printed(out, "walk", "depth"), tags = Printed(out, "walk", "tag"),
                             results = Printed(out, "walk", "result");
    // The program's own account: every call, innermost first, two rounds.
    const size_t calls = 2 * (std::stoul(depth) + 1);
    REQUIRE(depths.size() == calls);
    std::vector<std::string> recorded_depths, recorded_tags, recorded_results;
    for (size_t i = 0; i < calls; ++i) {
      // Past the nesting limit, a round's innermost returns are not recorded.
      if (std::stoul(depths[i]) + 64 <= std::stoul(depth)) continue;
      recorded_depths.push_back(depths[i]);
      recorded_tags.push_back(tags[i]);
      recorded_results.push_back(results[i]);
    }
    CHECK(recorded_depths.size() == (depth == std::string("3") ? 8 : 128));
    CHECK(Values(trace, "depth") == recorded_depths);
    CHECK(Values(trace, "tag") == recorded_tags);
    CHECK(Values(trace, "retval") == recorded_results);
    CHECK(trace.find("=?") == std::string::npos);
    CHECK(ReadFile(dir / "err").find(" returns with arguments kept") == std::string::npos);
    CheckNothingLeft(tracefs, group);
  }
  // JSON: the same values, typed as the entry fetched them.
  int status = Wait(Spawn({kKprobectl, "trace", "--json", "-o", dir / "j", "-x", bin, "--probe",
                           group + ":w=walk%return depth tag", "--", bin, "1", "1"},
                          "", dir / "err"));
  CHECK(status == 0);
  auto lines = SplitLines(ReadFile(dir / "j"));
  REQUIRE(lines.size() == 2);
  for (const std::string& line : lines) CHECK(JsonValid(line));
  CHECK(JsonField(lines[0], "args") == "{\"depth\":0,\"tag\":101}");
  CHECK(JsonField(lines[1], "args") == "{\"depth\":1,\"tag\":100}");
  CheckNothingLeft(tracefs, group);
}
