// SPDX-License-Identifier: GPL-2.0-or-later
//
// hist's answers in the forms other than its text table. In: the tables
// (AggTable, whichever side counted them) and the specs they were counted
// by. Out: a JSON object per table; the stacks of stack keys as a flame
// graph's profile; the percentiles of a --latency table; the rows of a
// latency heat map's column. The tables are the answer; these only say it
// another way.
#pragma once

#include <string>
#include <vector>

#include "kprobectl/aggregation.h"
#include "kprobectl/flame_graph.h"
#include "kprobectl/heat_map.h"
#include "kprobectl/quantiles.h"

namespace kprobectl {

// One line: {"event":..,"hits":..,"dropped":..,"counted_in":"kernel" or
// "kprobectl","rows":[{"keys":{KEY:VALUE...},"hits":N,"values":{COLUMN:N...}}]}
// in the table's sort order, cut to --top. A key's value: comm a string,
// pid a number, an argument as its type says (a number, hex a string, a
// string; null where it could not be read), a bucket
// {"bucket":"(1024, 2048]","min":1025,"max":2048} (its inclusive bounds),
// a stack an array of frames, innermost first. `extra` (a JSON member
// list, e.g. "\"interval\":2") is written after "event" when given.
std::string TableJson(const AggTable& table, const AggregationSpec& spec, bool in_kernel,
                      const std::string& extra = {});

// The stacks of the tables' stack keys, root first: user-space frames,
// then the kernel's; a row's other keys are labels below them (comm as it
// is, others KEY=VALUE), and with several tables each event's name below
// those. Every row, --top or not.
StackProfile StackProfileOf(const std::vector<AggTable>& tables, const std::vector<AggregationSpec>& specs);

// The latency key's buckets of a --latency table (the key on argument
// "ns"), every other key summed over, in ascending order; percentiles
// exact when that key is not bucketed.
Quantiles LatencyQuantiles(const AggTable& table, const AggregationSpec& spec);

// A heat map's series from one event's tables, one per -i interval, in
// order: a column each, a row per bucket of the latency key (every log2
// bucket between the shortest and the longest).
HeatMapSeries LatencySeries(const std::vector<AggTable>& intervals, const AggregationSpec& spec);

}  // namespace kprobectl
