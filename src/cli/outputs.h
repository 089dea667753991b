// SPDX-License-Identifier: GPL-2.0-or-later
//
// What trace and hist write, decided once: the format --format (or --json)
// asks for, every combination that cannot be drawn refused before anything
// is written, and the options a format needs (a flame graph needs stacks,
// a timeline pairs calls). Then hist's reports in that format: text tables
// (with a --latency table's percentiles), JSON objects, or the picture
// drawn from them at the end.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "commands.h"
#include "kprobectl/aggregation.h"

namespace kprobectl::cli {

enum class OutputFormat { kText, kJson, kFolded, kFlameGraph, kHeatMap, kTimeline };

// From --format and --json, checked against the rest: folded and
// flamegraph need stacks (hist: a stack key), heatmap --latency, timeline
// is trace's; none but json (a stream) goes with -i, but heatmap, whose
// columns -i's intervals are.
Result<OutputFormat> ChooseFormat(const TraceOptions& trace);

// The options as the format needs them: trace's folded and flamegraph
// record stacks (each probe's own side, unless --stack says which); a
// timeline pairs entries and returns (--latency's hidden entries and
// keys); hist's heat map has a column a second unless -i says otherwise.
TraceOptions WithFormatNeeds(const TraceOptions& trace, OutputFormat format);

// A picture (written once, when tracing ends) rather than a stream.
bool IsPicture(OutputFormat format);

// "2.50 s" of steady time since `start`, and how long in seconds.
double SecondsSince(std::chrono::steady_clock::time_point start);

// "; 12 more lost to ring-buffer overruns, not counted" for a picture's
// subtitle (empty when none were lost).
std::string LostText(uint64_t lost);

// hist's reports in the chosen format.
class HistAnswers {
 public:
  // `specs`: each table's spec, in the tables' order; `counted` says where
  // ("in the kernel (hist triggers)", "by kprobectl: <why>").
  HistAnswers(OutputFormat format, const TraceOptions& trace, std::vector<AggregationSpec> specs, bool in_kernel,
              std::string counted);
  // What to write for one report: each -i interval's, then the last
  // (`final`); a picture is all written with the last, which says how many
  // events were `lost` to ring-buffer overruns, uncounted.
  std::string Report(const std::vector<AggTable>& tables, bool final, uint64_t lost = 0);

 private:
  std::string Picture(uint64_t lost);
  std::string Title(const std::string& what) const;
  OutputFormat format_;
  TraceOptions trace_;
  std::vector<AggregationSpec> specs_;
  bool in_kernel_;
  std::string counted_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  unsigned reports_ = 0;
  std::vector<std::vector<AggTable>> kept_;  // by report: the heat map's columns, the flame graph's last
};

}  // namespace kprobectl::cli
