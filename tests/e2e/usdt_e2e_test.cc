// SPDX-License-Identifier: GPL-2.0-or-later
//
// User space beyond C, for real: USDT markers of the fixtures and of
// Debian's own python3.11 and libstdc++, C++ functions by their names, and
// a program in a mount namespace of its own probed with --target-ns. The
// kprobectl binary traces as a user runs it; the values it prints must be
// the ones the programs used, and nothing may stay behind.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <thread>

#include "kprobectl/strings.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

const std::string kKprobectl = KP_KPROBECTL_BIN;

// kprobectl trace's text lines, by event: "COMM-PID [CPU] SECONDS: GROUP:EVENT: (WHERE) NAME=VALUE ...".
std::map<std::string, std::vector<Fields>> Traced(const std::string& text, const std::string& group) {
  std::map<std::string, std::vector<Fields>> out;
  for (const std::string& line : SplitLines(text)) {
    size_t at = line.find(" " + group + ":");
    if (at == std::string::npos) continue;
    size_t name = at + group.size() + 2;
    size_t colon = line.find(": ", name);
    size_t close = line.find(") ", colon);
    out[line.substr(name, colon - name)].push_back(
        ParseFields(close == std::string::npos ? std::string() : line.substr(close + 1)));
  }
  return out;
}

struct Traced_ {
  int status = 0;
  std::string trace, err, out;
};

// kprobectl [OPTIONS...] trace -o FILE --probe P... -- COMMAND...
Traced_ Trace(const std::vector<std::string>& options, const std::vector<std::string>& probes,
              const std::vector<std::string>& command) {
  TempDir dir;
  std::vector<std::string> argv = {kKprobectl};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.insert(argv.end(), {"trace", "-o", dir / "trace"});
  for (const std::string& p : probes) argv.insert(argv.end(), {"--probe", p});
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  Traced_ t;
  t.status = Wait(Spawn(argv, dir / "out", dir / "err"));
  t.trace = ReadFile(dir / "trace");
  t.err = ReadFile(dir / "err");
  t.out = ReadFile(dir / "out");
  return t;
}

}  // namespace

TEST_CASE("USDT: a program's markers traced, every operand kind, a semaphore raised, two sites") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("u");
  GroupCleaner cleaner(tracefs, group);
  std::string bin = FixturePath("sdt");
  auto t = Trace({"-x", bin},
                 {group + ":plain=sdtfx:plain", group + ":twice=sdtfx:twice", group + ":indexed=sdt_sdtfx:indexed",
                  group + ":counted=%sdtfx:counted name=arg2:string n=arg1"},
                 {bin, "5", "9", "hello"});
  INFO(t.err);
  REQUIRE(t.status == 0);
  // The program's account: the semaphore was raised while it ran.
  CHECK(t.out.find("counted 5 \"hello\" semaphore 1\n") != std::string::npos);
  auto events = Traced(t.trace, group);
  REQUIRE(events["plain"].size() == 1);
  Fields plain = events["plain"][0];
  CHECK(plain["arg1"] == "5");
  CHECK(plain["arg2"] == "9");
  CHECK(plain["arg4"] == "45");
  CHECK(plain["arg5"] == "4242");  // a global, RIP-relative
  CHECK(plain["arg6"] == "1234");  // a constant
  CHECK(plain["arg7"] == "46");    // a stack slot
  REQUIRE(events["indexed"].size() == 1);
  CHECK(events["indexed"][0]["arg2"] == "-5");
  CHECK(events["indexed"][0].count("arg1") == 0);
  CHECK(t.err.find("arg1 of sdt_sdtfx:indexed (-4@(%rax,%rcx,4)) cannot be fetched") != std::string::npos);
  REQUIRE(events["counted"].size() == 1);
  CHECK(events["counted"][0]["name"] == "\"hello\"");
  CHECK(events["counted"][0]["n"] == "5");
  // twice() fires its site twice, main's site once.
  std::vector<std::string> twice;
  for (const Fields& f : events["twice"]) twice.push_back(f.at("arg1"));
  CHECK(twice == std::vector<std::string>{"1", "3"});
  REQUIRE(events["twice_1"].size() == 1);
  CHECK(events["twice_1"][0]["arg1"] == "2");
  CHECK(GroupDefinitions(tracefs, group).empty());

  // Without a probe, the semaphore stays down and the marker is not run.
  CHECK(RunProgram({bin, "5", "9", "hello"}).find("semaphore 0") != std::string::npos);
}

TEST_CASE("USDT: a shared library's markers, with semaphores, traced in the program that loads it") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("l");
  GroupCleaner cleaner(tracefs, group);
  auto t = Trace({"-x", FixturePath("libsdtfx.so")},
                 {group + ":ping=sdtlib:ping n=arg1 what=arg2:string", group + ":count=sdtlib:count"},
                 {FixturePath("sdt"), "5", "9", "hello"});
  INFO(t.err);
  REQUIRE(t.status == 0);
  CHECK(t.out.find("ping 6 \"hello\" -> 106\n") != std::string::npos);
  auto events = Traced(t.trace, group);
  REQUIRE(events["ping"].size() == 1);
  CHECK(events["ping"][0]["n"] == "6");
  CHECK(events["ping"][0]["what"] == "\"hello\"");
  REQUIRE(events["count"].size() == 1);
  CHECK(events["count"][0]["arg1"] == "106");
  CHECK(events["count"][0]["arg2"] == "500");  // the library's own global, RIP-relative
  CHECK(GroupDefinitions(tracefs, group).empty());
}

TEST_CASE("USDT: Debian's python3.11, function__entry while a script runs") {
  std::string tracefs = RealTracefsOrSkip();
  const std::string python = "/usr/bin/python3.11";
  REQUIRE(access(python.c_str(), X_OK) == 0);  // scripts/setup installs it
  std::string group = UniqueGroup("p");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  // CPython 3.11 runs function__entry only while a profile or trace
  // function is set (its eval loop reports calls to DTrace on that path
  // alone); without one, only frames entered from C at start-up fire it.
  WriteFile(dir / "script.py",
            "import sys\n"
            "sys.setprofile(lambda *args: None)\n"
            "def kprobectl_probed(n):\n"
            "    return n * 2\n"
            "\n"
            "for i in range(3):\n"
            "    kprobectl_probed(i)\n");
  auto t = Trace({"-x", python}, {group + ":entry=python:function__entry file=arg1:string func=arg2:string line=arg3"},
                 {python, "-S", dir / "script.py"});
  INFO(t.err);
  REQUIRE(t.status == 0);
  INFO(t.trace);
  auto events = Traced(t.trace, group);  // the map outlives the loop over one of its vectors
  int calls = 0;
  for (const Fields& f : events["entry"]) {
    if (f.at("func") != "\"kprobectl_probed\"") continue;
    ++calls;
    CHECK(f.at("file") == "\"" + dir / "script.py" + "\"");
    CHECK(f.at("line") == "3");
  }
  CHECK(calls == 3);
  CHECK(GroupDefinitions(tracefs, group).empty());
}

TEST_CASE("USDT: libstdc++'s throw and catch markers, from a C++ program that throws twice") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("x");
  GroupCleaner cleaner(tracefs, group);
  auto t = Trace({"-x", "libstdc++.so.6"}, {group + ":throw=libstdcxx:throw", group + ":catch=libstdcxx:catch"},
                 {FixturePath("shop")});
  INFO(t.err);
  REQUIRE(t.status == 0);
  auto events = Traced(t.trace, group);
  CHECK(events["throw"].size() == 2);
  CHECK(events["catch"].size() == 2);
  CHECK(GroupDefinitions(tracefs, group).empty());
}

TEST_CASE("C++: methods, overloads, a template, a lambda, a constructor, this->member and std::string, traced") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("c");
  GroupCleaner cleaner(tracefs, group);
  std::string bin = FixturePath("shop");
  auto t = Trace({"-x", bin},
                 {group + ":add_item=shop::Cart::add(const Item&, int) name=item.name:string price=item.price count "
                          "before=this->total_",
                  group + ":add_price=shop::Cart::add(long) price", group + ":largest_int=shop::largest<int> a b",
                  group + ":largest_long=shop::largest<long> a b", group + ":half=main::{lambda(long)#1}::operator() p",
                  group + ":ctor=shop::Cart::Cart id", group + ":kind=shop::GiftCart::kind this->note_:string",
                  group + ":total=shop::Cart::total%return $retval"},
                 {bin, "7", "120", "apple"});
  INFO(t.err);
  REQUIRE(t.status == 0);
  auto events = Traced(t.trace, group);
  REQUIRE(events["add_item"].size() == 2);  // add(item, 3), and operator+= calls add(item, 1)
  CHECK(events["add_item"][0]["name"] == "\"apple\"");
  CHECK(events["add_item"][0]["price"] == "120");
  CHECK(events["add_item"][0]["count"] == "3");
  CHECK(events["add_item"][0]["before"] == "0");
  CHECK(events["add_item"][1]["count"] == "1");
  CHECK(events["add_item"][1]["before"] == "485");
  REQUIRE(events["add_price"].size() == 1);
  CHECK(events["add_price"][0]["price"] == "125");
  REQUIRE(events["largest_int"].size() == 1);
  CHECK(events["largest_int"][0]["a"] == "7");
  CHECK(events["largest_int"][0]["b"] == "3");
  REQUIRE(events["largest_long"].size() == 1);
  CHECK(events["largest_long"][0]["a"] == "120");
  CHECK(events["largest_long"][0]["b"] == "100");
  REQUIRE(events["half"].size() == 1);
  CHECK(events["half"][0]["p"] == "120");
  REQUIRE(events["ctor"].size() == 1);
  CHECK(events["ctor"][0]["id"] == "7");
  REQUIRE(events["kind"].size() == 1);
  CHECK(events["kind"][0]["note_"] == "\"gift\"");
  REQUIRE(events["total__return"].size() == 1);
  CHECK(events["total__return"][0]["retval"] == "605");
  // Traces name the functions as C++ does.
  CHECK(t.trace.find("(shop::Cart::add(shop::Item const&, int)+0x0)") != std::string::npos);
  CHECK(GroupDefinitions(tracefs, group).empty());
}

TEST_CASE("containers: a binary in a mount namespace of its own, probed with --target-ns") {
  std::string tracefs = RealTracefsOrSkip();
  REQUIRE(access("/usr/bin/unshare", X_OK) == 0);  // util-linux
  std::string group = UniqueGroup("n");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  std::string inside = dir / "private";
  std::filesystem::create_directory(inside);
  // A tmpfs only the namespace sees, a copy of the fixture in it, run there.
  std::string script = "mount -t tmpfs kptmp " + inside + " && cp " + FixturePath("types") + " " + inside +
                       "/app && echo ready > " + dir / "ready" + " && exec " + inside + "/app 1000000 2000";
  int unshared = Spawn({"/usr/bin/unshare", "--mount", "--propagation", "private", "--fork", "/bin/sh", "-c", script});
  REQUIRE(WaitFor([&] { return std::filesystem::exists(dir / "ready"); }));
  // The program: unshare's child, once it has exec'd the copy.
  int pid = 0;
  REQUIRE(WaitFor([&] {
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      std::string exe;
      std::error_code ec;
      exe = std::filesystem::read_symlink(entry.path() / "exe", ec).string();
      if (!ec && exe == inside + "/app") pid = std::stoi(entry.path().filename());
    }
    return pid != 0;
  }));
  CHECK_FALSE(std::filesystem::exists(inside + "/app"));  // not from here
  std::string ns = std::to_string(pid);
  auto missing = RunKprobectl({"-x", inside + "/app", "-D", "tick"});
  CHECK(missing.status == 1);
  auto defined = RunKprobectl({"--target-ns", ns, "-x", inside + "/app", "-D", "tick i"});
  INFO(defined.err);
  CHECK(defined.status == 0);
  CHECK(defined.out.starts_with("p:probe_app/tick /proc/" + ns + "/root" + inside + "/app:0x"));
  TempDir out;
  int status = Wait(Spawn({kKprobectl, "--target-ns", ns, "-x", inside + "/app", "trace", "-o", out / "t", "-d", "2",
                           "--pid", ns, "--probe", group + ":tick=tick i"},
                          "", out / "err"));
  INFO(ReadFile(out / "err"));
  CHECK(status == 0);
  auto ticks = Traced(ReadFile(out / "t"), group)["tick"];
  CHECK(ticks.size() >= 3);
  for (size_t i = 1; i < ticks.size(); ++i) CHECK(std::stol(ticks[i]["i"]) == std::stol(ticks[i - 1]["i"]) + 1);
  // Replaced on disk while it runs: refused, saying so.
  REQUIRE(Wait(Spawn({"/usr/bin/nsenter", "-t", ns, "-m", "/bin/sh", "-c",
                      "cp " + inside + "/app " + inside + "/new && mv " + inside + "/new " + inside + "/app"})) == 0);
  auto replaced = RunKprobectl({"--target-ns", ns, "-x", inside + "/app", "-D", "tick"});
  CHECK(replaced.status == 1);
  CHECK(replaced.err.starts_with("kprobectl: error: process " + ns + " runs a copy of " + inside +
                                 "/app that was deleted or replaced on disk since it started\n"));
  kill(unshared, SIGKILL);
  kill(pid, SIGKILL);
  Wait(unshared);
  CHECK(GroupDefinitions(tracefs, group).empty());
}
