// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>
#include <map>

#include "kprobectl/aggregation_outputs.h"
#include "kprobectl/json_object.h"
#include "kprobectl/strings.h"

namespace kprobectl {

namespace {

// The bytes of a string printed C-quoted ("...", with \" \\ \n \t \r
// \xNN), as trace and hist print them; nullopt for anything else
// ("(fault)").
std::optional<std::string> Unquoted(std::string_view text) {
  if (text.size() < 2 || text.front() != '"' || text.back() != '"') return std::nullopt;
  std::string out;
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    char c = text[i];
    if (c != '\\' || i + 2 >= text.size()) {
      out += c;
      continue;
    }
    char e = text[++i];
    if (e == 'x' && i + 2 < text.size()) {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
    }
  }
  return out;
}

// A bucket and the smallest and largest value it holds.
std::string Bucket(const std::string& text, const std::string& low, const std::string& high) {
  return "{\"bucket\":" + JsonString(text) + ",\"min\":" + low + ",\"max\":" + high + "}";
}

std::string KeyJson(const AggKey& key, const AggCell& cell) {
  switch (key.kind) {
    case AggKey::kComm:
      return JsonString(cell.text);
    case AggKey::kPid:
      return cell.text;
    case AggKey::kKernelStack:
    case AggKey::kUserStack: {
      std::vector<std::string> frames;
      if (cell.text != "[no stack]")
        for (const std::string& f : SplitLines(cell.text)) frames.push_back(JsonString(f));
      return "[" + Join(frames, ",") + "]";
    }
    case AggKey::kArg:
      break;
  }
  if (!cell.numeric) {
    auto text = Unquoted(cell.text);
    return text ? JsonString(*text) : "null";
  }
  switch (key.buckets) {
    case AggKey::kLog2: {
      auto k = static_cast<uint64_t>(cell.order);
      return Bucket(cell.text, std::to_string(Log2BucketLow(k)), std::to_string(Log2BucketHigh(k)));
    }
    case AggKey::kLinear:
      return Bucket(cell.text, std::to_string(cell.order),
                    std::to_string(cell.order + static_cast<int64_t>(key.step) - 1));
    case AggKey::kExact:
      break;
  }
  return key.type.base == FetchType::kHex ? JsonString(cell.text) : cell.text;
}

const AggKey* LatencyKey(const AggregationSpec& spec, size_t& index) {
  for (index = 0; index < spec.keys.size(); ++index)
    if (spec.keys[index].kind == AggKey::kArg && spec.keys[index].arg == "ns") return &spec.keys[index];
  return nullptr;
}

// The latency key's cells and their counts, every other key summed over.
std::map<int64_t, CountedBucket> LatencyBuckets(const AggTable& table, const AggregationSpec& spec) {
  std::map<int64_t, CountedBucket> out;
  size_t index = 0;
  if (!LatencyKey(spec, index)) return out;
  for (const AggRow& row : table.rows) {
    CountedBucket& b = out[row.keys[index].order];
    b.text = row.keys[index].text;
    b.count += row.count;
  }
  return out;
}

}  // namespace

std::string TableJson(const AggTable& table, const AggregationSpec& spec, bool in_kernel, const std::string& extra) {
  std::string out = "{\"event\":" + JsonString(table.event);
  if (!extra.empty()) out += "," + extra;
  out += ",\"hits\":" + std::to_string(table.hits) + ",\"dropped\":" + std::to_string(table.dropped) +
         ",\"counted_in\":" + (in_kernel ? "\"kernel\"" : "\"kprobectl\"") + ",\"rows\":[";
  std::vector<AggRow> rows = SortedRows(table, spec);
  for (size_t r = 0; r < rows.size(); ++r) {
    const AggRow& row = rows[r];
    out += r ? ",{\"keys\":{" : "{\"keys\":{";
    for (size_t i = 0; i < spec.keys.size() && i < row.keys.size(); ++i)
      out += (i ? "," : "") + JsonString(spec.keys[i].text) + ":" + KeyJson(spec.keys[i], row.keys[i]);
    out += "},\"hits\":" + std::to_string(row.count) + ",\"values\":{";
    for (size_t i = 0; i < spec.values.size() && i < row.values.size(); ++i)
      out += (i ? "," : "") + JsonString(spec.values[i].Column()) + ":" + std::to_string(row.values[i]);
    out += "}}";
  }
  return out + "]}\n";
}

StackProfile StackProfileOf(const std::vector<AggTable>& tables, const std::vector<AggregationSpec>& specs) {
  StackProfile profile;
  for (size_t t = 0; t < tables.size() && t < specs.size(); ++t) {
    const AggregationSpec& spec = specs[t];
    for (const AggRow& row : tables[t].rows) {
      CountedStack stack;
      stack.count = row.count;
      if (tables.size() > 1) stack.frames.push_back({tables[t].event, "", StackFrame::kLabel});
      for (size_t i = 0; i < spec.keys.size(); ++i)
        if (!spec.keys[i].IsStack())
          stack.frames.push_back(
              {spec.keys[i].kind == AggKey::kComm ? row.keys[i].text : spec.keys[i].text + "=" + row.keys[i].text, "",
               StackFrame::kLabel});
      for (auto [kind, side] :
           {std::pair{AggKey::kUserStack, StackFrame::kUser}, std::pair{AggKey::kKernelStack, StackFrame::kKernel}})
        for (size_t i = 0; i < spec.keys.size(); ++i) {
          if (spec.keys[i].kind != kind || row.keys[i].text == "[no stack]") continue;
          std::vector<std::string> frames = SplitLines(row.keys[i].text);
          for (auto f = frames.rbegin(); f != frames.rend(); ++f) stack.frames.push_back(ParseFrame(*f, side));
        }
      profile.stacks.push_back(std::move(stack));
    }
  }
  return profile;
}

Quantiles LatencyQuantiles(const AggTable& table, const AggregationSpec& spec) {
  std::vector<CountedBucket> ascending;
  for (auto& [order, bucket] : LatencyBuckets(table, spec)) ascending.push_back(bucket);
  Quantiles out = BucketQuantiles(ascending);
  size_t index = 0;
  const AggKey* key = LatencyKey(spec, index);
  out.exact = key && key->buckets == AggKey::kExact;
  return out;
}

HeatMapSeries LatencySeries(const std::vector<AggTable>& intervals, const AggregationSpec& spec) {
  HeatMapSeries out;
  if (!intervals.empty()) out.name = intervals.front().event;
  size_t index = 0;
  const AggKey* key = LatencyKey(spec, index);
  std::vector<std::map<int64_t, CountedBucket>> columns;
  std::map<int64_t, std::string> rows;
  uint64_t calls = 0;
  for (const AggTable& table : intervals) {
    columns.push_back(LatencyBuckets(table, spec));
    for (const auto& [order, bucket] : columns.back()) {
      rows[order] = bucket.text;
      calls += bucket.count;
    }
  }
  // Log2 buckets are few: every one between the first and the last.
  if (key && key->buckets == AggKey::kLog2 && !rows.empty())
    for (int64_t k = rows.begin()->first; k < rows.rbegin()->first; ++k)
      rows.try_emplace(k, Log2BucketText(static_cast<uint64_t>(k)));
  std::vector<int64_t> orders;
  for (const auto& [order, text] : rows) {
    orders.push_back(order);
    out.buckets.push_back(text);
  }
  for (const auto& column : columns) {
    std::vector<uint64_t> cells;
    for (int64_t order : orders) cells.push_back(column.contains(order) ? column.at(order).count : 0);
    out.cells.push_back(std::move(cells));
  }
  // The percentiles of all the intervals together.
  AggTable all;
  for (const AggTable& table : intervals) all.rows.insert(all.rows.end(), table.rows.begin(), table.rows.end());
  out.summary = std::to_string(calls) + (calls == 1 ? " call: " : " calls: ") +
                QuantileLine(LatencyQuantiles(all, spec), key ? "ns" : "");
  return out;
}

}  // namespace kprobectl
