// SPDX-License-Identifier: GPL-2.0-or-later
//
// What a trace enables, before anything is written: the events the user's
// globs select among those that exist (every probe* group without globs),
// the temporary probes of --probe, and for --latency the hidden entry probe
// each return probe needs to be timed. Pure: in, the definitions the kernel
// has and the temporary ones; out, the plan.
#pragma once

#include <functional>
#include <map>
#include <optional>
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
  // --latency: "group/event" of a probe on a return instruction (Go's
  // FUNC%return) -> its function's entry, as FormatTarget writes it.
  std::map<std::string, std::string> returns;
};

// For --latency, whether a plain probe is on a return instruction of a
// function (Go's FUNC%return), and if so where (ReturnSite). kprobectl's
// own probes of such a function get the call register as a hidden argument
// (kGoroutineField), as does the entry it adds.
using ReturnSiteOf = std::function<std::optional<ReturnSite>(const TraceEventDef&)>;

// `temporary` are the --probe definitions, already named; `namer` names the
// hidden entries.
Result<TracePlan> PlanTrace(const TraceSelection& selection, const std::vector<TraceEventDef>& existing,
                            const std::vector<TraceEventDef>& temporary, EventNamer& namer,
                            const ReturnSiteOf& return_site_of = {});

}  // namespace kprobectl
