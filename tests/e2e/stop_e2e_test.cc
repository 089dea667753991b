// SPDX-License-Identifier: GPL-2.0-or-later
//
// Every way a trace can stop, each twice, and a kill it cannot catch: after
// each, nothing of it is left in uprobe_events or instances/. And what
// `trace -- COMMAND` traces: the command and its children, not the machine.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <set>
#include <thread>

#include "kprobectl/strings.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

const std::string kKprobectl = KP_KPROBECTL_BIN;

std::vector<std::string> Instances(const std::string& tracefs) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(tracefs + "/instances"))
    if (entry.path().filename().string().starts_with("kprobectl-")) out.push_back(entry.path().filename());
  return out;
}

// Waits until the tracer's instance has `event` enabled.
bool Tracing(const std::string& tracefs, const std::string& group, const std::string& event = "tick") {
  return WaitFor([&] {
    for (const std::string& instance : Instances(tracefs))
      if (ReadFile(tracefs + "/instances/" + instance + "/events/" + group + "/" + event + "/enable").starts_with("1"))
        return true;
    return false;
  });
}

size_t Lines(const std::string& path) { return SplitLines(ReadFile(path)).size(); }

void CheckNothingLeft(const std::string& tracefs, const std::string& group) {
  CHECK(GroupDefinitions(tracefs, group).empty());
  CHECK(Instances(tracefs).empty());
}

// Each test keeps its records of temporary probes in its own directory.
struct Runtime {
  TempDir dir;
  ScopedEnv env{"KPROBECTL_RUNTIME_DIR", dir.path()};
  bool Empty() const { return std::filesystem::is_empty(dir.path()); }
};

}  // namespace

TEST_CASE("trace: each stop signal, twice to the process group, leaves nothing behind") {
  std::string tracefs = RealTracefsOrSkip();
  std::string bin = FixturePath("types");
  Runtime runtime;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    for (bool with_command : {false, true}) {
      INFO("signal " << sig << (with_command ? " with a command" : ""));
      std::string group = UniqueGroup("g" + std::to_string(sig));
      GroupCleaner cleaner(tracefs, group);
      TempDir dir;
      std::vector<std::string> argv = {kKprobectl, "trace", "-o",      dir / "t.txt",
                                       "-x",       bin,     "--probe", group + ":tick=tick i"};
      if (with_command) argv.insert(argv.end(), {"--", bin, "100000000", "2000"});
      int tracer = SpawnGroup(argv, "", dir / "err");
      int worker = with_command ? -1 : Spawn({bin, "100000000", "2000"});
      REQUIRE(Tracing(tracefs, group));
      CHECK(WaitFor([&] { return Lines(dir / "t.txt") >= 10; }));
      // A terminal's Ctrl-C under `timeout`: the group gets it twice.
      kill(-tracer, sig);
      kill(-tracer, sig);
      int status = Wait(tracer, 60);
      INFO(ReadFile(dir / "err"));
      if (with_command)
        CHECK(status == 128 + sig);  // the command's status: it got the signal too
      else
        CHECK(status == 0);
      if (worker > 0) {
        kill(worker, SIGKILL);
        Wait(worker);
      }
      CheckNothingLeft(tracefs, group);
      CHECK(runtime.Empty());
    }
  }
}

TEST_CASE("trace: a reader that goes away (| head) stops it quietly, leaving nothing behind") {
  std::string tracefs = RealTracefsOrSkip();
  std::string bin = FixturePath("types");
  Runtime runtime;
  std::string group = UniqueGroup("h");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  int out = -1;
  int tracer = SpawnPiped({kKprobectl, "trace", "-x", bin, "--probe", group + ":tick=tick i"}, &out, dir / "err");
  REQUIRE(Tracing(tracefs, group));
  int worker = Spawn({bin, "100000000", "2000"});
  char buf[256];
  REQUIRE(read(out, buf, sizeof buf) > 0);  // head -1 read its line...
  close(out);                               // ...and left
  CHECK(Wait(tracer, 60) == 0);
  kill(worker, SIGKILL);
  Wait(worker);
  CHECK(ReadFile(dir / "err").find("error") == std::string::npos);
  CheckNothingLeft(tracefs, group);
  CHECK(runtime.Empty());
}

TEST_CASE("trace: signals during a long cleanup do not interrupt it") {
  std::string tracefs = RealTracefsOrSkip();
  Runtime runtime;
  std::string group = UniqueGroup("c");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  // Hundreds of temporary probes (libc's str* and mem* functions) make the
  // cleanup take a while; signals keep coming during it.
  int tracer = SpawnGroup({kKprobectl, "trace", "-o", dir / "t.txt", "-x", "libc.so.6", "--probe", group + ":s=str*",
                           "--probe", group + ":m=mem*"},
                          "", dir / "err");
  REQUIRE(WaitFor([&] { return GroupDefinitions(tracefs, group).size() > 50 && !Instances(tracefs).empty(); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  for (int i = 0; i < 20; ++i) {
    kill(-tracer, i % 2 ? SIGINT : SIGTERM);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(Wait(tracer, 120) == 0);
  INFO(ReadFile(dir / "err"));
  CheckNothingLeft(tracefs, group);
  CHECK(runtime.Empty());
}

TEST_CASE("trace: what a SIGKILL left is removed by the next command that writes, and by clean") {
  std::string tracefs = RealTracefsOrSkip();
  std::string bin = FixturePath("types");
  Runtime runtime;
  std::string group = UniqueGroup("k");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  // A probe of the user's own, traced beside a temporary one: only the
  // temporary one may go.
  REQUIRE(RunProgram({kKprobectl, "-q", "-x", bin, "add", group + ":mine=tick"}).empty());
  for (const std::string next : {"add", "clean"}) {
    INFO("then " << next);
    int tracer = Spawn(
        {kKprobectl, "trace", "-o", dir / "t.txt", group + ":mine", "-x", bin, "--probe", group + ":temp=tick i"});
    REQUIRE(Tracing(tracefs, group, "temp"));
    kill(tracer, SIGKILL);
    Wait(tracer);
    CHECK(Instances(tracefs).size() == 1);
    CHECK(GroupDefinitions(tracefs, group).size() == 2);
    CHECK_FALSE(runtime.Empty());
    int status = 0;
    std::string out;
    if (next == "add") {
      status = Wait(Spawn({kKprobectl, "-x", bin, "add", group + ":other=tick"}, dir / "out", dir / "next"));
      CHECK(GroupDefinitions(tracefs, group).size() == 2);  // mine and other
    } else {
      status = Wait(Spawn({kKprobectl, "clean"}, dir / "out", dir / "next"));
      CHECK(GroupDefinitions(tracefs, group).size() == 1);  // mine
    }
    CHECK(status == 0);
    std::string said = ReadFile(dir / "next");
    CHECK(said.find("kprobectl: removed what kprobectl trace (pid " + std::to_string(tracer) +
                    ") left behind when it was stopped without cleaning up: kprobectl-" + std::to_string(tracer) +
                    ", " + group + ":temp\n") != std::string::npos);
    CHECK(Instances(tracefs).empty());
    CHECK(runtime.Empty());
    for (const std::string& line : GroupDefinitions(tracefs, group)) CHECK(line.find(":temp ") == std::string::npos);
    if (next == "add") REQUIRE(RunProgram({kKprobectl, "-q", "del", group + ":other"}).empty());
  }
  auto clean = RunKprobectl({"clean"});
  CHECK(clean.out.empty());
  CHECK(clean.err == "Nothing to clean: no kprobectl trace left anything behind.\n");
}

TEST_CASE("trace -- COMMAND: the command and its children, not the whole machine, and -a everything") {
  std::string tracefs = RealTracefsOrSkip();
  std::string bin = FixturePath("types");
  Runtime runtime;
  std::string group = UniqueGroup("f");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  int busy = Spawn({bin, "100000000", "1000"});
  std::string busy_tag = "-" + std::to_string(busy) + " ";
  // Two children of a shell: 10 ticks each, from two processes.
  CHECK(Wait(Spawn({kKprobectl, "trace", "-o", dir / "c.txt", "-x", bin, "--probe", group + ":tick=tick i", "--",
                    "/bin/sh", "-c", bin + " 10 && " + bin + " 10"})) == 0);
  std::set<std::string> pids;
  auto lines = SplitLines(ReadFile(dir / "c.txt"));
  CHECK(lines.size() == 20);
  for (const std::string& line : lines) {
    CHECK(line.find(busy_tag) == std::string::npos);
    pids.insert(line.substr(0, line.find(' ', line.find_first_not_of(' '))));
  }
  CHECK(pids.size() == 2);
  // -a: the busy process's events too.
  CHECK(Wait(Spawn({kKprobectl, "trace", "-a", "-o", dir / "a.txt", "-x", bin, "--probe", group + ":tick=tick i", "--",
                    "/bin/sleep", "0.5"})) == 0);
  CHECK(ReadFile(dir / "a.txt").find(busy_tag) != std::string::npos);
  kill(busy, SIGKILL);
  Wait(busy);
  CheckNothingLeft(tracefs, group);
}

TEST_CASE("trace: a return probe's caller in another file is named from the process's mappings") {
  std::string tracefs = RealTracefsOrSkip();
  std::string bin = FixturePath("types");
  Runtime runtime;
  std::string group = UniqueGroup("r");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  // types calls libc's clock_gettime from main while it ticks.
  CHECK(Wait(Spawn({kKprobectl, "trace", "-o", dir / "r.txt", "-x", "libc.so.6", "--probe",
                    group + ":cg=clock_gettime%return", "--", bin, "10", "10"})) == 0);
  auto lines = SplitLines(ReadFile(dir / "r.txt"));
  REQUIRE(lines.size() >= 10);
  size_t named = 0;
  for (const std::string& line : lines) named += line.find("(main+0x") != std::string::npos;
  INFO(ReadFile(dir / "r.txt"));
  CHECK(named >= lines.size() / 2);  // all but those printed after the process was gone
  CheckNothingLeft(tracefs, group);
}
