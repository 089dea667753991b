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
// trigger as it reads it, which adds ":sort=hitcount" before ":size=".
std::string_view SectionOf(std::string_view text, const std::string& trigger) {
  std::string head = "# trigger info: " + trigger.substr(0, trigger.find(":size="));
  size_t at = text.find(head);
  return at == std::string_view::npos ? text : text.substr(at);
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
    out.push_back(KP_TRY(ParseKernelHist(SectionOf(text, e.trigger), e.spec, e.full)));
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

Result<std::string> HistRun::Report(const TracefsDir& dir, TraceSession& session, bool clear) {
  std::vector<AggTable> tables = KP_TRY(Tables(dir, session, clear));
  std::string out;
  for (size_t i = 0; i < tables.size(); ++i) out += FormatTable(tables[i], events_[i].spec);
  return out;
}

}  // namespace kprobectl::cli
