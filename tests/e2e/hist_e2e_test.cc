// SPDX-License-Identifier: GPL-2.0-or-later
//
// kprobectl hist for real, on uprobes: the counts and sums equal what the
// program did (types calls tick(i) for i = 0..N-1), by key, bucketed as
// asked; interval reports; a signal in the middle; bad keys refused with
// nothing written; nothing left behind. On a kernel without hist triggers
// (this machine's) kprobectl counts and says so; on one with them, the
// kernel counts; the answers are the same.
#include <signal.h>

#include <catch2/catch.hpp>
#include <cctype>
#include <filesystem>
#include <tuple>

#include "kprobectl/strings.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

const std::string kKprobectl = KP_KPROBECTL_BIN;

bool HasInstances(const std::string& tracefs) {
  for (const auto& entry : std::filesystem::directory_iterator(tracefs + "/instances"))
    if (entry.path().filename().string().starts_with("kprobectl-")) return true;
  return false;
}

void CheckNothingLeft(const std::string& tracefs, const std::string& group) {
  CHECK(GroupDefinitions(tracefs, group).empty());
  CHECK_FALSE(HasInstances(tracefs));
  CHECK_FALSE(std::filesystem::exists(tracefs + "/events/" + group));
}

bool KernelCounts(const std::string& tracefs) {
  return ReadFile(tracefs + "/README").find("hist trigger") != std::string::npos;
}

// The rows of a table, each its cells (the heading line left out).
std::vector<std::vector<std::string>> Rows(const std::string& text) {
  std::vector<std::vector<std::string>> out;
  for (const std::string& line : SplitLines(text))
    if (line.starts_with("  ")) out.push_back(SplitWords(line));
  return out;
}

}  // namespace

TEST_CASE("hist: counts and sums by bucket equal what the program did") {
  std::string tracefs = RealTracefsOrSkip();
  std::string bin = FixturePath("types");
  // With --max kprobectl counts wherever it runs; without, the kernel
  // counts where it can.
  for (bool with_max : {false, true}) {
    INFO("--max: " << with_max);
    std::string group = UniqueGroup(with_max ? "hm" : "h");
    GroupCleaner cleaner(tracefs, group);
    TempDir dir;
    std::vector<std::string> args = {
        kKprobectl,          "hist",  "-x", bin,      "--probe",     group + ":tick=tick i", "-k",
        "comm,i.buckets=50", "--sum", "i",  "--sort", "i.buckets=50"};
    if (with_max) args.insert(args.end(), {"--max", "i"});
    args.insert(args.end(), {"--", bin, "200"});
    int status = Wait(Spawn(args, dir / "out", dir / "err"));
    std::string err = ReadFile(dir / "err");
    INFO(err);
    REQUIRE(status == 0);
    std::string out = ReadFile(dir / "out");
    INFO(out);
    // Four buckets of 50 calls; i = 50k..50k+49 sums to 2500k + 1225.
    std::vector<std::vector<std::string>> expected = {
        {"comm", "i.buckets=50", "hits", "sum(i)", "max(i)"}, {"types", "[0,", "50)", "50", "1225", "49"},
        {"types", "[50,", "100)", "50", "3725", "99"},        {"types", "[100,", "150)", "50", "6225", "149"},
        {"types", "[150,", "200)", "50", "8725", "199"},
    };
    if (!with_max)
      for (auto& row : expected) row.pop_back();
    CHECK(Rows(out) == expected);
    CHECK(out.starts_with(group + ":tick: 200 hits\n"));
    std::string note;
    if (!KernelCounts(tracefs))
      note =
          "kprobectl: this kernel has no hist triggers (CONFIG_HIST_TRIGGERS): aggregating in kprobectl, which "
          "copies every event\n";
    else if (with_max)
      note =
          "kprobectl: --max i: a hist trigger sums its values and keeps no maximum: aggregating in kprobectl, "
          "which copies every event\n";
    if (!note.empty()) {
      CHECK(err.find(note) != std::string::npos);
      CHECK(err.find("kprobectl: 200 events counted, 0 lost") != std::string::npos);
    } else {
      CHECK(err.find("aggregating in kprobectl") == std::string::npos);
    }
    CheckNothingLeft(tracefs, group);
  }
}

TEST_CASE("hist: a string key, log2 buckets, --top") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("hs");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  std::string bin = FixturePath("types");
  // all_types is called twice: str "quote..." then "", bad NULL then "ok".
  int status = Wait(Spawn({kKprobectl, "hist", "-x", bin, "--probe", group + ":all=all_types bad:string u8", "-k", "u8",
                           "--top", "1", "--", bin, "3"},
                          dir / "out", dir / "err"));
  INFO(ReadFile(dir / "err"));
  REQUIRE(status == 0);
  // u8 was 255 and 0, once each: the first by count, then by key.
  std::string out = ReadFile(dir / "out");
  CHECK(out.starts_with(group + ":all: 2 hits, top 1 of 2 rows\n"));
  CHECK(Rows(out) == std::vector<std::vector<std::string>>{{"u8", "hits"}, {"0", "1"}});
  CheckNothingLeft(tracefs, group);

  group = UniqueGroup("hb");
  GroupCleaner cleaner2(tracefs, group);
  status = Wait(Spawn({kKprobectl, "hist", "-x", bin, "--probe", group + ":all=all_types bad:string u8", "-k",
                       "bad,u8.log2", "--", bin, "0"},
                      dir / "out", dir / "err"));
  REQUIRE(status == 0);

  // u8 is 255 then 0: (128, 256] and [0, 1]; bad a fault then "ok", quoted.
  std::vector<std::vector<std::string>> expected = {
      {"bad", "u8.log2", "hits"}, {"\"ok\"", "[0,", "1]", "1"}, {"(fault)", "(128,", "256]", "1"}};
  // The kernel keeps a string it could not read as the empty string.
  if (KernelCounts(tracefs))
    expected = {{"bad", "u8.log2", "hits"}, {"\"\"", "(128,", "256]", "1"}, {"\"ok\"", "[0,", "1]", "1"}};
  CHECK(Rows(ReadFile(dir / "out")) == expected);
  CheckNothingLeft(tracefs, group);
}

TEST_CASE("hist: -i reports each interval, a signal stops it, leaving nothing") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("hi");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  std::string bin = FixturePath("types");
  int hist = Spawn({kKprobectl, "hist", "-i", "0.2", "-x", bin, "--probe", group + ":tick=tick i", "-k", "comm"},
                   dir / "out", dir / "err");
  REQUIRE(WaitFor([&] { return HasInstances(tracefs) && std::filesystem::exists(tracefs + "/events/" + group); }));
  int worker = Spawn({bin, "1000000", "2000"});
  CHECK(WaitFor([&] {
    std::string out = ReadFile(dir / "out");
    return out.find("types") != std::string::npos && out.find(" hits\n", out.find("types")) != std::string::npos;
  }));
  kill(hist, SIGINT);
  CHECK(Wait(hist) == 0);
  kill(worker, SIGKILL);
  Wait(worker);
  // Each report counts its interval only; none holds more than the worker
  // made in it (2000 a second, 0.2 s: far below 2000).
  for (const auto& row : Rows(ReadFile(dir / "out")))
    if (row[0] == "types") CHECK(std::stoul(row[1]) < 2000);
  CheckNothingLeft(tracefs, group);
}

TEST_CASE("hist: bad keys and values are refused, nothing written") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("hx");
  GroupCleaner cleaner(tracefs, group);
  std::string bin = FixturePath("types");
  struct Case {
    std::vector<std::string> args;
    std::string error;
  };
  std::vector<Case> cases = {
      {{"-k", "fd"}, "kprobectl: error: --key 'fd': " + group + ":tick has no argument 'fd' (its arguments: i)\n"},
      {{"-k", "i.buckets=0"}, "kprobectl: error: --key 'i.buckets=0': a bucket size of 0\n"},
      {{"--sum", "s"}, "kprobectl: error: --sum 's': " + group + ":tick has no argument 's' (its arguments: i)\n"},
      {{"-k", "ustack.log2"}, "kprobectl: error: --key 'ustack.log2': a stack has no modifier ('.log2')\n"},
      {{"-k", "kstack,stacktrace"}, "kprobectl: error: --key 'stacktrace' is given twice\n"},
      {{"-k", "kstack", "--latency"},
       "kprobectl: error: --latency with a stack key: the time is counted at the return, whose stack is not the "
       "call's\n"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {kKprobectl, "hist", "-x", bin, "--probe", group + ":tick=tick i"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    args.insert(args.end(), {"--", bin, "3"});
    TempDir dir;
    CHECK(Wait(Spawn(args, dir / "out", dir / "err")) == 1);
    CHECK(ReadFile(dir / "err").starts_with(c.error));
    CHECK(ReadFile(dir / "out").empty());
    CheckNothingLeft(tracefs, group);
  }
}

// How many of a --latency table's calls took at least `ns` (by the buckets'
// lower bounds: a row "(A, B]" holds calls that took more than A).
uint64_t AtLeast(const std::vector<std::vector<std::string>>& rows, uint64_t ns) {
  uint64_t n = 0;
  for (const auto& row : rows)
    if (row.size() == 4 && row[1].starts_with("(") && std::stoull(row[1].substr(1)) + 1 >= ns) n += std::stoull(row[3]);
  return n;
}

TEST_CASE("hist --latency: each nap in a bucket of its length or more, as trace --latency has it") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("hl");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  std::string bin = FixturePath("sleeper");
  // 3, 12 and 48 ms: each in (2^21, 2^22] ns, (2^23, 2^24], (2^25, 2^26]
  // unless it overshoots by a quarter or more (which a VM's timers do):
  // each call is counted once, in its nap's bucket or one above it.
  std::vector<std::string> naps = {"3000x4", "12000x3", "48000x2"};
  std::vector<std::string> args = {kKprobectl, "hist", "--latency", "-x", bin, "--probe", group + ":nap=nap%return",
                                   "--",       bin};
  args.insert(args.end(), naps.begin(), naps.end());
  int status = Wait(Spawn(args, dir / "out", dir / "err"));
  INFO(ReadFile(dir / "err"));
  REQUIRE(status == 0);
  std::string out = ReadFile(dir / "out");
  INFO(out);
  auto rows = Rows(out);
  REQUIRE(!rows.empty());
  CHECK(rows[0] == std::vector<std::string>{"comm", "ns.log2", "hits"});
  rows.erase(rows.begin());
  for (const auto& row : rows) CHECK(row[0] == "sleeper");
  CHECK(out.starts_with(group + ":nap__return: 9 hits\n"));
  CHECK(AtLeast(rows, 2097152) == 9);
  CHECK(AtLeast(rows, 8388608) >= 5);
  CHECK(AtLeast(rows, 33554432) >= 2);
  CHECK(AtLeast(rows, 134217728) == 0);
  CheckNothingLeft(tracefs, group);

  // trace --latency, paired in kprobectl from every event: 9 calls, none
  // shorter than 2 ms.
  args[1] = "trace";
  args.insert(args.begin() + 3, {"-o", dir / "trace"});
  REQUIRE(Wait(Spawn(args, dir / "out", dir / "err")) == 0);
  std::string histogram = ReadFile(dir / "err");
  INFO(histogram);
  CHECK(histogram.find("nap: 9 calls, min ") != std::string::npos);
  size_t min = histogram.find("min ");
  REQUIRE(min != std::string::npos);
  CHECK(std::stoull(histogram.substr(min + 4)) >= 3000000);
  CheckNothingLeft(tracefs, group);
}

namespace {

// A stack key's rows: the frames of each (a row's first line has its count
// last, the lines under it a frame each), and its count.
std::vector<std::pair<std::vector<std::string>, uint64_t>> StackRows(const std::string& text) {
  std::vector<std::pair<std::vector<std::string>, uint64_t>> out;
  for (const std::string& line : SplitLines(text)) {
    auto words = SplitWords(line);
    if (!line.starts_with("  ") || words.empty() || words[0] == "ustack" || words[0] == "comm") continue;
    bool first = line.find_first_not_of(' ') == 2 && std::isdigit(static_cast<unsigned char>(line.back()));
    if (first) {
      out.emplace_back(std::vector<std::string>{}, std::stoull(words.back()));
      words.pop_back();
    }
    if (!out.empty()) out.back().first.push_back(Join(words, " "));
  }
  return out;
}

}  // namespace

TEST_CASE("hist -k ustack: one function's two callers, counted by their stacks") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("hu");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  std::string bin = FixturePath("callers");
  // work() 30 times from caller_a, 7 from caller_b: unwound through CFI
  // (-O2, no frame pointers), named as trace --stack names them.
  int status =
      Wait(Spawn({kKprobectl, "hist", "-x", bin, "--probe", group + ":w=work", "-k", "ustack", "--", bin, "30", "7"},
                 dir / "out", dir / "err"));
  std::string err = ReadFile(dir / "err");
  INFO(err);
  REQUIRE(status == 0);
  std::string out = ReadFile(dir / "out");
  INFO(out);
  CHECK(out.starts_with(group + ":w: 37 hits\n"));
  CHECK(err.find("kprobectl: -k ustack: the kernel's hist triggers have no user-stack key (kprobectl unwinds each "
                 "event's user stack): aggregating in kprobectl, which copies every event\n") != std::string::npos);
  auto rows = StackRows(out);
  REQUIRE(rows.size() == 2);
  std::string in = " (" + bin + ")";
  for (auto [index, caller, count] : {std::tuple{0, "caller_a+0x", 30}, std::tuple{1, "caller_b+0x", 7}}) {
    const auto& [frames, hits] = rows[static_cast<size_t>(index)];
    INFO(Join(frames, " | "));
    CHECK(hits == static_cast<uint64_t>(count));
    REQUIRE(frames.size() >= 3);
    CHECK(frames[0] == "work+0x0" + in);
    CHECK(frames[1].starts_with(caller));
    CHECK(frames[1].ends_with(in));
    CHECK(frames[2].starts_with("main+0x"));
  }
  CheckNothingLeft(tracefs, group);
}

TEST_CASE("hist -k kstack on a uprobe: the kernel's stack, said to be the breakpoint's") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("hk");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  std::string bin = FixturePath("callers");
  int status = Wait(
      Spawn({kKprobectl, "hist", "-x", bin, "--probe", group + ":w=work", "-k", "comm,kstack", "--", bin, "3", "2"},
            dir / "out", dir / "err"));
  std::string err = ReadFile(dir / "err");
  INFO(err);
  REQUIRE(status == 0);
  std::string out = ReadFile(dir / "out");
  INFO(out);
  CHECK(err.find("kprobectl: -k kstack on " + group + ":w, a uprobe: its kernel stack is the breakpoint's handling") !=
        std::string::npos);
  // One stack, all five calls, named from kallsyms.
  CHECK(out.starts_with(group + ":w: 5 hits\n"));
  auto rows = StackRows(out);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].second == 5);
  CHECK(rows[0].first[0].starts_with("callers "));
  // The breakpoint's handling: uprobe_dispatcher and its callers (the
  // kernel's hist trigger skips some of what options/stacktrace records).
  CHECK(out.find("uprobe") != std::string::npos);
  CheckNothingLeft(tracefs, group);
}
