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

#include "json_check.h"
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

void CheckNothingLeft(const std::string& tracefs, const std::string& group) {
  CHECK(GroupDefinitions(tracefs, group).empty());
  CHECK(Instances(tracefs).empty());
  CHECK_FALSE(std::filesystem::exists(tracefs + "/events/" + group));
}

// The values of field `name` in text trace lines, in order.
std::vector<std::string> Values(const std::string& text, const std::string& name) {
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
std::pair<std::string, std::string> TraceFixture(const std::string& name, TempDir& dir,
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

// What a program printed as NAME="..." (Go's %q, Rust's {:?}; the
// fixtures' strings need no escapes), as trace prints a counted string
// fetched with `bound`: cut there, "..." after a cut.
std::vector<std::string> PrintedCut(const std::string& out, const std::string& prefix, size_t bound) {
  std::vector<std::string> cut;
  for (const std::string& line : SplitLines(out)) {
    if (!line.starts_with(prefix)) continue;
    size_t open = prefix.size(), close = line.find('"', open + 1);
    std::string text = line.substr(open + 1, close - open - 1);
    cut.push_back("\"" + text.substr(0, bound) + "\"" + (text.size() > bound ? "..." : ""));
  }
  return cut;
}

}  // namespace

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

// Go's and Rust's programs (tests/fixtures/lang), each printing what its
// functions were given: the records equal it, by DWARF names, members
// (a Go string's .len, a Rust &str's .length) and, for Go, $argN in Go's
// register ABI (Serve's receiver, path's pointer and length, then n).
TEST_CASE("trace: Go and Rust functions' arguments equal what the programs printed") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("lang");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  for (std::string name : {"gofx", "gofx_noopt"}) {
    INFO(name);
    auto [trace, out] = TraceFixture(name, dir,
                                     {group + ":serve=main.(*Server).Serve n plen=path.len",
                                      group + ":raw=main.(*Server).Serve argn=$arg4 alen=$arg3",
                                      group + ":handle=main.handle count price=it.Price nlen=it.Name.len"});
    CHECK(Values(trace, "n") == std::vector<std::string>{"3", "3", "3"});
    CHECK(Values(trace, "argn") == std::vector<std::string>{"0x3", "0x3", "0x3"});
    CHECK(Values(trace, "plen") == std::vector<std::string>{"6", "0", "300"});
    CHECK(Values(trace, "alen") == std::vector<std::string>{"0x6", "0x0", "0x12c"});
    CHECK(Values(trace, "count") == std::vector<std::string>{"2"});
    CHECK(Values(trace, "price") == std::vector<std::string>{"7"});
    CHECK(Values(trace, "nlen") == std::vector<std::string>{"5"});
    CHECK(out.find("handle name=\"apple\" price=7 tags=\"ab\" count=2\n") != std::string::npos);
    CheckNothingLeft(tracefs, group);
  }
  for (std::string name : {"rsfx_O0", "rsfx_O2", "rsfx_v0"}) {
    INFO(name);
    auto [trace, out] = TraceFixture(name, dir, {group + ":add=rsfx::shop::Cart::add price nlen=name.length"});
    CHECK(Values(trace, "price") == std::vector<std::string>{"5", "5", "5"});
    CHECK(Values(trace, "nlen") == std::vector<std::string>{"4", "0", "300"});
    CHECK(out.find("add name=\"pear\" price=5\n") != std::string::npos);
    CheckNothingLeft(tracefs, group);
  }
}

TEST_CASE("trace: Go and Rust strings and slices cut at their length equal what the programs printed") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("lstr");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  for (std::string name : {"gofx", "gofx_noopt"}) {
    INFO(name);
    auto [trace, out] = TraceFixture(name, dir,
                                     {group + ":serve=main.(*Server).Serve path short=path:u8[3]",
                                      group + ":handle=main.handle nm=it.Name tags=it.Tags"});
    CHECK(Values(trace, "path") == PrintedCut(out, "Serve path=", 64));
    CHECK(PrintedCut(out, "Serve path=", 64).size() == 3);
    CHECK(Values(trace, "path__len") == std::vector<std::string>{"6", "0", "300"});
    CHECK(Values(trace, "short") == PrintedCut(out, "Serve path=", 3));
    CHECK(Values(trace, "nm") == PrintedCut(out, "handle name=", 64));
    CHECK(Values(trace, "tags") == std::vector<std::string>{"\"ab\""});
    CheckNothingLeft(tracefs, group);
  }
  for (std::string name : {"rsfx_O0", "rsfx_O2", "rsfx_v0"}) {
    INFO(name);
    auto [trace, out] = TraceFixture(
        name, dir,
        {group + ":add=rsfx::shop::Cart::add name short=name:u8[2]", group + ":greet=rsfx::greet name bytes owned"});
    std::vector<std::string> names = PrintedCut(out, "add name=", 64);
    CHECK(names.size() == 3);
    std::vector<std::string> recorded;
    for (const std::string& v : Values(trace, "name"))
      if (v != "\"bob\"") recorded.push_back(v);
    CHECK(recorded == names);
    CHECK(Values(trace, "short") == PrintedCut(out, "add name=", 2));
    CHECK(trace.find(" name=\"bob\" name__len=3 bytes=\"xyz\" bytes__len=3 owned=\"owned string\" owned__len=12\n") !=
          std::string::npos);
    CHECK(out.find("greet name=\"bob\" bytes=[120, 121, 122] owned=\"owned string\"\n") != std::string::npos);
    CheckNothingLeft(tracefs, group);
  }
}

// FUNC%return on Go: a probe on each return instruction, never a
// uretprobe (whose return address on a goroutine's stack Go would copy
// and unwind). 40 goroutines recurse 100 to 139 deep with 256-byte frames,
// so Go grows (copies) their stacks while the probes fire: the program
// must exit 0, and work's results equal what it printed.
TEST_CASE("trace: Go FUNC%return at return instructions while goroutines' stacks grow") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("gret");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  for (std::string name : {"gostack", "gostack_noopt"}) {
    INFO(name);
    auto [trace, out] = TraceFixture(
        name, dir, {group + ":work=main.work%return $retval:s64", group + ":depth=main.depth%return $retval:s64"});
    std::vector<std::string> printed, recorded;
    for (const std::string& line : SplitLines(out))
      if (line.starts_with("work(")) printed.push_back(line.substr(line.find('=') + 1));
    size_t depth_returns = 0;
    for (const std::string& line : SplitLines(trace)) {
      if (line.find(" " + group + ":work: ") != std::string::npos) recorded.push_back(Values(line, "retval").at(0));
      depth_returns += line.find(" " + group + ":depth") != std::string::npos;
    }
    std::sort(printed.begin(), printed.end());
    std::sort(recorded.begin(), recorded.end());
    CHECK(printed.size() == 40);
    CHECK(recorded == printed);
    CHECK(depth_returns == 4820);  // 101 + 102 + ... + 140 returns of depth
    CheckNothingLeft(tracefs, group);
  }
}
