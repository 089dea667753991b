// SPDX-License-Identifier: GPL-2.0-or-later
#include "outputs.h"

#include <algorithm>
#include <map>

#include "kprobectl/aggregation_outputs.h"
#include "kprobectl/flame_graph.h"
#include "kprobectl/heat_map.h"
#include "kprobectl/strings.h"

namespace kprobectl::cli {

namespace {

// A heat map of more columns than this merges neighbouring intervals.
constexpr size_t kMaxColumns = 300;

const std::map<std::string, OutputFormat>& Formats() {
  static const std::map<std::string, OutputFormat> formats = {
      {"text", OutputFormat::kText},       {"json", OutputFormat::kJson},
      {"folded", OutputFormat::kFolded},   {"flamegraph", OutputFormat::kFlameGraph},
      {"heatmap", OutputFormat::kHeatMap}, {"timeline", OutputFormat::kTimeline}};
  return formats;
}

bool HasStackKey(const TraceOptions& trace) {
  auto spec = ParseAggregation(*trace.aggregate);
  // A spec that does not parse is refused by the plan, with its reason.
  return !spec || HasKey(*spec, AggKey::kKernelStack) || HasKey(*spec, AggKey::kUserStack);
}

// "comm, user-space stack": the keys as a person says them.
std::string KeysSaid(const AggregationSpec& spec) {
  std::vector<std::string> keys;
  for (const AggKey& k : spec.keys)
    keys.push_back(k.kind == AggKey::kKernelStack ? "kernel stack"
                   : k.kind == AggKey::kUserStack ? "user-space stack"
                                                  : k.text);
  return Join(keys, ", ");
}

}  // namespace

Result<OutputFormat> ChooseFormat(const TraceOptions& trace) {
  const bool hist = trace.aggregate.has_value();
  std::string name = trace.format.empty() ? "text" : trace.format;
  if (trace.json && name != "json" && name != "text")
    return Fail("--json and --format " + name + " ask for two formats", "give one of them");
  if (trace.json) name = "json";
  auto found = Formats().find(name);
  if (found == Formats().end() || (hist && found->second == OutputFormat::kTimeline))
    return Fail("--format " + name + ": " + (found == Formats().end() ? "no such format" : "hist keeps no events"),
                hist ? "hist writes text, json, folded, flamegraph or heatmap; a timeline is 'kprobectl trace "
                       "--format timeline'"
                     : "trace writes text, json, folded, flamegraph, heatmap or timeline");
  OutputFormat format = found->second;
  bool stacks = format == OutputFormat::kFolded || format == OutputFormat::kFlameGraph;
  if (stacks && hist && !HasStackKey(trace))
    return Fail("--format " + name + " draws stacks, and hist counts none here",
                "count by a stack: -k kstack (the kernel's) or -k ustack (user space's)");
  if (format == OutputFormat::kHeatMap && !trace.latency)
    return Fail("--format heatmap draws the times --latency takes",
                "add --latency, with return probes: --probe 'FUNC%return'");
  if (format == OutputFormat::kHeatMap && trace.cumulative)
    return Fail("--cumulative with --format heatmap: each column is what its interval counted");
  if (format == OutputFormat::kTimeline && trace.stack != StackMode::kNone)
    return Fail("--stack with --format timeline: a timeline has no stacks", "--format flamegraph draws the stacks");
  if (trace.interval > 0 && IsPicture(format) && format != OutputFormat::kHeatMap)
    return Fail("-i with --format " + name + ": the picture is written once, when counting ends",
                "leave -i out, or use --json for a stream of tables");
  return format;
}

TraceOptions WithFormatNeeds(const TraceOptions& trace, OutputFormat format) {
  TraceOptions out = trace;
  bool hist = trace.aggregate.has_value();
  if (!hist && (format == OutputFormat::kFolded || format == OutputFormat::kFlameGraph) &&
      out.stack == StackMode::kNone)
    out.stack = StackMode::kAuto;
  if (format == OutputFormat::kTimeline) out.latency = true;
  if (hist && format == OutputFormat::kHeatMap && out.interval <= 0) out.interval = 1;
  return out;
}

bool IsPicture(OutputFormat format) { return format != OutputFormat::kText && format != OutputFormat::kJson; }

std::string LostText(uint64_t lost) {
  return lost ? "; " + std::to_string(lost) + " more lost to ring-buffer overruns, not counted" : std::string();
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

HistAnswers::HistAnswers(OutputFormat format, const TraceOptions& trace, std::vector<AggregationSpec> specs,
                         bool in_kernel, std::string counted)
    : format_(format), trace_(trace), specs_(std::move(specs)), in_kernel_(in_kernel), counted_(std::move(counted)) {}

std::string HistAnswers::Report(const std::vector<AggTable>& tables, bool final, uint64_t lost) {
  ++reports_;
  std::string out;
  switch (format_) {
    case OutputFormat::kText:
      for (size_t i = 0; i < tables.size() && i < specs_.size(); ++i) {
        out += FormatTable(tables[i], specs_[i]);
        if (trace_.latency)
          if (std::string line = QuantileLine(LatencyQuantiles(tables[i], specs_[i]), "ns"); !line.empty())
            out += "latency percentiles: " + line + "\n";
      }
      return out;
    case OutputFormat::kJson:
      for (size_t i = 0; i < tables.size() && i < specs_.size(); ++i)
        out += TableJson(tables[i], specs_[i], in_kernel_,
                         trace_.interval > 0 ? "\"interval\":" + std::to_string(reports_) : std::string());
      return out;
    default:
      kept_.push_back(tables);
      return final ? Picture(lost) : std::string();
  }
}

std::string HistAnswers::Title(const std::string& what) const {
  std::vector<std::string> events;
  if (!kept_.empty())
    for (const AggTable& t : kept_.back()) events.push_back(t.event);
  return Join(events, ", ") + ": " + what;
}

std::string HistAnswers::Picture(uint64_t lost) {
  uint64_t hits = 0;
  for (const auto& report : kept_)
    for (const AggTable& t : report) hits += t.hits;
  std::string over = std::to_string(hits) + (hits == 1 ? " hit in " : " hits in ") +
                     DurationText(SecondsSince(start_)) + ", counted " + counted_ + LostText(lost);
  if (format_ == OutputFormat::kHeatMap) {
    // Neighbouring intervals merged down to kMaxColumns columns.
    size_t merge = (kept_.size() + kMaxColumns - 1) / kMaxColumns;
    HeatMap map;
    map.title = Title("time from entry to return");
    map.subtitle = over;
    map.column_seconds = trace_.interval * static_cast<double>(merge);
    for (size_t e = 0; e < specs_.size(); ++e) {
      std::vector<AggTable> columns;
      for (size_t r = 0; r < kept_.size(); ++r) {
        if (r % merge == 0) columns.push_back(AggTable{kept_[r].at(e).event, {}, 0, 0});
        std::vector<AggRow>& rows = columns.back().rows;
        rows.insert(rows.end(), kept_[r].at(e).rows.begin(), kept_[r].at(e).rows.end());
      }
      map.series.push_back(LatencySeries(columns, specs_[e]));
    }
    return HeatMapSvg(map);
  }
  StackProfile profile = StackProfileOf(kept_.back(), specs_);
  profile.title = Title("hits by " + (specs_.empty() ? std::string() : KeysSaid(specs_.front())));
  profile.subtitle = over;
  return format_ == OutputFormat::kFolded ? FoldedStacks(profile) : FlameGraphSvg(profile);
}

}  // namespace kprobectl::cli
