// SPDX-License-Identifier: GPL-2.0-or-later
//
// The Prometheus text format (version 0.0.4), as Prometheus' own parser
// reads it (prometheus/common expfmt): "# TYPE" before a family's samples,
// a family's samples together, label values with \\, \" and \n escaped.
// An aggregation with a bucketed key (.log2, .buckets=N) is a histogram of
// that argument, its other keys labels: a log2 bucket (2^(k-1), 2^k] has
// le="2^k", a linear one [a, a+N) of integers le="a+N-1"; cumulative, with
// +Inf, _sum (the argument's sum, which serve always asks for) and _count.
// Without one, its hits and sums are counters and its maxima gauges.
#include <algorithm>
#include <set>

#include "kprobectl/serve.h"

namespace kprobectl {

namespace {

std::string LabelValue(std::string_view text) {
  // A string key is printed quoted, as trace prints strings: the label
  // holds what is inside the quotes.
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') text = text.substr(1, text.size() - 2);
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string LabelName(const AggKey& key) { return key.kind == AggKey::kArg ? key.arg : key.text; }

struct Series {
  std::string labels;  // 'a="1",b="x"', without braces
  std::vector<const AggRow*> rows;
  uint64_t hits = 0;
};

std::string Braces(const std::string& labels, const std::string& more = {}) {
  std::string all = labels.empty() ? more : more.empty() ? labels : labels + "," + more;
  return all.empty() ? std::string() : "{" + all + "}";
}

std::string UpperBound(const AggKey& key, const AggCell& cell) {
  if (key.buckets == AggKey::kLog2) return cell.order >= 64 ? "+Inf" : std::to_string(uint64_t{1} << cell.order);
  return std::to_string(cell.order + static_cast<int64_t>(key.step) - 1);
}

void Histogram(const MetricsTable& t, size_t bucketed, const std::vector<Series>& series, std::string& out) {
  const AggregationSpec& spec = *t.spec;
  const AggKey& key = spec.keys[bucketed];
  std::string family = "kprobectl_" + t.name + "_" + key.arg;
  auto sum = std::find_if(spec.values.begin(), spec.values.end(),
                          [&](const AggValue& v) { return v.op == AggValue::kSum && v.arg == key.arg; });
  out += "# HELP " + family + " " + key.arg + " of " + t.table->event + ", bucketed (" + key.text + ")\n";
  out += "# TYPE " + family + " histogram\n";
  for (const Series& s : series) {
    std::vector<const AggRow*> rows = s.rows;
    std::sort(rows.begin(), rows.end(),
              [&](const AggRow* a, const AggRow* b) { return a->keys[bucketed].order < b->keys[bucketed].order; });
    uint64_t cumulative = 0;
    int64_t total = 0;
    for (const AggRow* row : rows) {
      cumulative += row->count;
      if (sum != spec.values.end()) total += row->values[static_cast<size_t>(sum - spec.values.begin())];
      std::string le = UpperBound(key, row->keys[bucketed]);
      if (le != "+Inf")
        out += family + "_bucket" + Braces(s.labels, "le=\"" + le + "\"") + " " + std::to_string(cumulative) + "\n";
    }
    out += family + "_bucket" + Braces(s.labels, "le=\"+Inf\"") + " " + std::to_string(cumulative) + "\n";
    if (sum != spec.values.end()) out += family + "_sum" + Braces(s.labels) + " " + std::to_string(total) + "\n";
    out += family + "_count" + Braces(s.labels) + " " + std::to_string(cumulative) + "\n";
  }
}

void Counters(const MetricsTable& t, std::optional<size_t> bucketed, const std::vector<Series>& series,
              std::string& out) {
  const AggregationSpec& spec = *t.spec;
  if (!bucketed) {
    std::string family = "kprobectl_" + t.name + "_hits_total";
    out += "# HELP " + family + " hits of " + t.table->event + " by " + LabelValue(spec.keys.front().text) + "\n";
    out += "# TYPE " + family + " counter\n";
    for (const Series& s : series) out += family + Braces(s.labels) + " " + std::to_string(s.hits) + "\n";
  }
  for (size_t v = 0; v < spec.values.size(); ++v) {
    const AggValue& value = spec.values[v];
    if (bucketed && value.op == AggValue::kSum && value.arg == spec.keys[*bucketed].arg) continue;  // its _sum
    bool max = value.op == AggValue::kMax;
    std::string family = "kprobectl_" + t.name + "_" + value.arg + (max ? "_max" : "_sum_total");
    out += "# HELP " + family + " " + value.Column() + " of " + t.table->event + "\n";
    out += "# TYPE " + family + (max ? " gauge\n" : " counter\n");
    for (const Series& s : series) {
      int64_t n = 0;
      bool first = true;
      for (const AggRow* row : s.rows) {
        n = max ? (first ? row->values[v] : std::max(n, row->values[v])) : n + row->values[v];
        first = false;
      }
      out += family + Braces(s.labels) + " " + std::to_string(n) + "\n";
    }
  }
}

}  // namespace

std::string RenderMetrics(const std::vector<ProbeHits>& probes, const std::vector<MetricsTable>& tables,
                          unsigned max_series) {
  std::string out;
  out += "# HELP kprobectl_probe_hits_total Times each probe was hit (kprobe_profile, uprobe_profile)\n";
  out += "# TYPE kprobectl_probe_hits_total counter\n";
  for (const ProbeHits& p : probes)
    out += "kprobectl_probe_hits_total{event=\"" + LabelValue(p.event) + "\"} " + std::to_string(p.hits) + "\n";
  out += "# HELP kprobectl_probe_misses_total Times a kernel probe was missed (kprobe_profile)\n";
  out += "# TYPE kprobectl_probe_misses_total counter\n";
  for (const ProbeHits& p : probes)
    if (p.misses)
      out += "kprobectl_probe_misses_total{event=\"" + LabelValue(p.event) + "\"} " + std::to_string(*p.misses) + "\n";
  if (std::any_of(probes.begin(), probes.end(), [](const ProbeHits& p) { return p.read.has_value(); })) {
    out += "# HELP kprobectl_events_read_total Events kprobectl read from the ring buffer to count them\n";
    out += "# TYPE kprobectl_events_read_total counter\n";
    for (const ProbeHits& p : probes)
      if (p.read)
        out += "kprobectl_events_read_total{event=\"" + LabelValue(p.event) + "\"} " + std::to_string(*p.read) + "\n";
  }
  std::string dropped =
      "# HELP kprobectl_series_dropped Label sets of an aggregation not exported (max-series)\n"
      "# TYPE kprobectl_series_dropped gauge\n";
  for (const MetricsTable& t : tables) {
    const AggregationSpec& spec = *t.spec;
    std::optional<size_t> bucketed;
    for (size_t k = 0; k < spec.keys.size(); ++k)
      if (spec.keys[k].buckets != AggKey::kExact && !bucketed) bucketed = k;
    std::map<std::string, Series> by_labels;
    for (const AggRow& row : t.table->rows) {
      std::vector<std::string> labels;
      for (size_t k = 0; k < spec.keys.size(); ++k)
        if (k != bucketed) labels.push_back(LabelName(spec.keys[k]) + "=\"" + LabelValue(row.keys[k].text) + "\"");
      std::string joined;
      for (const std::string& l : labels) joined += (joined.empty() ? "" : ",") + l;
      Series& s = by_labels[joined];
      s.labels = joined;
      s.rows.push_back(&row);
      s.hits += row.count;
    }
    std::vector<Series> series;
    for (auto& [labels, s] : by_labels) series.push_back(std::move(s));
    // The busiest label sets are kept.
    std::stable_sort(series.begin(), series.end(), [](const Series& a, const Series& b) { return a.hits > b.hits; });
    size_t cut = series.size() > max_series ? series.size() - max_series : 0;
    series.resize(series.size() - cut);
    std::sort(series.begin(), series.end(), [](const Series& a, const Series& b) { return a.labels < b.labels; });
    if (bucketed) Histogram(t, *bucketed, series, out);
    Counters(t, bucketed, series, out);
    dropped += "kprobectl_series_dropped{hist=\"" + t.name + "\"} " + std::to_string(cut) + "\n";
  }
  if (!tables.empty()) out += dropped;
  return out;
}

}  // namespace kprobectl
