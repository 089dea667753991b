// SPDX-License-Identifier: GPL-2.0-or-later
//
// Latency heat maps. In: for each timed function, how many of its calls
// took how long in each stretch of the run: time across in columns of one
// width, buckets up (the kernel's log2 buckets where kprobectl saw each
// call, or the key's buckets of each -i interval's table where hist
// counted). Out: an SVG, colour by count, each cell's count in its hover
// text, the percentiles under each function's name.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kprobectl {

struct HeatMapSeries {
  std::string name;                          // the function, or the event
  std::string summary;                       // its calls and percentiles, one line
  std::vector<std::string> buckets;          // the rows, the shortest first, in hist's notation
  std::vector<std::vector<uint64_t>> cells;  // [column][bucket]: calls
};

struct HeatMap {
  std::string title;     // what was timed
  std::string subtitle;  // how, and over how long
  std::string unit = "ns";
  double column_seconds = 1;  // each column's width in time; the first starts at 0
  std::vector<HeatMapSeries> series;
};

// A column width for `span` seconds in at most `columns` columns: 1, 2 or 5
// times a power of ten, 1 us at least.
double ColumnSeconds(double span, size_t columns = 100);

// A series from each call's (return time, ns) in the trace clock's ns:
// columns from `start` (ns), `column_seconds` wide, `columns` of them;
// rows the log2 buckets from the shortest call's to the longest's.
HeatMapSeries Log2Series(std::string name, const std::vector<std::pair<uint64_t, uint64_t>>& calls, uint64_t start,
                         double column_seconds, size_t columns);

std::string HeatMapSvg(const HeatMap& map);

}  // namespace kprobectl
