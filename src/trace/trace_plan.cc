// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/trace_plan.h"

#include <algorithm>

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

// A return is timed from its function's entry: a hidden entry probe for
// each return probe, or probe on a return instruction, whose entry is not
// traced already. `traced` are the events traced, the first `existing` of
// them in the kernel already, the rest kprobectl's to add. `returns` gets
// the return instructions' entries. Where a register tells a call from
// another (Go's goroutine) and kprobectl adds every probe of the function,
// each gets it as a hidden argument (an event in the kernel already has
// not: such a function's calls are told apart by thread).
Result<std::vector<TraceEventDef>> LatencyEntries(std::vector<TraceEventDef>& traced, size_t existing,
                                                  EventNamer& namer, const ReturnSiteOf& return_site_of,
                                                  std::map<std::string, std::string>& returns) {
  struct Function {
    std::vector<size_t> returns;        // into traced
    std::optional<size_t> entry;        // into traced
    std::optional<ProbeTarget> target;  // its entry
    std::string call_register;
  };
  std::map<std::string, Function> functions;  // by FormatTarget of the entry
  std::vector<std::string> order;             // their keys, as their first return comes
  std::vector<std::optional<ReturnSite>> sites(traced.size());
  for (size_t i = 0; i < traced.size(); ++i) {
    const TraceEventDef& def = traced[i];
    sites[i] = def.retprobe     ? std::optional<ReturnSite>({def.target, ""})
               : return_site_of ? return_site_of(def)
                                : std::nullopt;
    if (!sites[i]) continue;
    const std::string key = FormatTarget(sites[i]->entry);
    if (!functions.contains(key)) order.push_back(key);
    Function& f = functions[key];
    f.returns.push_back(i);
    f.target = sites[i]->entry;
    f.call_register = sites[i]->call_register;
    if (!def.retprobe) returns[def.group + "/" + def.event] = FormatTarget(sites[i]->entry);
  }
  for (size_t i = 0; i < traced.size(); ++i)
    if (auto f = functions.find(FormatTarget(traced[i].target)); !sites[i] && f != functions.end()) f->second.entry = i;
  std::vector<TraceEventDef> out;
  FetchArg call;
  call.name = kGoroutineField;
  call.type = "x64";
  for (const std::string& key : order) {
    Function& f = functions[key];
    bool ours = !f.call_register.empty() && (!f.entry || *f.entry >= existing);
    for (size_t r : f.returns) ours &= r >= existing;
    call.fetch = "%" + f.call_register;
    if (ours) {
      for (size_t r : f.returns) traced[r].args.push_back(call);
      if (f.entry) traced[*f.entry].args.push_back(call);
    }
    if (f.entry) continue;
    const TraceEventDef& first = traced[f.returns.front()];
    TraceEventDef entry = first;
    entry.retprobe = false;
    entry.maxactive = 0;
    entry.args.clear();
    entry.target = *f.target;
    if (ours) entry.args.push_back(call);
    std::string base = first.event;
    if (size_t at = base.rfind("__return"); at != std::string::npos) base.resize(at);
    entry.event = KP_TRY(namer.Take(first.group, base + "__entry", false, false));
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

Result<TracePlan> PlanTrace(const TraceSelection& selection, const std::vector<TraceEventDef>& existing,
                            const std::vector<TraceEventDef>& temporary, EventNamer& namer,
                            const ReturnSiteOf& return_site_of) {
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
    auto entries = KP_TRY(LatencyEntries(traced, plan.events.size(), namer, return_site_of, plan.returns));
    plan.add.assign(traced.begin() + static_cast<ptrdiff_t>(plan.events.size()), traced.end());
    for (TraceEventDef& entry : entries) {
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
