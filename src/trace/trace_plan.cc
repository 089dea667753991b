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

std::string PathOf(const TraceEventDef& def) { return def.Path(); }

bool Keeps(const TraceEventDef& def) {
  return std::any_of(def.args.begin(), def.args.end(), [](const FetchArg& a) { return a.at_entry; });
}

// The stack pointer ($stack, every kind of probe's), at the entry and at
// the return: a return ends the open call whose entry's is its own less
// what the return popped (Arch::return_address_bytes), not a deeper call
// whose return was lost, nor a call whose entry was (call_pairing.h).
FetchArg StackField() { return FetchArg{std::string(kCallStackField), "$stack", "x64"}; }

// A kept argument among the entry's fields: under its own name, or shared
// with another return's that fetches the same, or renamed where another
// fetches something else under it. Returns the field's name.
std::string AddKept(std::vector<FetchArg>& fields, FetchArg arg) {
  arg.at_entry = false;
  const std::string base = arg.name;
  for (int n = 1;; ++n) {
    auto same = std::find_if(fields.begin(), fields.end(), [&](const FetchArg& f) { return f.name == arg.name; });
    if (same == fields.end()) break;
    if (*same == arg) return arg.name;
    arg.name = base + "_" + std::to_string(n);
  }
  fields.push_back(arg);
  return arg.name;
}

// A function whose calls are paired, entry to return.
struct Function {
  std::vector<size_t> returns;  // into traced
  std::optional<size_t> entry;  // into traced: an entry probe of it traced already
  ProbeTarget target;           // its entry
  std::string call_register;
  bool keeps = false;  // a return's arguments are fetched by the entry (FetchArg::at_entry)
};

// The returns' arguments fetched by `entry` (kprobectl's): moved there,
// and the stack pointer fetched by it and by every return of kprobectl's
// (those from `existing` on).
void MoveKeptArgs(std::vector<TraceEventDef>& traced, size_t existing, const Function& f, TraceEventDef& entry,
                  TracePlan& plan) {
  for (size_t r : f.returns) {
    TraceEventDef& ret = traced[r];
    if (!Keeps(ret)) {
      if (r >= existing) ret.args.push_back(StackField());
      continue;
    }
    KeptArgs kept{PathOf(entry), {}, {}};
    std::vector<FetchArg> own;
    for (const FetchArg& arg : ret.args) {
      if (!arg.at_entry) own.push_back(arg);
      if (arg.name.starts_with(kHiddenFieldPrefix)) continue;  // a stack capture's, say: never printed
      kept.args.push_back(arg);
      kept.fields.push_back(arg.at_entry ? AddKept(entry.args, arg) : arg.name);
    }
    own.push_back(StackField());
    ret.args = std::move(own);
    plan.kept[PathOf(ret)] = std::move(kept);
  }
  entry.args.push_back(StackField());
}

// Each return's call opened by an entry: one traced already, else a hidden
// entry probe kprobectl adds, for each return probe, or probe on a return
// instruction, with --latency, and for each whose arguments an entry keeps
// (whose hidden entry then fetches them). `traced` are the events traced,
// the first `existing` of them in the kernel already, the rest kprobectl's
// to add. Where a register tells a call from another (Go's goroutine) and
// kprobectl adds every probe of the function, each gets it as a hidden
// argument (an event in the kernel already has not: such a function's
// calls are told apart by thread). Returns the hidden entries.
Result<std::vector<TraceEventDef>> PairCalls(std::vector<TraceEventDef>& traced, size_t existing, bool latency,
                                             EventNamer& namer, const ReturnSiteOf& return_site_of, TracePlan& plan) {
  std::map<std::string, Function> functions;  // by FormatTarget of the entry
  std::vector<std::string> order;             // their keys, as their first return comes
  std::vector<bool> is_return(traced.size());
  for (size_t i = 0; i < traced.size(); ++i) {
    const TraceEventDef& def = traced[i];
    const bool keeps = Keeps(def);
    if (!latency && !keeps) continue;
    std::optional<ReturnSite> site = def.retprobe     ? std::optional<ReturnSite>({def.target, ""})
                                     : return_site_of ? return_site_of(def)
                                                      : std::nullopt;
    if (!site) continue;
    const std::string key = FormatTarget(site->entry);
    if (!functions.contains(key)) order.push_back(key);
    Function& f = functions[key];
    f.returns.push_back(i);
    f.target = site->entry;
    f.call_register = site->call_register;
    f.keeps |= keeps;
    is_return[i] = true;
    if (!def.retprobe) plan.returns[PathOf(def)] = key;
  }
  for (size_t i = 0; i < traced.size(); ++i)
    if (auto f = functions.find(FormatTarget(traced[i].target)); !is_return[i] && f != functions.end())
      f->second.entry = i;
  std::vector<TraceEventDef> out;
  FetchArg call;
  call.name = kGoroutineField;
  call.type = "x64";
  for (const std::string& key : order) {
    Function& f = functions[key];
    // Kept arguments are fetched by an entry of kprobectl's own, which
    // then opens every call of the function.
    if (f.keeps) f.entry.reset();
    if (!f.entry) {
      const TraceEventDef& first = traced[f.returns.front()];
      TraceEventDef entry = first;
      entry.retprobe = false;
      entry.maxactive = 0;
      entry.args.clear();
      entry.target = f.target;
      std::string base = first.event;
      if (size_t at = base.rfind("__return"); at != std::string::npos) base.resize(at);
      entry.event = KP_TRY(namer.Take(first.group, base + "__entry", false, false));
      if (f.keeps) MoveKeptArgs(traced, existing, f, entry, plan);
      out.push_back(std::move(entry));
    }
    bool ours = !f.call_register.empty() && (!f.entry || *f.entry >= existing);
    for (size_t r : f.returns) ours &= r >= existing;
    call.fetch = "%" + f.call_register;
    if (ours) {
      // Kept arguments pair by stack pointer too, measured from the top of
      // the goroutine's stack, which Go may move (kStackTopField).
      FetchArg top{std::string(kStackTopField), "+" + std::to_string(kGoStackHiOffset) + "(%" + f.call_register + ")",
                   "x64"};
      for (size_t r : f.returns) {
        traced[r].args.push_back(call);
        if (f.keeps) traced[r].args.push_back(top);
      }
      TraceEventDef& entry = f.entry ? traced[*f.entry] : out.back();
      entry.args.push_back(call);
      if (f.keeps) entry.args.push_back(top);
    }
    std::vector<std::string>& opens = plan.opens[PathOf(f.entry ? traced[*f.entry] : out.back())];
    for (size_t r : f.returns) opens.push_back(PathOf(traced[r]));
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
  if (selection.latency || std::any_of(temporary.begin(), temporary.end(), Keeps)) {
    std::vector<TraceEventDef> traced = plan.events;
    traced.insert(traced.end(), temporary.begin(), temporary.end());
    auto entries = KP_TRY(PairCalls(traced, plan.events.size(), selection.latency, namer, return_site_of, plan));
    plan.add.assign(traced.begin() + static_cast<ptrdiff_t>(plan.events.size()), traced.end());
    for (TraceEventDef& entry : entries) {
      plan.hidden.insert(entry.Path());
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
