// SPDX-License-Identifier: GPL-2.0-or-later
//
// What a trace enables, before anything is written: the events the user's
// globs select among those that exist (every probe* group without globs),
// the temporary probes of --probe, and for --latency the hidden entry probe
// each return probe needs to be timed. Pure: in, the definitions the kernel
// has and the temporary ones; out, the plan.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "kprobectl/event_names.h"
#include "kprobectl/result.h"
#include "kprobectl/trace_event_def.h"

namespace kprobectl {

struct TraceSelection {
  std::vector<std::string> globs;  // [GROUP:]EVENT, GROUP/EVENT
  bool latency = false;
};

struct TracePlan {
  std::vector<TraceEventDef> events;  // to enable, in this order
  std::vector<TraceEventDef> add;     // to add first and remove after: --probe and hidden entries
  std::set<std::string> hidden;       // "group/event": recorded for --latency, never printed
};

// `temporary` are the --probe definitions, already named; `namer` names the
// hidden entries.
Result<TracePlan> PlanTrace(const TraceSelection& selection, const std::vector<TraceEventDef>& existing,
                            const std::vector<TraceEventDef>& temporary, EventNamer& namer);

}  // namespace kprobectl
