// SPDX-License-Identifier: GPL-2.0-or-later
//
// hist --latency: each return probe counted by the time since its entry on
// the same thread, in nanoseconds (the key ns, log2 unless the user
// buckets it otherwise). In the kernel (Documentation/trace/histogram.rst,
// section "Synthetic Events"): a hist variable on the entry keeps its
// time by thread; the return's trigger, matching it (onmatch), emits a
// synthetic event "kplatN_PID u64 ns" in the returning thread, so that
// comm and pid key it as they key any event; the aggregation's trigger is
// on that synthetic event. In kprobectl: the same pairing over the
// streamed entries and returns, as trace --latency pairs them.
#include <unistd.h>

#include <algorithm>

#include "hist_run.h"

namespace kprobectl::cli {

Result<void> HistRun::PlanLatency(HistRun& run, const AggregationSpec& given, const TracePlan& plan,
                                  const HistSupport& support, const TraceOptions& trace) {
  AggregationSpec spec = given;
  // The time between entry and return: a key of its own unless asked for.
  if (std::none_of(spec.keys.begin(), spec.keys.end(), [](const AggKey& k) { return k.arg == "ns"; }))
    spec.keys.push_back(KP_TRY(ParseAggregation({{"ns.log2"}, {}, {}, "", 0})).keys.front());
  if (trace.aggregate->sort.empty()) {
    spec.sort = spec.keys.back().text;
    spec.descending = false;
  }
  // A Go function's returns are probes on its return instructions, its
  // calls told apart by goroutine: trace --latency pairs them so, hist's
  // pairing (a hist variable per thread in the kernel) cannot.
  if (!plan.returns.empty())
    return Fail("--latency cannot time " + plan.returns.begin()->first +
                    ": it is a probe on a Go function's return instruction, and hist pairs an entry with its "
                    "return by thread, where a goroutine may move between them",
                "time it with 'kprobectl trace --latency', which pairs them by goroutine");
  int n = 0;
  for (const TraceEventDef& ret : plan.events) {
    if (!ret.retprobe) continue;
    auto entry = std::find_if(plan.events.begin(), plan.events.end(), [&](const TraceEventDef& d) {
      return !d.retprobe && d.kind == ret.kind && FormatTarget(d.target) == FormatTarget(ret.target);
    });
    if (entry == plan.events.end()) return Fail("--latency: no entry probe for " + ret.FullName());
    // Its keys: the time, comm and pid (the synthetic event has no other field).
    TraceEventDef timed = ret;
    timed.args = {FetchArg{"ns", "", "u64"}};
    Event e;
    e.full = ret.FullName();
    e.spec = KP_TRY(BindAggregation(spec, timed));
    e.entry_path = entry->Path();
    e.return_path = ret.Path();
    e.path = e.return_path;
    if (run.in_kernel_) {
      std::string tag = std::to_string(n) + "_" + std::to_string(getpid());
      e.synthetic = "kplat" + tag;
      e.path = "synthetic/" + e.synthetic;
      e.pairing = MakeLatencyTriggers(e.synthetic, entry->group + "." + entry->event, tag);
      e.trigger = KP_TRY(HistTrigger(e.spec, support, "", kTableSize));
    }
    run.events_.push_back(std::move(e));
    ++n;
  }
  if (run.events_.empty())
    return Fail("--latency times return probes: none is selected", "add one: --probe 'FUNC%return'");
  return {};
}

void HistRun::AddLatency(Event& e, const EventPlan& plan, const Record& record, const OpenCall* call) {
  if (plan.id != e.id || !call) return;  // an entry, another event, or a return whose entry came before we did
  ++hits_;
  e.user->Add(record, record.ts >= call->ts ? record.ts - call->ts : 0);
}

}  // namespace kprobectl::cli
