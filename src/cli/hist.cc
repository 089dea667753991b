// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>

#include "hist_run.h"
#include "kprobectl/strings.h"

namespace kprobectl::cli {

namespace {

// Why kprobectl counts a return whose arguments its entry keeps: the
// kernel's hist triggers see one event at a time.
std::string KeptWhy(const TracePlan& plan) {
  const auto& [ret, kept] = *plan.kept.begin();
  std::vector<std::string> names;
  for (const FetchArg& arg : kept.args)
    if (arg.at_entry) names.push_back(arg.name);
  std::string event = ret;
  event[event.find('/')] = ':';
  return event + "'s " + Join(names, ", ") +
         " kept by its entry probe (the kernel keeps no arguments for this return probe), which kprobectl pairs "
         "with each return";
}

}  // namespace

Result<HistRun> HistRun::Plan(const TraceOptions& trace, const TracePlan& plan, const TracefsDir& dir) {
  AggregationSpec spec = KP_TRY(ParseAggregation(*trace.aggregate));
  if (trace.interval < 0) return Fail("-i " + std::to_string(trace.interval) + ": an interval is a positive number");
  HistRun run;
  run.interval_ = trace.interval;
  run.next_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(trace.interval * 1000));
  auto readme = dir.Read("README");
  HistSupport support = ParseHistSupport(readme ? *readme : std::string());
  // Where the kernel cannot count, kprobectl does, and says why.
  run.given_ = spec;
  bool stack_key = std::any_of(spec.keys.begin(), spec.keys.end(), [](const AggKey& k) { return k.IsStack(); });
  if (stack_key && trace.latency)
    return Fail("--latency with a stack key: the time is counted at the return, whose stack is not the call's",
                "count the entry probe by its stack: hist --probe 'FUNC' -k kstack (or ustack)");
  auto max =
      std::find_if(spec.values.begin(), spec.values.end(), [](const AggValue& v) { return v.op == AggValue::kMax; });
  if (HasKey(spec, AggKey::kUserStack))
    run.why_user_space_ =
        "-k ustack: the kernel's hist triggers have no user-stack key (kprobectl unwinds each event's user stack)";
  else if (!support.hist)
    run.why_user_space_ = "this kernel has no hist triggers (CONFIG_HIST_TRIGGERS)";
  else if (max != spec.values.end())
    run.why_user_space_ = "--max " + max->arg + ": a hist trigger sums its values and keeps no maximum";
  else if (trace.latency && !support.synthetic)
    run.why_user_space_ = "this kernel has no synthetic events (CONFIG_SYNTH_EVENTS) to pair entries and returns";
  else if (!plan.kept.empty())
    run.why_user_space_ = KeptWhy(plan);
  else if (trace.user_space)
    run.why_user_space_ = "--in-user-space";
  run.in_kernel_ = run.why_user_space_.empty();
  if (plan.events.empty()) return Fail("no events to count", "name events, or add one with --probe");
  if (trace.latency) {
    if (!trace.filter.empty()) return Fail("--filter with --latency: the filter would apply to the returns only");
    KP_TRY_VOID(PlanLatency(run, spec, plan, support, trace));
    return run;
  }
  for (const TraceEventDef& def : plan.events) {
    Event event;
    event.path = def.Path();
    event.full = def.FullName();
    // Its arguments as written, those its entry keeps among them.
    TraceEventDef written = def;
    if (auto kept = plan.kept.find(event.path); kept != plan.kept.end()) {
      event.kept = kept->second;
      written.args = kept->second.args;
    }
    if (plan.hidden.contains(event.path)) continue;  // an entry kept for pairing, not counted
    event.spec = KP_TRY(BindAggregation(spec, written));
    if (def.kind == ProbeKind::kKernel && def.target.kind == ProbeTarget::kSymbol)
      event.spec.stack_top = def.target.symbol;
    if (def.kind == ProbeKind::kUser && HasKey(spec, AggKey::kKernelStack))
      run.notes_ += "kprobectl: -k kstack on " + def.FullName() +
                    ", a uprobe: its kernel stack is the breakpoint's handling (asm_exc_int3 ... uprobe_dispatcher), "
                    "the same for every call; -k ustack counts its callers\n";
    if (run.in_kernel_) event.trigger = KP_TRY(HistTrigger(event.spec, support, trace.filter, kTableSize));
    run.events_.push_back(std::move(event));
  }
  return run;
}

std::string HistRun::Note() const {
  if (in_kernel_) return notes_;
  return notes_ + "kprobectl: " + why_user_space_ + ": aggregating in kprobectl, which copies every event\n";
}

void HistRun::PrintTriggers(std::ostream& out) const {
  for (const Event& e : events_) {
    if (!in_kernel_) {
      out << "# counted in kprobectl: " + e.full << "\n";
      continue;
    }
    if (!e.synthetic.empty())
      out << "# synthetic event: " << e.synthetic << " " << e.pairing.fields << "\n# trigger on " << e.entry_path
          << ": " << e.pairing.entry << "\n# trigger on " << e.return_path << ": " << e.pairing.ret << "\n";
    out << "# trigger on " << e.path << ": " << e.trigger << "\n";
  }
}

Result<void> HistRun::Start(TraceSession& session) const {
  for (const Event& e : events_) {
    if (!e.synthetic.empty()) {
      KP_TRY_VOID(session.AddSyntheticEvent(e.synthetic, e.pairing.fields));
      KP_TRY_VOID(session.AddTrigger(e.entry_path, e.pairing.entry));
      KP_TRY_VOID(session.AddTrigger(e.return_path, e.pairing.ret));
    }
    KP_TRY_VOID(session.AddTrigger(e.path, e.trigger));
  }
  return {};
}

Result<void> HistRun::Stop(TraceSession& session) const {
  for (const Event& e : events_) {
    KP_TRY_VOID(session.RemoveTrigger(e.path, e.trigger));
    if (!e.synthetic.empty()) {
      KP_TRY_VOID(session.RemoveTrigger(e.return_path, e.pairing.ret));
      KP_TRY_VOID(session.RemoveTrigger(e.entry_path, e.pairing.entry));
    }
  }
  return {};
}

TraceOptions WithStackKeys(const TraceOptions& trace) {
  if (!trace.aggregate || !trace.stack.empty()) return trace;
  auto spec = ParseAggregation(*trace.aggregate);
  if (!spec) return trace;  // HistRun::Plan says why
  bool kernel = HasKey(*spec, AggKey::kKernelStack), user = HasKey(*spec, AggKey::kUserStack);
  TraceOptions out = trace;
  out.stack = kernel && user ? "both" : kernel ? "kernel" : user ? "user" : "";
  return out;
}

Result<void> HistRun::Bind(const std::vector<EventFormat>& formats, const std::function<std::string(int)>& comm,
                           NameFrames frames) {
  frames_ = std::move(frames);
  for (Event& e : events_) {
    auto format = std::find_if(formats.begin(), formats.end(),
                               [&](const EventFormat& f) { return f.system + "/" + f.name == e.path; });
    if (format == formats.end()) return Fail("no format for " + e.full);
    e.id = format->id;
    const EventFormat* entry = nullptr;
    for (const EventFormat& f : formats)
      if (e.kept && f.system + "/" + f.name == e.kept->entry) entry = &f;
    e.user.emplace(KP_TRY(
        UserAggregator::Create(e.spec, *format, comm, !e.entry_path.empty(), e.kept ? &*e.kept : nullptr, entry)));
  }
  return {};
}

void HistRun::Add(const EventPlan& plan, const Record& record, const EventStacks* stacks, const OpenCall* call) {
  for (Event& e : events_) {
    if (!e.user) continue;
    if (!e.entry_path.empty()) {
      AddLatency(e, plan, record, call);
    } else if (e.id == plan.id) {
      std::optional<Printer::Frames> named;
      if (frames_ && std::any_of(e.spec.keys.begin(), e.spec.keys.end(), [](const AggKey& k) { return k.IsStack(); }))
        named = frames_(plan, record, stacks ? *stacks : EventStacks{});
      std::optional<Record> entry;
      if (call && !call->data.empty()) entry = call->AsRecord();
      if (e.user->Add(record, 0, named ? &*named : nullptr, entry ? &*entry : nullptr))
        ++hits_;
      else
        ++unknown_entries_;
    }
  }
}

std::vector<std::string> HistRun::paths() const {
  std::vector<std::string> out;
  for (const Event& e : events_) out.push_back(e.path);
  return out;
}

bool HistRun::Due() {
  if (interval_ <= 0) return false;
  auto now = std::chrono::steady_clock::now();
  if (now < next_) return false;
  next_ = now + std::chrono::milliseconds(static_cast<int64_t>(interval_ * 1000));
  return true;
}

namespace {

// The section of an event's hist file that `trigger` made: the kernel
// prints every hist trigger's table after "# trigger info: " and the
// trigger as it reads it, which adds ":sort=hitcount" before ":size=" and
// more after it (":clock=", the filter as " if ...", " [active]"). Two
// triggers on one event may differ only in their filter (serve's hist
// lines), so the filter is matched too. Linux 6.5+ reads a stacktrace key
// back as common_stacktrace. None: no table of that trigger.
std::optional<std::string_view> SectionOf(std::string_view text, const std::string& trigger) {
  size_t if_at = trigger.find(" if ");
  std::string filter = if_at == std::string::npos ? "" : trigger.substr(if_at);
  std::string head = "# trigger info: " + trigger.substr(0, trigger.find(":size="));
  for (bool renamed : {false, true}) {
    if (renamed) {
      size_t key = head.find("stacktrace");
      if (key == std::string::npos) break;
      head.insert(key, "common_");
    }
    for (size_t at = text.find(head); at != std::string_view::npos; at = text.find(head, at + 1)) {
      std::string_view line = text.substr(at, text.find('\n', at) - at);
      bool same = filter.empty() ? line.find(" if ") == std::string_view::npos
                                 : line.find(filter + " [") != std::string_view::npos || line.ends_with(filter);
      if (same) return text.substr(at);
    }
  }
  return std::nullopt;
}

}  // namespace

Result<std::vector<AggTable>> HistRun::Tables(const TracefsDir& dir, TraceSession& session, bool clear) {
  std::vector<AggTable> out;
  for (Event& e : events_) {
    if (e.user) {
      out.push_back(e.user->Table(e.full));
      if (clear) e.user->Clear();
      continue;
    }
    std::string text = KP_TRY(dir.Read(session.Path("events/" + e.path + "/hist")));
    auto section = SectionOf(text, e.trigger);
    if (!section)
      return Fail("the hist file of " + e.full + " has no table of the trigger '" + e.trigger + "'",
                  "something else removed it: kprobectl clean, or a write to the instance's trigger file");
    out.push_back(KP_TRY(ParseKernelHist(*section, e.spec, e.full)));
    if (clear) {
      // The same trigger with :clear (before any filter) empties its table.
      std::string command = e.trigger;
      size_t filter = command.find(" if ");
      command.insert(filter == std::string::npos ? command.size() : filter, ":clear");
      KP_TRY_VOID(session.TriggerCommand(e.path, command));
    }
  }
  return out;
}

std::vector<AggregationSpec> HistRun::specs() const {
  std::vector<AggregationSpec> out;
  for (const Event& e : events_) out.push_back(e.spec);
  return out;
}

std::string HistRun::Counted() const { return in_kernel_ ? "in the kernel (hist triggers)" : "by kprobectl"; }

}  // namespace kprobectl::cli
