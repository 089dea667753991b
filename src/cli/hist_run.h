// SPDX-License-Identifier: GPL-2.0-or-later
//
// `kprobectl hist`: trace's passes (temporary probes, private instance,
// the command, cleanup on every way of stopping), with the events counted
// rather than printed. In the kernel by a hist trigger on each event in the
// private instance, nothing copied per event; where the kernel has no hist
// triggers, in kprobectl from the streamed records, saying so. Planned
// (and every bad key refused) before anything is written.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "commands.h"
#include "kprobectl/aggregation.h"
#include "kprobectl/call_pairing.h"
#include "kprobectl/trace_plan.h"
#include "kprobectl/trace_printer.h"
#include "kprobectl/trace_session.h"

namespace kprobectl::cli {

// Entries of the kernel's table per event: its default, 2048, fills fast
// with pid or string keys; 2^14 is what trace-cmd users raise it to, and
// costs the kernel about 2 MB per trigger.
inline constexpr unsigned kTableSize = 16384;

// trace's options with the stacks hist's stack keys count asked for
// (--stack=kernel, user or both): a user stack is unwound through CFI from
// what the temporary uprobes capture, so it is asked before they are made.
TraceOptions WithStackKeys(const TraceOptions& trace);

class HistRun {
 public:
  static Result<HistRun> Plan(const TraceOptions& trace, const TracePlan& plan, const TracefsDir& dir);
  bool in_kernel() const { return in_kernel_; }
  // Events counted in kprobectl so far.
  uint64_t hits() const { return hits_; }
  // Returns not counted: an argument their entry keeps, where that entry
  // was not recorded.
  uint64_t unknown_entries() const { return unknown_entries_; }
  // Why kprobectl counts (kernels without hist triggers), and what a key
  // cannot tell: for standard error.
  std::string Note() const;
  // -n: the triggers it would write.
  void PrintTriggers(std::ostream& out) const;
  // In the kernel: the triggers, in the session (which removes them).
  Result<void> Start(TraceSession& session) const;
  // Its triggers removed again, their tables with them (serve's reload).
  Result<void> Stop(TraceSession& session) const;
  // The stacks its keys need recorded after each event, where kprobectl
  // counts: the kernel's (-k kstack), user space's (-k ustack).
  bool kernel_stacks() const { return !in_kernel_ && HasKey(given_, AggKey::kKernelStack); }
  bool user_stacks() const { return HasKey(given_, AggKey::kUserStack); }
  // In kprobectl: an aggregator per event, from the formats decoded;
  // `frames` names an event's stacks, for stack keys.
  using NameFrames = std::function<Printer::Frames(const EventPlan&, const Record&, const EventStacks&)>;
  Result<void> Bind(const std::vector<EventFormat>& formats, const std::function<std::string(int)>& comm,
                    NameFrames frames = {});
  // `call`: for a return, the call it ends (call_pairing.h), if known.
  void Add(const EventPlan& plan, const Record& record, const EventStacks* stacks = nullptr,
           const OpenCall* call = nullptr);
  // Whether -i's interval has passed since the last report.
  bool Due();
  // The tables now, one an event; with `clear`, counting starts again.
  Result<std::vector<AggTable>> Tables(const TracefsDir& dir, TraceSession& session, bool clear);
  // Each event's spec, bound to its arguments, in the tables' order.
  const AggregationSpec& spec(size_t event) const { return events_[event].spec; }
  std::vector<AggregationSpec> specs() const;
  // Where the events are counted, for a picture's subtitle: "in the
  // kernel (hist triggers)", "by kprobectl" (Note() says why).
  std::string Counted() const;
  // The events' "group/event" paths (to enable where kprobectl counts).
  std::vector<std::string> paths() const;

 private:
  struct Event {
    std::string path;  // "group/event"; with --latency in the kernel, the synthetic event's
    std::string full;  // "group:event"
    AggregationSpec spec;
    std::string trigger;
    std::optional<UserAggregator> user;
    int id = -1;
    // --latency: the entry paired with this return, the kernel's pairing
    // (kprobectl's is the tracer's: call_pairing.h).
    std::string entry_path, return_path, synthetic;
    LatencyTriggers pairing;
    // A return's arguments its entry keeps: counted in kprobectl alone.
    std::optional<KeptArgs> kept;
  };
  // --latency: each return probe with its entry, counted by the time between.
  static Result<void> PlanLatency(HistRun& run, const AggregationSpec& spec, const TracePlan& plan,
                                  const HistSupport& support, const TraceOptions& trace);
  void AddLatency(Event& e, const EventPlan& plan, const Record& record, const OpenCall* call);
  std::vector<Event> events_;
  AggregationSpec given_;  // as the user gave it, bound to no event
  NameFrames frames_;
  bool in_kernel_ = false;
  std::string why_user_space_;  // empty when the kernel counts
  std::string notes_;           // what the keys cannot tell, one a line
  uint64_t hits_ = 0;
  uint64_t unknown_entries_ = 0;
  double interval_ = 0;
  std::chrono::steady_clock::time_point next_;
};

}  // namespace kprobectl::cli
