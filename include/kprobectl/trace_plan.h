// SPDX-License-Identifier: GPL-2.0-or-later
//
// What a trace enables, before anything is written: the events the user's
// globs select among those that exist (every probe* group without globs),
// the temporary probes of --probe, and the hidden entry probes some returns
// need: for --latency, to time each call from its entry; and for a return
// probe's arguments the kernel cannot keep for it (FetchArg::at_entry: a
// kernel return probe before Linux 6.9, any user return probe), to fetch
// them at the entry, with the stack pointer that tells which call a return
// ends. Which entry opens the calls each return ends is decided here, once.
// Pure: in, the definitions the kernel has and the temporary ones; out,
// the plan.
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

// A return's arguments, some fetched by the entry of its call.
struct KeptArgs {
  std::string entry;  // "group/event" of the hidden entry probe that fetches them
  // The return's arguments in the order written (those with at_entry the
  // entry's), and for each the field that holds it: in the entry's record
  // for those, in the return's own for the others.
  std::vector<FetchArg> args;
  std::vector<std::string> fields;
};

struct TracePlan {
  std::vector<TraceEventDef> events;  // to enable, in this order
  std::vector<TraceEventDef> add;     // to add first and remove after: --probe and hidden entries
  std::set<std::string> hidden;       // "group/event": recorded for pairing, never printed
  // "group/event" of a probe on a return instruction (Go's FUNC%return) ->
  // its function's entry, as FormatTarget writes it.
  std::map<std::string, std::string> returns;
  // Calls paired by thread (Go: goroutine), for --latency and for kept
  // arguments: an entry's "group/event" -> the returns whose calls it
  // opens, each a "group/event".
  std::map<std::string, std::vector<std::string>> opens;
  // A return's "group/event" -> its arguments, where an entry keeps some.
  std::map<std::string, KeptArgs> kept;
};

// For --latency, whether a plain probe is on a return instruction of a
// function (Go's FUNC%return), and if so where (ReturnSite). kprobectl's
// own probes of such a function get the call register as a hidden argument
// (kGoroutineField), as does the entry it adds.
using ReturnSiteOf = std::function<std::optional<ReturnSite>(const TraceEventDef&)>;

// `temporary` are the --probe definitions, already named, their at_entry
// arguments still in place; `namer` names the hidden entries.
Result<TracePlan> PlanTrace(const TraceSelection& selection, const std::vector<TraceEventDef>& existing,
                            const std::vector<TraceEventDef>& temporary, EventNamer& namer,
                            const ReturnSiteOf& return_site_of = {});

}  // namespace kprobectl
