// SPDX-License-Identifier: GPL-2.0-or-later
#include "trace_answers.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

#include "kprobectl/aggregation.h"
#include "kprobectl/json_object.h"
#include "kprobectl/strings.h"

namespace kprobectl::cli {

namespace {

// A probe's function, from where it is ("compute+0x4", a return probe's
// "compute", Go's return instruction "main.f+0x2c").
std::string FunctionOf(const EventPlan& plan) { return ParseFrame(plan.location, StackFrame::kKernel).name; }

std::string GroupOf(const EventPlan& plan) { return plan.full_name.substr(0, plan.full_name.find(':')); }

// {"a":1} and "b":2 make {"a":1,"b":2}; either may be empty.
std::string WithMember(const std::string& object, const std::string& member) {
  if (member.empty()) return object;
  if (object.empty() || object == "{}") return "{" + member + "}";
  return object.substr(0, object.size() - 1) + "," + member + "}";
}

}  // namespace

void StackCounter::Add(const EventPlan& plan, const Printer::Frames& frames) {
  if (plan.hidden) return;
  ++events_;
  std::vector<StackFrame> stack;
  if (label_events_) stack.push_back({plan.full_name, "", StackFrame::kLabel});
  for (auto f = frames.user.rbegin(); f != frames.user.rend(); ++f) stack.push_back(ParseFrame(*f, StackFrame::kUser));
  auto top = tops_.find(plan.id);
  AggCell kernel = StackCell(frames.kernel, top != tops_.end() ? top->second : std::string());
  if (!frames.kernel.empty()) {
    std::vector<std::string> lines = SplitLines(kernel.text);
    for (auto f = lines.rbegin(); f != lines.rend(); ++f) stack.push_back(ParseFrame(*f, StackFrame::kKernel));
  }
  ++stacks_[stack];
}

StackProfile StackCounter::Profile() const {
  StackProfile profile;
  for (const auto& [frames, count] : stacks_) profile.stacks.push_back({frames, count});
  return profile;
}

TimelineRecorder::TimelineRecorder(Printer& printer, std::function<std::string(int)> comm,
                                   std::function<int(int)> process)
    : printer_(printer), comm_(std::move(comm)), process_(std::move(process)) {}

std::pair<int, int64_t> TimelineRecorder::Where(const EventPlan& plan, const Record& record) {
  auto [known, fresh] = processes_.try_emplace(record.pid, 0);
  if (fresh) known->second = process_ ? process_(record.pid) : 0;
  // A thread gone before kprobectl asked is its own process.
  int pid = known->second ? known->second : record.pid;
  if (!timeline_.processes.contains(pid)) {
    std::string name = comm_(pid);
    timeline_.processes[pid] = name.empty() || name == "<...>" ? comm_(record.pid) : name;
  }
  int64_t track = record.pid;
  std::string name = comm_(record.pid);
  uint64_t goroutine = 0;
  if (plan.call_offset && *plan.call_offset + 8 <= record.size) {
    std::memcpy(&goroutine, record.data + *plan.call_offset, 8);
    auto [at, added] =
        goroutines_.try_emplace(goroutine, Timeline::kGoroutineTracks + static_cast<int64_t>(goroutines_.size()));
    track = at->second;
    name = "goroutine (g " + Hex(goroutine) + ")";
  }
  timeline_.tracks.try_emplace({pid, track}, name);
  return {pid, track};
}

void TimelineRecorder::Add(const EventPlan& plan, const Record& record, const OpenCall* call) {
  if (!plan.hidden) ++events_;
  auto [pid, track] = Where(plan, record);
  std::string args = plan.hidden ? std::string() : printer_.ArgsJson(plan, record);
  if (args == "{}") args.clear();
  // Entries kept by their time under each return they pair with
  // (EventPlan::opens); a return closes the one the tracer's pairing
  // (call_pairing.h: by thread or goroutine, and by stack depth) says it
  // ends, or none. A probe with no return to pair with is an instant.
  if (!plan.opens.empty()) {
    for (const std::string& key : plan.opens)
      open_[key].push_back({record.ts, pid, track, FunctionOf(plan), GroupOf(plan), args});
    return;
  }
  if (plan.call_key.empty() || (!plan.retprobe && !plan.latency_return)) {
    timeline_.instants.push_back({pid, track, record.ts, plan.full_name, GroupOf(plan), args, false});
    return;
  }
  auto& calls = open_[plan.call_key];
  if (plan.retprobe) args = WithMember(args, "\"caller\":" + JsonString(printer_.Caller(plan, record)));
  auto entry = call ? std::find_if(calls.rbegin(), calls.rend(),
                                   [&](const Open& open) { return open.start == call->ts && open.track == track; })
                    : calls.rend();
  if (entry == calls.rend()) {
    args = WithMember(args, "\"unpaired\":\"its call's entry was not recorded (began before tracing, or lost)\"");
    timeline_.instants.push_back({pid, track, record.ts, plan.full_name, GroupOf(plan), args, false});
    return;
  }
  Open opened = std::move(*entry);
  calls.erase(std::next(entry).base());
  std::string merged = opened.args;
  if (!args.empty()) merged = WithMember(merged, "\"return\":" + args);
  timeline_.slices.push_back({opened.pid, opened.track, opened.start, record.ts, opened.name, opened.category, merged});
}

void TimelineRecorder::Lost(uint64_t time, int cpu, uint64_t count) {
  timeline_.instants.push_back(
      {0, 0, time, std::to_string(count) + " events lost (CPU " + std::to_string(cpu) + "'s ring buffer overran)",
       "kprobectl", "", true});
}

Timeline TimelineRecorder::Finish(std::string producer) {
  for (auto& [key, calls] : open_)
    for (Open& entry : calls)
      timeline_.instants.push_back(
          {entry.pid, entry.track, entry.start, entry.name, entry.category,
           WithMember(entry.args, "\"unpaired\":\"no return seen: still running when tracing stopped\""), false});
  open_.clear();
  Timeline out = std::move(timeline_);
  out.producer = std::move(producer);
  return out;
}

int ProcessOfThread(const std::string& proc, int tid) {
  std::ifstream in(proc + "/" + std::to_string(tid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("Tgid:")) return static_cast<int>(ParseUnsigned(Trim(line.substr(5))).value_or(0));
  return 0;
}

HeatMap LatencyHeatMap(const std::vector<Printer::LatencyCalls>& functions) {
  HeatMap map;
  uint64_t start = UINT64_MAX, end = 0, calls = 0;
  std::vector<std::string> names;
  for (const Printer::LatencyCalls& f : functions) {
    names.push_back(f.function);
    for (auto [returned, ns] : f.calls) {
      start = std::min(start, returned >= ns ? returned - ns : 0);
      end = std::max(end, returned);
      ++calls;
    }
  }
  map.title = "Time from entry to return: " + Join(names, ", ");
  if (calls == 0) {
    map.subtitle = "no call was timed (an entry and its return on one thread)";
    return map;
  }
  double span = static_cast<double>(end - start) / 1e9;
  map.column_seconds = ColumnSeconds(span);
  auto columns = static_cast<size_t>(std::floor(span / map.column_seconds)) + 1;
  map.subtitle = std::to_string(calls) + (calls == 1 ? " call" : " calls") + " in " + DurationText(span) +
                 ", each timed by kprobectl from its entry to its return (its own thread's, or goroutine's)";
  for (const Printer::LatencyCalls& f : functions)
    map.series.push_back(Log2Series(f.function, f.calls, start, map.column_seconds, columns));
  return map;
}

TracePictures::TracePictures(OutputFormat format, const TracePlan& plan, const std::vector<EventPlan>& plans,
                             Printer& printer, CommCache& comms, const std::string& proc)
    : format_(format), printer_(printer) {
  std::map<int, std::string> tops;
  size_t shown = 0;
  for (size_t i = 0; i < plan.events.size() && i < plans.size(); ++i) {
    const TraceEventDef& def = plan.events[i];
    if (def.kind == ProbeKind::kKernel && def.target.kind == ProbeTarget::kSymbol)
      tops[plans[i].id] = def.target.symbol;
    shown += !plans[i].hidden;
  }
  stacks_.emplace(std::move(tops), shown > 1);
  timeline_.emplace(
      printer, [&comms](int pid) { return comms.Lookup(pid); }, [proc](int tid) { return ProcessOfThread(proc, tid); });
}

void TracePictures::Attach(Tracer& tracer) {
  tracer.SetSink([this](const EventPlan& p, const Record& r, const EventStacks* s, const OpenCall* call) {
    if (format_ == OutputFormat::kTimeline)
      timeline_->Add(p, r, call);
    else if (format_ == OutputFormat::kHeatMap)
      printer_.Observe(p, r, call);
    else
      stacks_->Add(p, printer_.StackFrames(p, r, s ? *s : EventStacks{}));
  });
  if (format_ == OutputFormat::kTimeline)
    tracer.SetLostSink([this](uint64_t time, int cpu, uint64_t n) { timeline_->Lost(time, cpu, n); });
}

uint64_t TracePictures::events() const {
  return format_ == OutputFormat::kTimeline  ? timeline_->events()
         : format_ == OutputFormat::kHeatMap ? printer_.printed()
                                             : stacks_->events();
}

std::string TracePictures::Draw(const TracePlan& plan, double seconds, uint64_t lost) {
  std::vector<std::string> names;
  for (const TraceEventDef& def : plan.events)
    if (!plan.hidden.contains(def.Path())) names.push_back(def.FullName());
  std::string traced = Join(names, ", ");
  if (format_ == OutputFormat::kTimeline) return TraceEventJson(timeline_->Finish("kprobectl trace: " + traced));
  if (format_ == OutputFormat::kHeatMap) {
    HeatMap map = LatencyHeatMap(printer_.Latencies());
    map.subtitle += LostText(lost);
    return HeatMapSvg(map);
  }
  StackProfile profile = stacks_->Profile();
  profile.title = traced + " by call stack";
  profile.subtitle = std::to_string(events()) + (events() == 1 ? " event" : " events") + " in " +
                     DurationText(seconds) + ", each with its stack as kprobectl trace --stack records it" +
                     LostText(lost);
  return format_ == OutputFormat::kFolded ? FoldedStacks(profile) : FlameGraphSvg(profile);
}

}  // namespace kprobectl::cli
