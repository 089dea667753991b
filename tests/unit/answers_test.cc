// SPDX-License-Identifier: GPL-2.0-or-later
//
// The answers said another way: hist's tables as JSON, as a flame graph's
// stacks, as percentiles and heat map columns; trace's stacks counted and
// its calls paired into a timeline; the formats chosen, and refused where
// they cannot be drawn; kernel frames named with their module.
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "cli/outputs.h"
#include "cli/trace_answers.h"
#include "json_check.h"
#include "kprobectl/aggregation_outputs.h"
#include "kprobectl/call_pairing.h"
#include "kprobectl/trace_symbols.h"
#include "kprobectl/tracefs_dir.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::cli;
using namespace kprobectl::test;

namespace {

TraceEventDef Tick() {
  return *ParseDefinition("p:kpt/tick /bin/types:0x1149 s=+0(%si):string n=%di:u64 m=%dx:s32 x=%cx:x64",
                          ProbeKind::kUser);
}

AggregationSpec Bound(const std::string& keys, const TraceEventDef& def = Tick()) {
  return *BindAggregation(*ParseAggregation({{keys}, {"n"}, {}, "", 0}), def);
}

AggCell Quoted(std::string_view bytes) {
  std::string text;
  AppendCString(text, bytes);
  return AggCell{text, 0, false};
}

}  // namespace

TEST_CASE("answers: hist's table as JSON, every kind of key") {
  AggregationSpec spec = Bound("comm,s,n.log2,m.buckets=10,x,ustack");
  AggTable table;
  table.event = "kpt:tick";
  table.hits = 5;
  AggRow row;
  row.keys = {AggCell{"types", 0, false},     Quoted("a\"b\n\xff"),
              NumberCell(spec.keys[2], 3000), NumberCell(spec.keys[3], 15),
              NumberCell(spec.keys[4], 0x1f), StackCell({"work+0x0 (/bin/types)", "main+0x1a (/bin/types)"})};
  row.count = 4;
  row.values = {12};
  AggRow fault = row;
  fault.keys[1] = AggCell{"(fault)", 0, false};
  fault.keys[5] = StackCell({});
  fault.count = 1;
  table.rows = {fault, row};
  std::string json = TableJson(table, spec, false, "\"interval\":2");
  CHECK(json ==
        "{\"event\":\"kpt:tick\",\"interval\":2,\"hits\":5,\"dropped\":0,\"counted_in\":\"kprobectl\",\"rows\":["
        "{\"keys\":{\"comm\":\"types\",\"s\":\"a\\\"b\\n\\u00ff\",\"n.log2\":{\"bucket\":\"(2048, 4096]\",\"min\":2049,"
        "\"max\":4096},\"m.buckets=10\":{\"bucket\":\"[10, 20)\",\"min\":10,\"max\":19},\"x\":\"0x1f\",\"ustack\":["
        "\"work+0x0 (/bin/types)\",\"main+0x1a (/bin/types)\"]},\"hits\":4,\"values\":{\"sum(n)\":12}},"
        "{\"keys\":{\"comm\":\"types\",\"s\":null,\"n.log2\":{\"bucket\":\"(2048, 4096]\",\"min\":2049,\"max\":4096},"
        "\"m.buckets=10\":{\"bucket\":\"[10, 20)\",\"min\":10,\"max\":19},\"x\":\"0x1f\",\"ustack\":[]},\"hits\":1,"
        "\"values\":{\"sum(n)\":12}}]}\n");
  CHECK(JsonValid(json.substr(0, json.size() - 1)));
  // pid and exact numbers are numbers; the kernel's count says so.
  AggregationSpec plain = Bound("pid,n");
  AggTable small{"kpt:tick", {AggRow{{NumberCell(plain.keys[0], 42), NumberCell(plain.keys[1], 7)}, 1, {7}}}, 1, 3};
  CHECK(TableJson(small, plain, true) ==
        "{\"event\":\"kpt:tick\",\"hits\":1,\"dropped\":3,\"counted_in\":\"kernel\",\"rows\":[{\"keys\":{\"pid\":42,"
        "\"n\":7},\"hits\":1,\"values\":{\"sum(n)\":7}}]}\n");
}

TEST_CASE("answers: hist's stack keys as a flame graph's stacks, other keys below them") {
  AggregationSpec user = Bound("comm,ustack");
  AggregationSpec kernel = Bound("kstack");
  AggTable a{
      "kpt:tick",
      {AggRow{{AggCell{"types", 0, false}, StackCell({"work+0x0 (/bin/types)", "main+0x1a (/bin/types)"})}, 30, {}},
       AggRow{{AggCell{"sh", 0, false}, StackCell({})}, 2, {}}},
      32,
      0};
  AggTable b{"kpt:open",
             {AggRow{{StackCell({"do_sys_openat2+0x5", "__x64_sys_openat+0x6e [wrap]", "do_syscall_64+0x87"})}, 5, {}}},
             5,
             0};
  // Kernel frames marked, since user frames are in the same picture.
  CHECK(FoldedStacks(StackProfileOf({a, b}, {user, kernel})) ==
        "kpt:open;do_syscall_64_[k];__x64_sys_openat_[k];do_sys_openat2_[k] 5\n"
        "kpt:tick;sh 2\n"
        "kpt:tick;types;main;work 30\n");
  CHECK(FoldedStacks(StackProfileOf({a}, {user})) == "sh 2\ntypes;main;work 30\n");
  StackProfile profile = StackProfileOf({b}, {kernel});
  REQUIRE(profile.stacks.size() == 1);
  CHECK(profile.stacks[0].frames[1] == StackFrame{"__x64_sys_openat", "wrap", StackFrame::kKernel});
}

TEST_CASE("answers: a --latency table's percentiles, as bounds, and its heat map column") {
  TraceEventDef timed = *ParseDefinition("r:kpt/nap /bin/sleeper:0x1149 ns=%ax:u64", ProbeKind::kUser);
  AggregationSpec spec = *BindAggregation(*ParseAggregation({{"comm,ns.log2"}, {}, {}, "", 0}), timed);
  auto row = [&](const std::string& comm, uint64_t ns, uint64_t n) {
    return AggRow{{AggCell{comm, 0, false}, NumberCell(spec.keys[1], ns)}, n, {}};
  };
  AggTable first{"kpt:nap", {row("a", 3000000, 4), row("b", 3000000, 1), row("a", 50000000, 1)}, 6, 0};
  CHECK(QuantileLine(LatencyQuantiles(first, spec), "ns") ==
        "p50 in (2097152, 4194304] ns, p90 in (33554432, 67108864] ns, p99 in (33554432, 67108864] ns, p99.9 in "
        "(33554432, 67108864] ns, max in (33554432, 67108864] ns (bounds: only buckets were counted)");
  AggTable second{"kpt:nap", {row("a", 12000000, 2)}, 2, 0};
  HeatMapSeries series = LatencySeries({first, AggTable{"kpt:nap", {}, 0, 0}, second}, spec);
  CHECK(series.name == "kpt:nap");
  CHECK(series.buckets == std::vector<std::string>{"(2097152, 4194304]", "(4194304, 8388608]", "(8388608, 16777216]",
                                                   "(16777216, 33554432]", "(33554432, 67108864]"});
  CHECK(series.cells == std::vector<std::vector<uint64_t>>{{5, 0, 0, 0, 1}, {0, 0, 0, 0, 0}, {0, 0, 2, 0, 0}});
  // 8 calls: ranks 4 and 8 (and 8, 8) of 5, 2 and 1.
  CHECK(series.summary ==
        "8 calls: p50 in (2097152, 4194304] ns, p90 in (33554432, 67108864] ns, p99 in (33554432, 67108864] ns, "
        "p99.9 in (33554432, 67108864] ns, max in (33554432, 67108864] ns (bounds: only buckets were counted)");
  // An exact key: exact percentiles.
  AggregationSpec exact = *BindAggregation(*ParseAggregation({{"ns"}, {}, {}, "", 0}), timed);
  AggTable values{"kpt:nap",
                  {AggRow{{NumberCell(exact.keys[0], 10)}, 9, {}}, AggRow{{NumberCell(exact.keys[0], 90)}, 1, {}}},
                  10,
                  0};
  CHECK(QuantileLine(LatencyQuantiles(values, exact), "ns") ==
        "p50 10 ns, p90 10 ns, p99 90 ns, p99.9 90 ns, max 90 ns (exact: each call was seen)");
}

TEST_CASE("answers: the format asked for, and what cannot be drawn refused") {
  auto error = [](TraceOptions t) {
    auto r = ChooseFormat(t);
    REQUIRE(!r);
    return r.error().message + " | " + r.error().hint;
  };
  TraceOptions trace;
  CHECK(*ChooseFormat(trace) == OutputFormat::kText);
  trace.json = true;
  CHECK(*ChooseFormat(trace) == OutputFormat::kJson);
  trace.format = "folded";
  CHECK(error(trace) == "--json and --format folded ask for two formats | give one of them");
  trace.json = false;
  CHECK(*ChooseFormat(trace) == OutputFormat::kFolded);
  CHECK(WithFormatNeeds(trace, OutputFormat::kFolded).stack == "auto");
  trace.format = "svg";
  CHECK(error(trace) ==
        "--format svg: no such format | trace writes text, json, folded, flamegraph, heatmap or timeline");
  trace.format = "heatmap";
  CHECK(error(trace) ==
        "--format heatmap draws the times --latency takes | add --latency, with return probes: --probe "
        "'FUNC%return'");
  trace.format = "timeline";
  trace.stack = "user";
  CHECK(error(trace) ==
        "--stack with --format timeline: a timeline has no stacks | --format flamegraph draws the stacks");
  trace.stack.clear();
  CHECK(WithFormatNeeds(trace, *ChooseFormat(trace)).latency);
  TraceOptions hist;
  hist.aggregate = AggregationWords{{"comm"}, {}, {}, "", 0};
  hist.format = "flamegraph";
  CHECK(error(hist) ==
        "--format flamegraph draws stacks, and hist counts none here | count by a stack: -k kstack (the kernel's) "
        "or -k ustack (user space's)");
  hist.aggregate->keys = {"comm,ustack"};
  CHECK(*ChooseFormat(hist) == OutputFormat::kFlameGraph);
  hist.interval = 1;
  CHECK(error(hist) ==
        "-i with --format flamegraph: the picture is written once, when counting ends | leave -i out, or use "
        "--json for a stream of tables");
  hist.format = "timeline";
  CHECK(error(hist) ==
        "--format timeline: hist keeps no events | hist writes text, json, folded, flamegraph or heatmap; a "
        "timeline is 'kprobectl trace --format timeline'");
  hist.format = "heatmap";
  hist.latency = true;
  hist.interval = 0;
  CHECK(WithFormatNeeds(hist, *ChooseFormat(hist)).interval == 1);
  hist.cumulative = true;
  CHECK(error(hist) == "--cumulative with --format heatmap: each column is what its interval counted | ");
}

TEST_CASE("answers: trace's stacks counted, a kernel probe's from its function on") {
  EventPlan open;
  open.id = 3;
  open.full_name = "kpt:open";
  EventPlan hidden = open;
  hidden.id = 4;
  hidden.hidden = true;
  StackCounter counter({{3, "do_sys_openat2"}}, false);
  Printer::Frames frames;
  frames.kernel = {"kprobe_ftrace_handler+0x13b", "0xffffffffc02920de", "do_sys_openat2+0x5", "__x64_sys_openat+0x6e",
                   "do_syscall_64+0x87"};
  frames.user = {"open64+0x4 (/lib/libc.so.6)", "main+0x1a (/bin/cat)"};
  counter.Add(open, frames);
  counter.Add(open, frames);
  counter.Add(hidden, frames);
  CHECK(counter.events() == 2);
  CHECK(FoldedStacks(counter.Profile()) == "main;open64;do_syscall_64_[k];__x64_sys_openat_[k];do_sys_openat2_[k] 2\n");
}

namespace {

// A probe's plan with one s32 argument: an entry ("i") or a return ("r").
EventPlan Plan(int id, const std::string& name, bool ret, const std::string& arg) {
  EventFormat f;
  f.id = id;
  f.system = "kpt";
  f.name = name;
  if (ret) {
    f.fields = {{"__probe_func", 8, 8, false, false, 0},
                {"__probe_ret_ip", 16, 8, false, false, 0},
                {arg, 24, 4, true, false, 0}};
    f.print_fmt = "(%lx <- %lx) " + arg + "=%d";
  } else {
    f.fields = {{"__probe_ip", 8, 8, false, false, 0}, {arg, 16, 4, true, false, 0}};
    f.print_fmt = "(%lx) " + arg + "=%d";
  }
  EventPlan plan = *PlanEvent(f);
  // An entry opens a call its function's return ends (trace_plan.h).
  std::string key = "/bin/callers:" + name.substr(0, name.find("__"));
  if (ret)
    plan.call_key = key;
  else
    plan.opens = {key};
  plan.location = ret ? name.substr(0, name.find("__")) : name + "+0x0";
  return plan;
}

}  // namespace

TEST_CASE("answers: calls paired into a timeline's slices, nested, the unpaired as instants") {
  EventPlan outer = Plan(1, "caller_a", false, "n"), outer_ret = Plan(2, "caller_a__return", true, "s");
  EventPlan inner = Plan(3, "work", false, "i"), inner_ret = Plan(4, "work__return", true, "r");
  EventPlan mark = Plan(5, "mark", false, "m");
  mark.opens.clear();
  EventPlan lone = Plan(6, "caller_b", false, "n");  // no return probe of caller_b
  lone.opens.clear();
  outer_ret.caller = [](int, uint64_t, uint64_t ret) { return ret == 0x99 ? std::string("main+0x1c") : std::string(); };
  Printer printer(
      {true, false, {}}, [](int) { return std::string("callers"); }, nullptr);
  CallPairing pairing;
  TimelineRecorder recorder(
      printer, [](int pid) { return pid == 7 ? std::string("worker") : std::string("callers"); },
      [](int tid) { return tid == 8 ? 0 : 6; });
  auto at = [&](const EventPlan& plan, uint64_t ts, int tid, int32_t value, uint64_t ret_ip = 0) {
    uint8_t data[32] = {};
    std::memcpy(data + 16, &ret_ip, 8);
    std::memcpy(data + (plan.retprobe ? 24 : 16), &value, 4);
    Record r;
    r.ts = ts;
    r.pid = tid;
    r.data = data;
    r.size = sizeof data;
    std::optional<OpenCall> call = pairing.Next(plan, r);
    recorder.Add(plan, r, call ? &*call : nullptr);
  };
  at(inner_ret, 900, 6, 1);  // its call began before tracing
  at(outer, 1000, 6, 2);
  at(inner, 1100, 6, 0);
  at(inner_ret, 1300, 6, 0);
  at(mark, 1400, 7, 9);
  at(lone, 1450, 6, 4);
  at(outer_ret, 2000, 6, 3, 0x99);
  at(inner, 2100, 8, 5);  // a thread gone: its own process; never returns
  recorder.Lost(1500, 1, 12);
  CHECK(recorder.events() == 8);
  std::string json = TraceEventJson(recorder.Finish("kpt:caller_a, kpt:work"));
  CHECK(
      json ==
      "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"kpt:caller_a, kpt:work\"},\"traceEvents\":[\n"
      "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":6,\"args\":{\"name\":\"callers\"}},\n"
      "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":8,\"args\":{\"name\":\"callers\"}},\n"
      "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":6,\"tid\":6,\"args\":{\"name\":\"callers\"}},\n"
      "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":6,\"tid\":6,\"args\":{\"sort_index\":6}},\n"
      "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":6,\"tid\":7,\"args\":{\"name\":\"worker\"}},\n"
      "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":6,\"tid\":7,\"args\":{\"sort_index\":7}},\n"
      "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":8,\"tid\":8,\"args\":{\"name\":\"callers\"}},\n"
      "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":8,\"tid\":8,\"args\":{\"sort_index\":8}},\n"
      "{\"ph\":\"i\",\"name\":\"kpt:work__return\",\"cat\":\"kpt\",\"pid\":6,\"tid\":6,\"ts\":0.900,\"s\":\"t\","
      "\"args\":{\"r\":1,\"caller\":\"0x0\",\"unpaired\":\"its call's entry was not recorded (began before tracing, or "
      "lost)\"}},\n"
      "{\"ph\":\"X\",\"name\":\"caller_a\",\"cat\":\"kpt\",\"pid\":6,\"tid\":6,\"ts\":1.000,\"dur\":1.000,"
      "\"args\":{\"n\":2,\"return\":{\"s\":3,\"caller\":\"main+0x1c\"}}},\n"
      "{\"ph\":\"X\",\"name\":\"work\",\"cat\":\"kpt\",\"pid\":6,\"tid\":6,\"ts\":1.100,\"dur\":0.200,"
      "\"args\":{\"i\":0,\"return\":{\"r\":0,\"caller\":\"0x0\"}}},\n"
      "{\"ph\":\"i\",\"name\":\"kpt:mark\",\"cat\":\"kpt\",\"pid\":6,\"tid\":7,\"ts\":1.400,\"s\":\"t\","
      "\"args\":{\"m\":9}},\n"
      "{\"ph\":\"i\",\"name\":\"kpt:caller_b\",\"cat\":\"kpt\",\"pid\":6,\"tid\":6,\"ts\":1.450,\"s\":\"t\","
      "\"args\":{\"n\":4}},\n"
      "{\"ph\":\"i\",\"name\":\"12 events lost (CPU 1's ring buffer overran)\",\"cat\":\"kprobectl\",\"pid\":0,"
      "\"tid\":0,\"ts\":1.500,\"s\":\"g\"},\n"
      "{\"ph\":\"i\",\"name\":\"work\",\"cat\":\"kpt\",\"pid\":8,\"tid\":8,\"ts\":2.100,\"s\":\"t\",\"args\":{\"i\":5,"
      "\"unpaired\":\"no return seen: still running when tracing stopped\"}}\n"
      "]}\n");
  CHECK(JsonValid(json));
}

TEST_CASE("answers: a module's kernel symbols are named with the module, as %pS names them") {
  KernelSymbols symbols = KernelSymbols::Parse(
      "ffffffff81000000 T _text\n"
      "ffffffff81200000 T do_sys_openat2\n"
      "ffffffffc0a00000 t ext4_file_read_iter\t[ext4]\n"
      "ffffffffc0a00100 t ext4_llseek\t[ext4]\n");
  CHECK(symbols.Lookup(0xffffffff8120001c) == "do_sys_openat2+0x1c");
  CHECK(symbols.Lookup(0xffffffffc0a0001c) == "ext4_file_read_iter+0x1c [ext4]");
  CHECK(ParseFrame(symbols.Lookup(0xffffffffc0a00104), StackFrame::kKernel) ==
        StackFrame{"ext4_llseek", "ext4", StackFrame::kKernel});
}

TEST_CASE("answers: a picture says how many events were lost, uncounted") {
  CHECK(LostText(0).empty());
  CHECK(LostText(1693) == "; 1693 more lost to ring-buffer overruns, not counted");
}

TEST_CASE("comm names: a pid reused between batches is named afresh, not from what was read before") {
  test::TempDir root;
  TracefsDir tracefs(root.path());
  std::ofstream(root / "saved_cmdlines") << "26530 kprobectl\n7 init\n";
  CommCache comms(tracefs, root / "proc");
  CHECK(comms.Lookup(26530) == "kprobectl");
  CHECK(comms.Lookup(8) == "<...>");  // gone, and never seen by the kernel
  // pid_max wrapped: 26530 is now another process, which the kernel saw.
  std::ofstream(root / "saved_cmdlines") << "26530 types\n7 init\n";
  CHECK(comms.Lookup(26530) == "kprobectl");  // within one batch: as read
  comms.Refresh();
  CHECK(comms.Lookup(26530) == "types");
  std::filesystem::create_directories(root / "proc/8");
  std::ofstream(root / "proc/8/comm") << "late\n";
  comms.Refresh();
  CHECK(comms.Lookup(8) == "late");
}
