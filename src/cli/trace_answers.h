// SPDX-License-Identifier: GPL-2.0-or-later
//
// trace's pictures, gathered while the events arrive and drawn at the end.
// In: each event's plan and record (and its stacks named, for a flame
// graph), as the tracer hands them over instead of printing them. Out:
// the plain data the render stage draws: a StackProfile, a Timeline, a
// HeatMap.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kprobectl/flame_graph.h"
#include "kprobectl/heat_map.h"
#include "kprobectl/timeline.h"
#include "kprobectl/trace_plan.h"
#include "kprobectl/trace_printer.h"
#include "kprobectl/trace_symbols.h"
#include "kprobectl/tracer.h"
#include "outputs.h"

namespace kprobectl::cli {

// Stacks counted as they come (trace --format folded or flamegraph).
class StackCounter {
 public:
  // `tops`: by event id, a kernel probe's function, where its kernel
  // stacks start (the kprobe machinery's frames above it left out, as hist
  // leaves them out); `label_events`: the event's name as each stack's root
  // (when several events are traced).
  StackCounter(std::map<int, std::string> tops, bool label_events)
      : tops_(std::move(tops)), label_events_(label_events) {}
  void Add(const EventPlan& plan, const Printer::Frames& frames);
  StackProfile Profile() const;
  uint64_t events() const { return events_; }

 private:
  std::map<int, std::string> tops_;
  bool label_events_;
  std::map<std::vector<StackFrame>, uint64_t> stacks_;
  uint64_t events_ = 0;
};

// Calls paired into slices (trace --format timeline): an entry and its
// return on one thread, or one goroutine where the probes record it (Go's
// returns), are a slice with both events' arguments; an event with no pair
// (no return probe, a return whose call began before tracing, a call still
// running at the end) is an instant.
class TimelineRecorder {
 public:
  // `plans`: every probe traced (the functions with a return probe among
  // them are paired); `printer` writes the arguments; `comm` names a
  // thread; `process` gives a thread's process (its tgid), 0 when it is
  // gone.
  TimelineRecorder(const std::vector<EventPlan>& plans, Printer& printer, std::function<std::string(int)> comm,
                   std::function<int(int)> process);
  void Add(const EventPlan& plan, const Record& record);
  void Lost(uint64_t time, int cpu, uint64_t count);
  // The timeline; the calls still open become instants.
  Timeline Finish(std::string producer);
  uint64_t events() const { return events_; }

 private:
  struct Open {
    uint64_t start = 0;
    int pid = 0;
    int64_t track = 0;
    std::string name, category, args;
  };
  // The event's process and track, both named in the timeline.
  std::pair<int, int64_t> Where(const EventPlan& plan, const Record& record);
  Printer& printer_;
  std::function<std::string(int)> comm_;
  std::function<int(int)> process_;
  std::map<int, int> processes_;  // thread -> process, as first seen
  std::map<uint64_t, int64_t> goroutines_;
  std::set<std::string> returning_;  // the latency keys of functions with a return probe
  std::map<std::pair<std::string, uint64_t>, std::vector<Open>> open_;  // (function, thread or goroutine)
  Timeline timeline_;
  uint64_t events_ = 0;
};

// A thread's process: its Tgid in PROC/TID/status; 0 when it is gone.
int ProcessOfThread(const std::string& proc, int tid);

// The picture trace draws at the end (--format folded, flamegraph,
// heatmap, timeline): its collector, fed the events instead of the
// printer, and what it makes of them.
class TracePictures {
 public:
  // `plans`: the tracer's, in the order of `plan.events`; `proc`: where
  // threads' processes are read.
  TracePictures(OutputFormat format, const TracePlan& plan, const std::vector<EventPlan>& plans, Printer& printer,
                CommCache& comms, const std::string& proc);
  // Hands the tracer's records here (and where events were lost).
  void Attach(Tracer& tracer);
  // The events recorded so far (hidden ones not counted).
  uint64_t events() const;
  // The picture, titled by the events traced, `seconds` long, `lost`
  // events not in it.
  std::string Draw(const TracePlan& plan, double seconds, uint64_t lost);

 private:
  OutputFormat format_;
  Printer& printer_;
  std::optional<StackCounter> stacks_;
  std::optional<TimelineRecorder> timeline_;
};

// trace --format heatmap: the --latency calls of each function, by when
// they returned, from the first call's start.
HeatMap LatencyHeatMap(const std::vector<Printer::LatencyCalls>& functions);

}  // namespace kprobectl::cli
