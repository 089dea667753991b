// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/trace_plan.h"

#include "kprobectl/glob.h"
#include "kprobectl/strings.h"

namespace kprobectl {

namespace {

struct EventPattern {
  std::string group = "*", event;
};

EventPattern ParseEventPattern(const std::string& text) {
  size_t sep = text.find_first_of(":/");
  if (sep == std::string::npos) return {"*", text};
  return {text.substr(0, sep), text.substr(sep + 1)};
}

// A return probe is timed from its function's entry: a hidden entry probe
// for each return probe whose entry is not traced already.
Result<std::vector<TraceEventDef>> LatencyEntries(const std::vector<TraceEventDef>& traced, EventNamer& namer) {
  std::set<std::string> entries;
  for (const TraceEventDef& def : traced)
    if (!def.retprobe) entries.insert(FormatTarget(def.target));
  std::vector<TraceEventDef> out;
  for (const TraceEventDef& def : traced) {
    if (!def.retprobe || entries.contains(FormatTarget(def.target))) continue;
    TraceEventDef entry = def;
    entry.retprobe = false;
    entry.maxactive = 0;
    entry.args.clear();
    std::string base = def.event.ends_with("__return") ? def.event.substr(0, def.event.size() - 8) : def.event;
    entry.event = KP_TRY(namer.Take(def.group, base + "__entry", false, false));
    entries.insert(FormatTarget(def.target));
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

Result<TracePlan> PlanTrace(const TraceSelection& selection, const std::vector<TraceEventDef>& existing,
                            const std::vector<TraceEventDef>& temporary, EventNamer& namer) {
  TracePlan plan;
  std::vector<EventPattern> patterns;
  for (const std::string& glob : selection.globs) patterns.push_back(ParseEventPattern(glob));
  if (patterns.empty() && temporary.empty()) patterns.push_back({"probe*", "*"});
  for (const TraceEventDef& def : existing)
    for (const EventPattern& p : patterns)
      if (GlobMatch(p.group, def.group) && GlobMatch(p.event, def.event)) {
        plan.events.push_back(def);
        break;
      }
  plan.add = temporary;
  if (selection.latency) {
    std::vector<TraceEventDef> traced = plan.events;
    traced.insert(traced.end(), temporary.begin(), temporary.end());
    for (TraceEventDef& entry : KP_TRY(LatencyEntries(traced, namer))) {
      plan.hidden.insert(entry.group + "/" + entry.event);
      plan.add.push_back(std::move(entry));
    }
  }
  plan.events.insert(plan.events.end(), plan.add.begin(), plan.add.end());
  if (plan.events.empty())
    return Fail(selection.globs.empty() ? "there are no probe events to trace (no event in a probe* group)"
                                        : "no probe event matches " + Join(selection.globs, " "),
                "add probes first ('kprobectl add ...'), or give them with --probe 'SPEC'");
  return plan;
}

}  // namespace kprobectl
