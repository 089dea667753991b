// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>

#include "hist_run.h"
#include "kprobectl/strings.h"

namespace kprobectl::cli {

namespace {

// Entries of the kernel's table per event: its default, 2048, fills fast
// with pid or string keys; 2^14 is what trace-cmd users raise it to, and
// costs the kernel about 2 MB per trigger.
constexpr unsigned kTableSize = 16384;

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
  auto max =
      std::find_if(spec.values.begin(), spec.values.end(), [](const AggValue& v) { return v.op == AggValue::kMax; });
  if (!support.hist)
    run.why_user_space_ = "this kernel has no hist triggers (CONFIG_HIST_TRIGGERS)";
  else if (max != spec.values.end())
    run.why_user_space_ = "--max " + max->arg + ": a hist trigger sums its values and keeps no maximum";
  else if (trace.user_space)
    run.why_user_space_ = "--in-user-space";
  run.in_kernel_ = run.why_user_space_.empty();
  if (plan.events.empty()) return Fail("no events to count", "name events, or add one with --probe");
  for (const TraceEventDef& def : plan.events) {
    Event event{def.group + "/" + def.event, def.FullName(), KP_TRY(BindAggregation(spec, def)), {}, {}, -1};
    if (run.in_kernel_) event.trigger = KP_TRY(HistTrigger(event.spec, support, trace.filter, kTableSize));
    run.events_.push_back(std::move(event));
  }
  return run;
}

std::string HistRun::Note() const {
  if (in_kernel_) return {};
  return "kprobectl: " + why_user_space_ + ": aggregating in kprobectl, which copies every event\n";
}

void HistRun::PrintTriggers(std::ostream& out) const {
  for (const Event& e : events_)
    out << (in_kernel_ ? "# trigger on " + e.full + ": " + e.trigger : "# counted in kprobectl: " + e.full) << "\n";
}

Result<void> HistRun::Start(TraceSession& session) const {
  for (const Event& e : events_) KP_TRY_VOID(session.AddTrigger(e.path, e.trigger));
  return {};
}

Result<void> HistRun::Bind(const std::vector<EventFormat>& formats, const std::function<std::string(int)>& comm) {
  for (Event& e : events_) {
    auto format = std::find_if(formats.begin(), formats.end(),
                               [&](const EventFormat& f) { return f.system + "/" + f.name == e.path; });
    if (format == formats.end()) return Fail("no format for " + e.full);
    e.id = format->id;
    e.user.emplace(KP_TRY(UserAggregator::Create(e.spec, *format, comm)));
  }
  return {};
}

void HistRun::Add(const EventPlan& plan, const Record& record) {
  ++hits_;
  for (Event& e : events_)
    if (e.id == plan.id && e.user) e.user->Add(record);
}

bool HistRun::Due() {
  if (interval_ <= 0) return false;
  auto now = std::chrono::steady_clock::now();
  if (now < next_) return false;
  next_ = now + std::chrono::milliseconds(static_cast<int64_t>(interval_ * 1000));
  return true;
}

Result<std::string> HistRun::Report(const TracefsDir& dir, TraceSession& session, bool clear) {
  std::string out;
  for (Event& e : events_) {
    AggTable table;
    if (e.user) {
      table = e.user->Table(e.full);
      if (clear) e.user->Clear();
    } else {
      std::string text = KP_TRY(dir.Read(session.Path("events/" + e.path + "/hist")));
      table = KP_TRY(ParseKernelHist(text, e.spec, e.full));
      if (clear) {
        // The same trigger with :clear (before any filter) empties its table.
        std::string command = e.trigger;
        size_t filter = command.find(" if ");
        command.insert(filter == std::string::npos ? command.size() : filter, ":clear");
        KP_TRY_VOID(session.TriggerCommand(e.path, command));
      }
    }
    out += FormatTable(table, e.spec);
  }
  return out;
}

}  // namespace kprobectl::cli
