// SPDX-License-Identifier: GPL-2.0-or-later
//
// The heat map as SVG. One panel per function, stacked, sharing the time
// axis: a row per bucket (the shortest at the bottom, labelled in hist's
// notation), a column per stretch of time, each cell coloured by its count
// on a log scale (ColorBrewer's YlOrRd: one call pale yellow, the busiest
// cell of the picture dark red), empty cells left blank. No script: the
// cells' hover text is their <title>.
#include <algorithm>
#include <cmath>

#include "kprobectl/heat_map.h"
#include "kprobectl/quantiles.h"
#include "kprobectl/strings.h"
#include "svg_text.h"

namespace kprobectl {

namespace {

using render::Number;
using render::Xml;

constexpr double kWidth = 1200;
constexpr double kRight = 20;
constexpr double kHeadTop = 70;    // title, subtitle and the colour scale
constexpr double kPanelHead = 34;  // a panel's name and summary
constexpr double kAxis = 34;       // the time axis under the last panel
constexpr double kLabelChar = 6.6;

constexpr const char* kScale[] = {"#ffffcc", "#ffeda0", "#fed976", "#feb24c", "#fd8d3c",
                                  "#fc4e2a", "#e31a1c", "#bd0026", "#800026"};

const char* CellColour(uint64_t count, uint64_t busiest) {
  if (busiest <= 1) return kScale[std::size(kScale) - 1];
  double t = std::log(static_cast<double>(count)) / std::log(static_cast<double>(busiest));
  auto i = static_cast<size_t>(std::lround(t * static_cast<double>(std::size(kScale) - 1)));
  return kScale[std::min(i, std::size(kScale) - 1)];
}

double RowHeight(size_t rows) { return std::clamp(320.0 / static_cast<double>(std::max<size_t>(rows, 1)), 8.0, 18.0); }

std::string Calls(uint64_t n) { return std::to_string(n) + (n == 1 ? " call" : " calls"); }

}  // namespace

double ColumnSeconds(double span, size_t columns) {
  double wanted = span / static_cast<double>(std::max<size_t>(columns, 1));
  for (double decade = 1e-6;; decade *= 10)
    for (double step : {1.0, 2.0, 5.0})
      if (step * decade >= wanted * (1 - 1e-9)) return step * decade;
}

HeatMapSeries Log2Series(std::string name, const std::vector<std::pair<uint64_t, uint64_t>>& calls, uint64_t start,
                         double column_seconds, size_t columns) {
  HeatMapSeries out;
  out.name = std::move(name);
  if (calls.empty() || columns == 0) return out;
  uint64_t low = UINT64_MAX, high = 0;
  for (auto [end, ns] : calls) {
    low = std::min(low, Log2Bucket(ns));
    high = std::max(high, Log2Bucket(ns));
  }
  for (uint64_t k = low; k <= high; ++k) out.buckets.push_back(Log2BucketText(k));
  out.cells.assign(columns, std::vector<uint64_t>(out.buckets.size(), 0));
  std::vector<uint64_t> values;
  for (auto [end, ns] : calls) {
    double at = static_cast<double>(end >= start ? end - start : 0) / 1e9 / column_seconds;
    size_t column = std::min(static_cast<size_t>(at), columns - 1);
    ++out.cells[column][Log2Bucket(ns) - low];
    values.push_back(ns);
  }
  out.summary = Calls(calls.size()) + ": " + QuantileLine(ExactQuantiles(std::move(values)), "ns");
  return out;
}

std::string HeatMapSvg(const HeatMap& map) {
  size_t columns = 0, label = 8;
  uint64_t busiest = 0;
  double panels = 0;
  for (const HeatMapSeries& s : map.series) {
    columns = std::max(columns, s.cells.size());
    for (const std::string& b : s.buckets) label = std::max(label, b.size());
    for (const auto& column : s.cells)
      for (uint64_t n : column) busiest = std::max(busiest, n);
    panels += kPanelHead + RowHeight(s.buckets.size()) * static_cast<double>(std::max<size_t>(s.buckets.size(), 1)) + 8;
  }
  const double left = 16 + static_cast<double>(label) * kLabelChar;
  const double plot = kWidth - left - kRight;
  const double cell_width = plot / static_cast<double>(std::max<size_t>(columns, 1));
  const auto height = static_cast<unsigned>(kHeadTop + panels + kAxis);
  std::string out = render::SvgOpening(static_cast<unsigned>(kWidth), height);
  out +=
      "<style>text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}#title{font-size:17px;text-anchor:middle}"
      "#subtitle{text-anchor:middle;fill:#555}.axis{font-size:11px;fill:#444}.name{font-size:13px;font-weight:bold}"
      ".summary{font-size:11px;fill:#555}</style>\n";
  out += "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  out += "<text id=\"title\" x=\"" + Number(kWidth / 2) + "\" y=\"24\">" + Xml(map.title) + "</text>\n";
  out += "<text id=\"subtitle\" x=\"" + Number(kWidth / 2) + "\" y=\"42\">" + Xml(map.subtitle) + "</text>\n";
  // The colour scale: one call to the busiest cell's count.
  double scale_x = kWidth - kRight - 9 * 18 - 120;
  out += "<text class=\"axis\" x=\"" + Number(scale_x - 6) +
         "\" y=\"63\" style=\"text-anchor:end\">calls per cell: 1</text>\n";
  for (size_t i = 0; i < std::size(kScale); ++i)
    out += "<rect x=\"" + Number(scale_x + 18 * static_cast<double>(i)) +
           "\" y=\"53\" width=\"18\" height=\"12\" fill=\"" + kScale[i] + "\"/>\n";
  out += "<text class=\"axis\" x=\"" + Number(scale_x + 9 * 18 + 6) + "\" y=\"63\">" + std::to_string(busiest) +
         " (log scale)</text>\n";
  double y = kHeadTop;
  for (const HeatMapSeries& s : map.series) {
    out += "<text class=\"name\" x=\"" + Number(left) + "\" y=\"" + Number(y + 14) + "\">" + Xml(s.name) + "</text>\n";
    out += "<text class=\"summary\" x=\"" + Number(left) + "\" y=\"" + Number(y + 28) + "\">" + Xml(s.summary) +
           "</text>\n";
    y += kPanelHead;
    const double row = RowHeight(s.buckets.size());
    const double rows = static_cast<double>(s.buckets.size());
    out += "<rect x=\"" + Number(left) + "\" y=\"" + Number(y) + "\" width=\"" + Number(plot) + "\" height=\"" +
           Number(row * rows) + "\" fill=\"#f4f4f4\"/>\n";
    out += "<text class=\"axis\" transform=\"translate(12," + Number(y + row * rows / 2) +
           ") rotate(-90)\" style=\"text-anchor:middle\">" + Xml(map.unit) + "</text>\n";
    for (size_t b = 0; b < s.buckets.size(); ++b) {
      double row_y = y + (rows - 1 - static_cast<double>(b)) * row;
      if (row >= 11 || b % 2 == 0)
        out += "<text class=\"axis\" x=\"" + Number(left - 4) + "\" y=\"" + Number(row_y + row / 2 + 4) +
               "\" style=\"text-anchor:end\">" + Xml(s.buckets[b]) + "</text>\n";
      for (size_t c = 0; c < s.cells.size(); ++c) {
        uint64_t n = s.cells[c][b];
        if (n == 0) continue;
        double from = static_cast<double>(c) * map.column_seconds;
        out += "<rect class=\"cell\" x=\"" + Number(left + static_cast<double>(c) * cell_width) + "\" y=\"" +
               Number(row_y) + "\" width=\"" + Number(cell_width) + "\" height=\"" + Number(row) + "\" fill=\"" +
               CellColour(n, busiest) + "\"><title>" + Xml(DurationText(from)) + " to " +
               Xml(DurationText(from + map.column_seconds)) + ", " + Xml(s.buckets[b]) + " " + Xml(map.unit) + ": " +
               Calls(n) + "</title></rect>\n";
      }
    }
    y += row * rows + 8;
  }
  // The time axis: about ten labels, at column edges.
  size_t every = std::max<size_t>(1, (columns + 9) / 10);
  for (size_t c = 0; c <= columns; c += every) {
    double x = left + static_cast<double>(c) * cell_width;
    out += "<line x1=\"" + Number(x) + "\" y1=\"" + Number(y - 6) + "\" x2=\"" + Number(x) + "\" y2=\"" +
           Number(y - 2) + "\" stroke=\"#444\"/>\n";
    out += "<text class=\"axis\" x=\"" + Number(x) + "\" y=\"" + Number(y + 10) + "\" style=\"text-anchor:middle\">" +
           Xml(DurationText(static_cast<double>(c) * map.column_seconds)) + "</text>\n";
  }
  out += "<text class=\"axis\" x=\"" + Number(left + plot / 2) + "\" y=\"" + Number(y + 26) +
         "\" style=\"text-anchor:middle\">time since the first call (each column " +
         Xml(DurationText(map.column_seconds)) + ")</text>\n";
  out += "</svg>\n";
  return out;
}

}  // namespace kprobectl
