// SPDX-License-Identifier: GPL-2.0-or-later
//
// Aggregations: the words parsed and checked against a probe's arguments
// (whole error messages), the hist trigger written, the kernel's hist file
// read back (captured from Linux 6.1 in a VM: tests/data/hist), and the
// fallback aggregator fed records built here, printing what the kernel's
// buckets print.
#include "kprobectl/aggregation.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>

#include "kprobectl/leftovers.h"
#include "kprobectl/strings.h"
#include "kprobectl/tracefs_dir.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

TraceEventDef Work() {
  return *ParseDefinition("p:samp/work /tmp/loop:0x1149 n=%di:s32 s=+0(%si):string size=%dx:u64 p=%cx",
                          ProbeKind::kUser);
}

AggregationSpec Bound(AggregationWords words) { return *BindAggregation(*ParseAggregation(words), Work()); }

std::string Message(const Result<AggregationSpec>& r) {
  REQUIRE(!r);
  return r.error().message + (r.error().hint.empty() ? "" : " | " + r.error().hint);
}

// The section of a hist file with several triggers' that starts with `trigger`.
std::string Section(const std::string& text, const std::string& trigger) {
  size_t at = text.find("# trigger info: " + trigger);
  REQUIRE(at != std::string::npos);
  return text.substr(at);
}

}  // namespace

TEST_CASE("aggregation: bad words are refused, naming them") {
  struct Case {
    AggregationWords words;
    std::string error;
  };
  std::vector<Case> cases = {
      {{{"n.buckets=0"}, {}, {}, "", 0},
       "--key 'n.buckets=0': a bucket size of 0 | buckets are N wide, N > 0: n.buckets=10"},
      {{{"n.buckets=x"}, {}, {}, "", 0}, "--key 'n.buckets=x': the bucket size 'x' is not a number"},
      {{{"n.hex"}, {}, {}, "", 0},
       "--key 'n.hex': unknown modifier '.hex' | a key is comm, pid, kstack, ustack or an argument's name, which "
       "may end in .log2 or .buckets=N"},
      {{{"comm,comm"}, {}, {}, "", 0}, "--key 'comm' is given twice"},
      {{{"n"}, {}, {}, "size", 0}, "--sort 'size': no column 'size' | the columns: hits, n"},
  };
  for (const Case& c : cases) {
    INFO(c.error);
    CHECK(Message(ParseAggregation(c.words)) == c.error);
  }
}

TEST_CASE("aggregation: keys and values must be arguments that can be them") {
  struct Case {
    AggregationWords words;
    std::string error;
  };
  std::string hint = " | name the probe's arguments as you wrote them: 'SPEC n=%di'; kprobectl list shows them";
  std::vector<Case> cases = {
      {{{"fd"}, {}, {}, "", 0}, "--key 'fd': samp:work has no argument 'fd' (its arguments: n, s, size, p)" + hint},
      {{{"n"}, {"bytes"}, {}, "", 0},
       "--sum 'bytes': samp:work has no argument 'bytes' (its arguments: n, s, size, p)" + hint},
      {{{"s.log2"}, {}, {}, "", 0}, "--key 's.log2': samp:work's s is a string: it has no buckets"},
      {{{"n"}, {}, {"s"}, "", 0}, "--max 's': samp:work's s is of type string, not a number"},
  };
  for (const Case& c : cases) {
    INFO(c.error);
    CHECK(Message(BindAggregation(*ParseAggregation(c.words), Work())) == c.error);
  }
}

TEST_CASE("aggregation: the hist trigger") {
  HistSupport all{true, true, true};
  CHECK(*HistTrigger(Bound({{"comm", "n.log2"}, {"size", "size"}, {}, "", 0}), all, "", 16384) ==
        "hist:keys=common_pid.execname,n.log2:vals=hitcount,size:size=16384");
  CHECK(*HistTrigger(Bound({{"pid,s,n.buckets=10"}, {}, {}, "", 0}), all, "n > 3", 2048) ==
        "hist:keys=common_pid,s,n.buckets=10:vals=hitcount:size=2048 if n > 3");
  auto no_buckets = HistTrigger(Bound({{"n.buckets=10"}, {}, {}, "", 0}), HistSupport{true, false, false}, "", 2048);
  REQUIRE(!no_buckets);
  CHECK(no_buckets.error().message ==
        "--key 'n.buckets=10': this kernel's hist triggers have no .buckets (Linux 5.19)");
  auto max = HistTrigger(Bound({{"comm"}, {}, {"size"}, "", 0}), all, "", 2048);
  REQUIRE(!max);
  CHECK(max.error().message == "--max size: a hist trigger sums its values; it keeps no maximum per key");
}

TEST_CASE("aggregation: the README tells what the hist triggers take") {
  std::string readme = ReadFile(DataPath("kernels/6.12/README"));
  HistSupport s = ParseFeatures(readme, true, true).hist;
  CHECK(s.hist);
  CHECK(s.buckets);
  CHECK(s.synthetic);
  HistSupport none = ParseFeatures(ReadFile(DataPath("readme-linux-6.18-no-kprobes.txt")), false, true).hist;
  CHECK_FALSE(none.hist);
  CHECK_FALSE(none.synthetic);
}

TEST_CASE("aggregation: the kernel's hist file read back (Linux 6.1)") {
  std::string text = ReadFile(DataPath("hist/uprobe-4-triggers-linux-6.1.txt"));
  auto by_comm = Bound({{"comm,n"}, {}, {}, "", 0});
  AggTable t = *ParseKernelHist(Section(text, "hist:keys=common_pid.execname,n"), by_comm, "samp:work");
  CHECK(t.hits == 30);
  CHECK(FormatTable(t, by_comm) ==
        "samp:work: 30 hits\n"
        "  comm  n  hits\n"
        "  loop  0     5\n"
        "  loop  1     5\n"
        "  loop  2     4\n"
        "  loop  3     4\n"
        "  loop  4     4\n"
        "  loop  5     4\n"
        "  loop  6     4\n");
  auto by_string = Bound({{"s"}, {"n"}, {}, "s", 0});
  t = *ParseKernelHist(Section(text, "hist:keys=s:"), by_string, "samp:work");
  CHECK(FormatTable(t, by_string) ==
        "samp:work: 30 hits\n"
        "  s        hits  sum(n)\n"
        "  \"alpha\"    10      30\n"
        "  \"beta\"     10      26\n"
        "  \"gamma\"    10      29\n");
  auto log2 = Bound({{"n.log2"}, {}, {}, "n.log2", 0});
  t = *ParseKernelHist(Section(text, "hist:keys=n.log2"), log2, "samp:work");
  CHECK(FormatTable(t, log2) ==
        "samp:work: 30 hits\n"
        "  n.log2  hits\n"
        "  [0, 1]    10\n"
        "  (1, 2]     4\n"
        "  (2, 4]     8\n"
        "  (4, 8]     8\n");
  auto linear = Bound({{"n.buckets=3"}, {"n"}, {}, "", 2});
  t = *ParseKernelHist(Section(text, "hist:keys=n.buckets=3"), linear, "samp:work");
  CHECK(FormatTable(t, linear) ==
        "samp:work: 30 hits, top 2 of 3 rows\n"
        "  n.buckets=3  hits  sum(n)\n"
        "       [0, 3)    14      13\n"
        "       [3, 6)    12      48\n");
  auto kernel =
      *BindAggregation(*ParseAggregation({{"fd"}, {"count"}, {}, "", 0}),
                       *ParseDefinition("p:samp/ksys ksys_read fd=%di:s32 count=%dx:u64", ProbeKind::kKernel));
  t = *ParseKernelHist(ReadFile(DataPath("hist/kprobe-fd-count-linux-6.1.txt")), kernel, "samp:ksys");
  CHECK(FormatTable(t, kernel) ==
        "samp:ksys: 8 hits\n"
        "   fd  hits  sum(count)\n"
        "    3     7      395812\n"
        "  255     1        2909\n");
  auto broken = ParseKernelHist("{ fd: x } hitcount: 1\n", kernel, "samp:ksys");
  REQUIRE(!broken);
  CHECK(broken.error().message == "cannot read samp:ksys's hist line: { fd: x } hitcount: 1");
  // A bucket past a 64-bit value's (the serve fuzz target's: a shift by 3126).
  auto widest = ParseKernelHist("{ n: ~ 2^64  } hitcount:          1\n\nTotals:\n    Hits: 1\n", log2, "samp:work");
  REQUIRE(widest);
  t = *widest;
  CHECK(FormatTable(t, log2) ==
        "samp:work: 1 hits\n"
        "                       n.log2  hits\n"
        "  (9223372036854775808, 2^64]     1\n");
  auto too_far = ParseKernelHist("{ n: ~ 2^3127  } hitcount:          1\n", log2, "samp:work");
  REQUIRE(!too_far);
  CHECK(too_far.error().message == "cannot read samp:work's hist line: { n: ~ 2^3127  } hitcount:          1");
}

TEST_CASE("aggregation: log2 buckets are the kernel's") {
  std::vector<std::pair<uint64_t, uint64_t>> cases = {{0, 0}, {1, 0}, {2, 1},     {3, 2},     {4, 2},    {5, 3},
                                                      {8, 3}, {9, 4}, {1000, 10}, {1024, 10}, {1025, 11}};
  for (auto [value, bucket] : cases) {
    INFO(value);
    CHECK(Log2Bucket(value) == bucket);
  }
}

TEST_CASE("aggregation: counted in kprobectl, as the kernel would") {
  // The event: common fields (8 bytes), n (s32) at 8, s (__data_loc) at 12,
  // size (u64) at 16, then the strings.
  EventFormat format{7,
                     "samp",
                     "work",
                     {{"n", 8, 4, true, false, 0},
                      {"s", 12, 4, false, true, 0},
                      {"size", 16, 8, false, false, 0},
                      {"p", 24, 8, false, false, 0}},
                     ""};
  auto spec = Bound({{"comm,s,n.log2"}, {"size"}, {"n"}, "", 0});
  auto agg = *UserAggregator::Create(spec, format, [](int pid) { return pid == 10 ? "loop" : "other"; });
  std::vector<std::string> storage;
  auto add = [&](int pid, int32_t n, const std::string& s, uint64_t size) {
    std::string data(32, '\0');
    uint32_t loc = static_cast<uint32_t>((s.size() + 1) << 16 | 32);
    data.replace(8, 4, reinterpret_cast<const char*>(&n), 4);
    data.replace(12, 4, reinterpret_cast<const char*>(&loc), 4);
    data.replace(16, 8, reinterpret_cast<const char*>(&size), 8);
    data += s + '\0';
    storage.reserve(8);
    storage.push_back(data);
    Record r;
    r.pid = pid;
    r.type = 7;
    r.data = reinterpret_cast<const uint8_t*>(storage.back().data());
    r.size = static_cast<unsigned>(storage.back().size());
    agg.Add(r);
  };
  add(10, 5, "alpha", 100);
  add(11, 6, "alpha", 1);
  add(10, 7, "alpha", 10);
  add(10, 1, "beta", 3);
  add(10, 0, "beta", 4);
  CHECK(FormatTable(agg.Table("samp:work"), spec) ==
        "samp:work: 5 hits\n"
        "  comm   s        n.log2  hits  sum(size)  max(n)\n"
        "  loop   \"alpha\"  (4, 8]     2        110       7\n"
        "  loop   \"beta\"   [0, 1]     2          7       1\n"
        "  other  \"alpha\"  (4, 8]     1          1       6\n");
  agg.Clear();
  CHECK(agg.Table("samp:work").rows.empty());
}

TEST_CASE("aggregation: latency paired in the kernel by a synthetic event") {
  LatencyTriggers t = MakeLatencyTriggers("kplat0_42", "probe.nap__entry", "0_42");
  CHECK(t.fields == "u64 ns");
  CHECK(t.entry == "hist:keys=common_pid:kpts0_42=common_timestamp");
  CHECK(
      t.ret ==
      "hist:keys=common_pid:kpns0_42=common_timestamp-$kpts0_42:onmatch(probe.nap__entry).trace(kplat0_42,$kpns0_42)");
}

TEST_CASE("leftovers: a dead run's synthetic events are found and removed after its instance") {
  TempDir tracefs_dir, registry;
  TracefsDir tracefs(tracefs_dir.path());
  std::filesystem::create_directories(tracefs_dir / "instances/kprobectl-4242");
  WriteFile(tracefs_dir / "uprobe_events", "");
  // Another tool's synthetic event, a live run's, a dead run's.
  WriteFile(tracefs_dir / "synthetic_events",
            "wakeup_latency u64 lat; pid_t pid\nkplat0_77 u64 ns\nkplat0_4242 u64 ns\n");
  auto alive = [](const TraceRun& run) { return run.pid == 77; };
  auto found = FindLeftovers(tracefs, registry.path(), alive);
  REQUIRE(found);
  REQUIRE(found->size() == 1);
  CHECK((*found)[0].run.pid == 4242);
  CHECK((*found)[0].instances == std::vector<std::string>{"instances/kprobectl-4242"});
  CHECK((*found)[0].synthetic == std::vector<std::string>{"kplat0_4242"});
  std::vector<std::string> written;
  auto account = RemoveLeftover(tracefs, (*found)[0], [&](std::string_view line) { written.emplace_back(line); });
  REQUIRE(account);
  CHECK(*account ==
        "removed what kprobectl trace (pid 4242) left behind when it was stopped without cleaning up: "
        "kprobectl-4242, synthetic/kplat0_4242");
  CHECK(written == std::vector<std::string>{"rmdir " + tracefs.PathOf("instances/kprobectl-4242"),
                                            "append " + tracefs.PathOf("synthetic_events") + ": !kplat0_4242"});
}

TEST_CASE("aggregation: hist triggers of the VM's kernels, from their READMEs and trigger files") {
  auto support = [](const std::string& version) {
    HistSupport s = ParseFeatures(ReadFile(DataPath("kernels/" + version + "/README")), true, true).hist;
    return std::string(s.hist ? "hist" : "no hist") + (s.buckets ? ", buckets" : "") +
           (s.synthetic ? ", synthetic" : "");
  };
  // Debian's 5.10 cloud kernel: # CONFIG_HIST_TRIGGERS is not set.
  CHECK(support("5.10") == "no hist");
  CHECK(support("6.1") == "hist, buckets, synthetic");
  CHECK(support("6.12") == "hist, buckets, synthetic");
  CHECK(support("7.3") == "hist, buckets, synthetic");
  // The triggers an event takes agree.
  CHECK(ReadFile(DataPath("kernels/5.10/trigger")) ==
        "# Available triggers:\n# traceon traceoff snapshot stacktrace enable_event disable_event\n");
  CHECK(ReadFile(DataPath("kernels/7.3/trigger")) ==
        "# Available triggers:\n# traceon traceoff snapshot stacktrace enable_event disable_event enable_hist "
        "disable_hist hist\n");
}
