// SPDX-License-Identifier: GPL-2.0-or-later
//
// Stack keys: -k kstack (the kernel's stacktrace key) and -k ustack
// (counted in kprobectl), their words checked, the trigger written, the
// kernel's hist file of a stacktrace key read back (captured from Linux
// 6.1 and 6.12 in the VM: tests/data/hist/kprobe-*kstack-*), and frames
// fed to the fallback aggregator printed as a column of frames.
#include <catch2/catch.hpp>

#include "kprobectl/aggregation.h"
#include "kprobectl/serve.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

std::string Message(const AggregationWords& words) {
  auto r = ParseAggregation(words);
  REQUIRE(!r);
  return r.error().message + (r.error().hint.empty() ? "" : " | " + r.error().hint);
}

AggregationSpec Spec(const std::string& keys) { return *ParseAggregation({{keys}, {}, {}, "", 0}); }

std::vector<std::vector<std::string>> Cells(const AggTable& t) {
  std::vector<std::vector<std::string>> out;
  for (const AggRow& row : t.rows) {
    std::vector<std::string> cells;
    for (const AggCell& c : row.keys) cells.push_back(c.text);
    cells.push_back(std::to_string(row.count));
    out.push_back(cells);
  }
  return out;
}

}  // namespace

TEST_CASE("aggregation: stack keys, by bpftrace's names and the kernel's") {
  for (std::string name : {"kstack", "stacktrace", "common_stacktrace"}) {
    AggregationSpec spec = Spec("comm," + name);
    CHECK(spec.keys[1].kind == AggKey::kKernelStack);
    CHECK(spec.keys[1].text == name);
    CHECK(HasKey(spec, AggKey::kKernelStack));
    CHECK_FALSE(HasKey(spec, AggKey::kUserStack));
  }
  CHECK(Spec("ustack").keys[0].kind == AggKey::kUserStack);
  CHECK(Message({{"ustack.log2"}, {}, {}, "", 0}) ==
        "--key 'ustack.log2': a stack has no modifier ('.log2') | count by the stack alone: -k ustack");
  CHECK(Message({{"kstack.buckets=10"}, {}, {}, "", 0}) ==
        "--key 'kstack.buckets=10': a stack has no modifier ('.buckets=10') | count by the stack alone: -k kstack");
  CHECK(Message({{"kstack,stacktrace"}, {}, {}, "", 0}) == "--key 'stacktrace' is given twice");
  // A stack is no argument: it binds to any event, whatever its arguments.
  TraceEventDef def = *ParseDefinition("p:samp/work /tmp/loop:0x1149", ProbeKind::kUser);
  CHECK(BindAggregation(Spec("ustack,kstack"), def));
}

TEST_CASE("aggregation: a kernel stack key's trigger, and no user stack in the kernel") {
  HistSupport all{true, true, true};
  // stacktrace: Linux 6.1 refuses common_stacktrace (6.5's name), 6.12 takes both.
  CHECK(*HistTrigger(Spec("kstack,comm"), all, "", 2048) ==
        "hist:keys=stacktrace,common_pid.execname:vals=hitcount:size=2048");
  auto user = HistTrigger(Spec("comm,ustack"), all, "", 2048);
  REQUIRE(!user);
  CHECK(user.error().message == "--key 'ustack': the kernel's hist triggers have no user-stack key");
}

TEST_CASE("aggregation: the kernel's stacktrace key read back (Linux 6.1 and 6.12)") {
  for (std::string version : {"6.1", "6.12"}) {
    INFO(version);
    // The kernel's own frames above the probed function are left out, the
    // function named alone, and the functions' sizes ("/0x170"), as trace
    // names addresses.
    AggregationSpec spec = Spec("comm,kstack");
    spec.stack_top = "do_sys_openat2";
    // (Its Totals, cut off by the capture's head -30, written from its three entries.)
    AggTable t =
        *ParseKernelHist(ReadFile(DataPath("hist/kprobe-comm-kstack-linux-" + version + ".txt")), spec, "kpst:op");
    std::string stack = version == "6.1" ? "do_sys_openat2\n__x64_sys_openat+0x6a\ndo_syscall_64+0x5d\n"
                                           "entry_SYSCALL_64_after_hwframe+0x6e"
                                         : "do_sys_openat2\n__x64_sys_openat+0x6e\ndo_syscall_64+0x87\n"
                                           "entry_SYSCALL_64_after_hwframe+0x76";
    CHECK(Cells(t) ==
          std::vector<std::vector<std::string>>{{"bash", stack, "4"}, {"cat", stack, "3"}, {"head", stack, "2"}});
    CHECK(t.hits == 9);
    // Without the function, every frame the kernel gave (a trampoline's by address).
    AggTable alone =
        *ParseKernelHist(ReadFile(DataPath("hist/kprobe-kstack-linux-" + version + ".txt")), Spec("kstack"), "kpst:op");
    REQUIRE(alone.rows.size() == 1);
    CHECK(alone.rows[0].count == 11 + (version == "6.12" ? 2 : 0));
    CHECK(alone.rows[0].keys[0].text.starts_with("kprobe_ftrace_handler+0x"));
    CHECK(alone.rows[0].keys[0].text.find("\n0xffffffffc0") != std::string::npos);
    CHECK(alone.rows[0].keys[0].text.find('/') == std::string::npos);
  }
  // A stack cut short is no entry.
  auto broken = ParseKernelHist("{ stacktrace:\n         f+0x1/0x2\n\nTotals:\n    Hits: 1\n", Spec("kstack"), "k:e");
  CHECK(!broken);
}

TEST_CASE("aggregation: stacks counted in kprobectl, printed as a column of frames") {
  EventFormat format{7, "samp", "work", {{"n", 8, 4, true, false, 0}}, ""};
  AggregationSpec spec = *BindAggregation(Spec("comm,ustack"),
                                          *ParseDefinition("p:samp/work /tmp/loop:0x1149 n=%di:s32", ProbeKind::kUser));
  auto agg = *UserAggregator::Create(spec, format, [](int) { return "callers"; });
  std::string data(12, '\0');
  Record r;
  r.pid = 10;
  r.type = 7;
  r.data = reinterpret_cast<const uint8_t*>(data.data());
  r.size = static_cast<unsigned>(data.size());
  Printer::Frames a{{}, {"work+0x0 (/bin/callers)", "caller_a+0x1b (/bin/callers)"}};
  Printer::Frames b{{}, {"work+0x0 (/bin/callers)", "caller_b+0x1b (/bin/callers)"}};
  for (int i = 0; i < 3; ++i) agg.Add(r, 0, &a);
  agg.Add(r, 0, &b);
  agg.Add(r);  // no stack recorded
  CHECK(FormatTable(agg.Table("samp:work"), spec) ==
        "samp:work: 5 hits\n"
        "  comm     ustack                        hits\n"
        "  callers  work+0x0 (/bin/callers)          3\n"
        "           caller_a+0x1b (/bin/callers)\n"
        "  callers  [no stack]                       1\n"
        "  callers  work+0x0 (/bin/callers)          1\n"
        "           caller_b+0x1b (/bin/callers)\n");
}

TEST_CASE("serve: a stack key is refused (no label)") {
  auto parsed = ParseServeConfig("hist p:e -k comm,kstack\n", "k.conf");
  REQUIRE(!parsed);
  CHECK(parsed.error().message ==
        "k.conf:1: hist: -k kstack: a stack is no Prometheus label (a series for every stack)");
  CHECK(parsed.error().hint == "count stacks with kprobectl hist -k kstack");
}
