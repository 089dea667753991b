// SPDX-License-Identifier: GPL-2.0-or-later
//
// Tables of aggregated rows, whichever side counted them: cells printed as
// the probe typed its arguments, buckets as ranges, sorted and cut as asked.
// A log2 bucket holds what the kernel's does (kernel/trace/trace_events_hist.c,
// hist_field_log2: ilog2(roundup_pow_of_two(v))), so that both sides agree.
#include <algorithm>

#include "kprobectl/aggregation.h"
#include "kprobectl/quantiles.h"
#include "kprobectl/strings.h"

namespace kprobectl {

namespace {

bool IsSigned(const FetchType& type) { return type.base == FetchType::kSigned; }

std::string Number(const FetchType& type, uint64_t raw) {
  if (type.base == FetchType::kHex) return Hex(raw);
  if (IsSigned(type)) return std::to_string(static_cast<int64_t>(raw));
  return std::to_string(raw);
}

// Bits the kernel keeps of a value of this type, sign-extended when signed.
uint64_t Narrow(const FetchType& type, uint64_t raw) {
  unsigned bits = type.base == FetchType::kBitfield ? type.bit_width : type.bits;
  if (bits == 0 || bits >= 64) return raw;
  uint64_t mask = (uint64_t{1} << bits) - 1;
  raw &= mask;
  if (IsSigned(type) && (raw >> (bits - 1)) & 1) raw |= ~mask;
  return raw;
}

}  // namespace

AggCell NumberCell(const AggKey& key, uint64_t raw, bool bucketed) {
  AggCell cell;
  cell.numeric = true;
  if (key.kind == AggKey::kPid) {
    cell.order = static_cast<int64_t>(raw);
    cell.text = std::to_string(raw);
    return cell;
  }
  if (!bucketed) raw = Narrow(key.type, raw);
  switch (key.buckets) {
    case AggKey::kExact:
      cell.order = static_cast<int64_t>(raw);
      cell.text = Number(key.type, raw);
      return cell;
    case AggKey::kLog2: {
      uint64_t k = bucketed ? raw : Log2Bucket(raw);
      cell.order = static_cast<int64_t>(k);
      cell.text = Log2BucketText(k);
      return cell;
    }
    case AggKey::kLinear: {
      int64_t start = bucketed ? static_cast<int64_t>(raw)
                      : IsSigned(key.type)
                          ? static_cast<int64_t>(raw) / static_cast<int64_t>(key.step) * static_cast<int64_t>(key.step)
                          : static_cast<int64_t>(raw / key.step * key.step);
      cell.order = start;
      cell.text = "[" + std::to_string(start) + ", " + std::to_string(start + static_cast<int64_t>(key.step)) + ")";
      return cell;
    }
  }
  return cell;
}

AggCell StackCell(const std::vector<std::string>& frames, const std::string& top) {
  auto from = frames.begin();
  bool found = false;
  if (!top.empty()) {
    auto at =
        std::find_if(frames.begin(), frames.end(), [&](const std::string& f) { return f.starts_with(top + "+"); });
    found = at != frames.end();
    if (found) from = at;
  }
  if (from == frames.end()) return AggCell{"[no stack]", 0, false};
  std::vector<std::string> kept(from, frames.end());
  // The probed function's frame by its name alone: its offset is where the
  // probe's machinery was entered from, which the kernel's two stack walks
  // (a hist trigger's, options/stacktrace's) give differently (+0x9, +0x5).
  if (found) {
    size_t space = kept[0].find(' ');
    kept[0] = top + (space == std::string::npos ? "" : kept[0].substr(space));
  }
  return AggCell{Join(kept, "\n"), 0, false};
}

void MergeRow(std::map<std::vector<AggCell>, AggRow>& rows, const AggregationSpec& spec, AggRow row) {
  auto [it, inserted] = rows.try_emplace(row.keys, row);
  if (inserted) return;
  AggRow& into = it->second;
  into.count += row.count;
  for (size_t i = 0; i < spec.values.size() && i < row.values.size(); ++i)
    into.values[i] =
        spec.values[i].op == AggValue::kSum ? into.values[i] + row.values[i] : std::max(into.values[i], row.values[i]);
}

// The rows in the order asked: by a key, the count or a value.
std::vector<AggRow> SortedRows(const AggTable& table, const AggregationSpec& spec) {
  std::vector<AggRow> rows = table.rows;
  auto key = std::find_if(spec.keys.begin(), spec.keys.end(), [&](const AggKey& k) { return k.text == spec.sort; });
  auto value =
      std::find_if(spec.values.begin(), spec.values.end(), [&](const AggValue& v) { return v.Column() == spec.sort; });
  auto less = [&](const AggRow& a, const AggRow& b) {
    if (key != spec.keys.end()) {
      size_t i = static_cast<size_t>(key - spec.keys.begin());
      if (!(a.keys[i] == b.keys[i])) return a.keys[i] < b.keys[i];
    } else if (value != spec.values.end()) {
      size_t i = static_cast<size_t>(value - spec.values.begin());
      if (a.values[i] != b.values[i]) return a.values[i] < b.values[i];
    } else if (a.count != b.count) {
      return a.count < b.count;
    }
    return b.keys < a.keys;  // ties: keys ascending, whichever way the rest goes
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const AggRow& a, const AggRow& b) { return spec.descending ? less(b, a) : less(a, b); });
  if (spec.top && rows.size() > spec.top) rows.resize(spec.top);
  return rows;
}

std::string FormatTable(const AggTable& table, const AggregationSpec& spec) {
  std::vector<AggRow> rows = SortedRows(table, spec);
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> header;
  for (const AggKey& k : spec.keys) header.push_back(k.text);
  header.push_back("hits");
  for (const AggValue& v : spec.values) header.push_back(v.Column());
  std::vector<bool> right(header.size(), true);
  for (size_t i = 0; i < spec.keys.size(); ++i) right[i] = rows.empty() || rows.front().keys[i].numeric;
  cells.push_back(header);
  for (const AggRow& row : rows) {
    std::vector<std::string> line;
    for (const AggCell& c : row.keys) line.push_back(c.text);
    line.push_back(std::to_string(row.count));
    for (int64_t v : row.values) line.push_back(std::to_string(v));
    cells.push_back(std::move(line));
  }
  // A stack's cell is a column of frames: the row's other cells on its
  // first line, blanks under them.
  std::vector<size_t> width(header.size(), 0);
  for (const auto& line : cells)
    for (size_t i = 0; i < line.size(); ++i)
      for (const std::string& part : SplitLines(line[i])) width[i] = std::max(width[i], part.size());
  std::string out = table.event + ": " + std::to_string(table.hits) + " hits";
  if (table.rows.size() > rows.size())
    out += ", top " + std::to_string(rows.size()) + " of " + std::to_string(table.rows.size()) + " rows";
  if (table.dropped)
    out += ", " + std::to_string(table.dropped) + " dropped (the kernel's table was full: fewer or coarser keys)";
  out += "\n";
  for (const auto& line : cells) {
    std::vector<std::vector<std::string>> parts;
    size_t height = 1;
    for (const std::string& cell : line) {
      parts.push_back(cell.find('\n') == std::string::npos ? std::vector<std::string>{cell} : SplitLines(cell));
      height = std::max(height, parts.back().size());
    }
    for (size_t row = 0; row < height; ++row) {
      std::string text;
      for (size_t i = 0; i < line.size(); ++i) {
        const std::string& cell = row < parts[i].size() ? parts[i][row] : std::string();
        std::string pad(width[i] - cell.size(), ' ');
        text += "  " + (right[i] ? pad + cell : cell + (i + 1 < line.size() ? pad : ""));
      }
      while (text.ends_with(' ')) text.pop_back();
      out += text + "\n";
    }
  }
  return out;
}

}  // namespace kprobectl
