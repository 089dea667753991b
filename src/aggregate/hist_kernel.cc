// SPDX-License-Identifier: GPL-2.0-or-later
//
// The kernel's side of an aggregation: the hist trigger that counts in the
// kernel (Documentation/trace/histogram.rst), and its hist file read back.
// The hist file prints each entry on one line,
//   { common_pid: loop            [       147], n: ~ 2^3  } hitcount:          8  n:         26
// keys in trigger order (an execname as %-16s [%10d], a string as %-50s,
// log2 as "~ 2^K", buckets as "~ A-B", other numbers as %10llu), then the
// hitcount and the values; then "Totals:" with Hits, Entries, Dropped.
// Seen the same on Linux 6.1 and 6.12. A stack key ends its line with
// "stacktrace:" (6.1) or "common_stacktrace:" (6.5+), its frames follow
// one a line as the kernel names them ("do_sys_openat2+0x5/0x1a0"), and the
// entry goes on after them on a line of its own ("} hitcount: ...").
#include <set>

#include "kprobectl/aggregation.h"
#include "kprobectl/strings.h"
#include "kprobectl/trace_printer.h"

namespace kprobectl {

namespace {

std::string KernelField(const AggKey& key) {
  if (key.kind == AggKey::kComm) return "common_pid";
  if (key.kind == AggKey::kPid) return "common_pid";
  // Linux 6.5 named it common_stacktrace and kept stacktrace; 6.1 takes
  // only stacktrace.
  if (key.kind == AggKey::kKernelStack) return "stacktrace";
  return key.arg;
}

}  // namespace

Result<std::string> HistTrigger(const AggregationSpec& spec, const HistSupport& support, const std::string& filter,
                                unsigned size) {
  std::vector<std::string> keys;
  for (const AggKey& key : spec.keys) {
    if (key.kind == AggKey::kUserStack)
      return Fail("--key '" + key.text + "': the kernel's hist triggers have no user-stack key");
    std::string field = KernelField(key);
    if (key.kind == AggKey::kComm) field += ".execname";
    if (key.buckets == AggKey::kLog2) field += ".log2";
    if (key.buckets == AggKey::kLinear) {
      if (!support.buckets)
        return Fail("--key '" + key.text + "': this kernel's hist triggers have no .buckets (Linux 5.19)",
                    "use .log2, or no modifier");
      field += ".buckets=" + std::to_string(key.step);
    }
    keys.push_back(field);
  }
  std::vector<std::string> vals{"hitcount"};
  std::set<std::string> seen;
  for (const AggValue& value : spec.values) {
    if (value.op == AggValue::kMax)
      return Fail("--max " + value.arg + ": a hist trigger sums its values; it keeps no maximum per key",
                  "--sum counts in the kernel; a maximum needs kprobectl to see every event (a kernel without hist "
                  "triggers, where kprobectl aggregates itself)");
    if (seen.insert(value.arg).second) vals.push_back(value.arg);
  }
  std::string trigger = "hist:keys=" + Join(keys, ",") + ":vals=" + Join(vals, ",") + ":size=" + std::to_string(size);
  if (!filter.empty()) trigger += " if " + filter;
  return trigger;
}

LatencyTriggers MakeLatencyTriggers(const std::string& synthetic, const std::string& entry, const std::string& tag) {
  LatencyTriggers t;
  std::string start = "kpts" + tag, ns = "kpns" + tag;
  // common_timestamp: nanoseconds of the trace clock; the kernel keys the
  // entry's time by thread, and the return, matching it, emits the time.
  t.entry = "hist:keys=common_pid:" + start + "=common_timestamp";
  t.ret = "hist:keys=common_pid:" + ns + "=common_timestamp-$" + start + ":onmatch(" + entry + ").trace(" + synthetic +
          ",$" + ns + ")";
  return t;
}

namespace {

struct Cursor {
  std::string_view line;
  size_t at = 0;
  bool Eat(std::string_view text) {
    if (line.substr(at, text.size()) != text) return false;
    at += text.size();
    return true;
  }
  void Blanks() {
    while (at < line.size() && line[at] == ' ') ++at;
  }
  std::optional<uint64_t> Number() {
    Blanks();
    size_t start = at;
    while (at < line.size() && line[at] >= '0' && line[at] <= '9') ++at;
    return ParseUnsigned(line.substr(start, at - start));
  }
};

// A stack's frames in an entry made one line by JoinEntries: "\tF1\tF2\v",
// each as trace names kernel addresses ("name+0x5", the kernel's "/0x1a0",
// the function's size, left out).
std::optional<AggCell> StackKeyCell(Cursor& c, const std::string& top) {
  size_t end = c.line.find('\v', c.at);
  if (end == std::string_view::npos) return std::nullopt;
  std::vector<std::string> frames;
  while (c.Eat("\t")) {
    size_t stop = std::min(c.line.find('\t', c.at), end);
    std::string frame(c.line.substr(c.at, stop - c.at));
    c.at = stop;
    size_t plus = frame.find("+0x");
    size_t slash = plus == std::string::npos ? plus : frame.find('/', plus);
    if (slash != std::string::npos) frame.erase(slash, std::min(frame.find(' ', slash), frame.size()) - slash);
    frames.push_back(std::move(frame));
  }
  if (c.at != end) return std::nullopt;
  c.at = end + 1;
  return StackCell(frames, top);
}

// One key's cell; `next` is what follows it: ", NAME: " or " } hitcount:".
std::optional<AggCell> KeyCell(Cursor& c, const AggKey& key, std::string_view next, const std::string& top) {
  if (key.kind == AggKey::kKernelStack) return StackKeyCell(c, top);
  if (key.kind == AggKey::kComm) {
    size_t close = c.line.find(']', c.at);
    size_t open = close == std::string_view::npos ? close : c.line.rfind('[', close);
    if (open == std::string_view::npos || open < c.at) return std::nullopt;
    AggCell cell{std::string(Trim(c.line.substr(c.at, open - c.at))), 0, false};
    c.at = close + 1;
    return cell;
  }
  if (key.kind == AggKey::kArg && key.type.IsString()) {
    size_t end = next.starts_with(" }") ? c.line.rfind(next) : c.line.find(next, c.at);
    if (end == std::string_view::npos || end < c.at) return std::nullopt;
    std::string_view text = c.line.substr(c.at, end - c.at);
    while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
    c.at = end;
    // Quoted as trace prints strings; a fault is an empty string here.
    std::string quoted;
    AppendCString(quoted, text);
    return AggCell{quoted, 0, false};
  }
  if (key.buckets == AggKey::kLog2) {
    if (!c.Eat("~ 2^")) return std::nullopt;
    auto k = c.Number();
    c.Blanks();
    if (!k || *k > 64) return std::nullopt;  // a 64-bit value's bucket is at most 2^64
    return NumberCell(key, *k, true);
  }
  if (key.buckets == AggKey::kLinear) {
    if (!c.Eat("~ ")) return std::nullopt;
    size_t dash = c.line.find('-', c.at + 1);  // the start may be negative
    if (dash == std::string_view::npos) return std::nullopt;
    auto start = ParseUnsigned(c.line.substr(c.at, dash - c.at));
    c.at = dash + 1;
    if (!start || !c.Number()) return std::nullopt;
    return NumberCell(key, *start, true);
  }
  auto n = c.Number();
  if (!n) return std::nullopt;
  return NumberCell(key, *n);
}

std::optional<AggRow> ParseRow(std::string_view line, const AggregationSpec& spec) {
  Cursor c{line};
  AggRow row;
  for (size_t i = 0; i < spec.keys.size(); ++i) {
    std::string name = KernelField(spec.keys[i]);
    if (!c.Eat(i ? ", " : "{ ")) return std::nullopt;
    if (spec.keys[i].kind == AggKey::kKernelStack) c.Eat("common_");
    if (!c.Eat(name + ":")) return std::nullopt;
    c.Eat(" ");
    std::string next = i + 1 < spec.keys.size() ? ", " + KernelField(spec.keys[i + 1]) + ":" : " } hitcount:";
    auto cell = KeyCell(c, spec.keys[i], next, spec.stack_top);
    if (!cell) return std::nullopt;
    row.keys.push_back(*cell);
  }
  c.Blanks();
  if (!c.Eat("} hitcount:")) return std::nullopt;
  auto count = c.Number();
  if (!count) return std::nullopt;
  row.count = *count;
  std::vector<std::string> fields;
  for (const AggValue& v : spec.values) fields.push_back(v.arg);
  std::map<std::string, uint64_t> sums;
  while (c.at < line.size()) {
    c.Blanks();
    size_t colon = line.find(':', c.at);
    if (colon == std::string_view::npos) return std::nullopt;
    std::string name(line.substr(c.at, colon - c.at));
    c.at = colon + 1;
    auto n = c.Number();
    if (!n) return std::nullopt;
    sums[name] = *n;
  }
  for (const AggValue& v : spec.values) {
    if (!sums.contains(v.arg)) return std::nullopt;
    row.values.push_back(static_cast<int64_t>(sums[v.arg]));
  }
  return row;
}

// Each entry on one line: a stack's frame lines, after the line that ends
// in "stacktrace:", are joined into it as "\tF1\tF2\v", the line after
// them (", n: 5 } hitcount: ..." or "} hitcount: ...") appended.
std::vector<std::string> JoinEntries(std::string_view text) {
  std::vector<std::string> out;
  bool in_stack = false;
  for (const std::string& line : SplitLines(text)) {
    std::string_view t = Trim(line);
    if (in_stack && !t.empty() && t[0] != '}' && t[0] != ',') {
      out.back() += "\t" + std::string(t);
      continue;
    }
    if (in_stack) {
      out.back() += "\v" + std::string(t.starts_with('}') ? " " : "") + std::string(t);
      in_stack = out.back().ends_with("stacktrace:");
      continue;
    }
    out.push_back(line);
    in_stack = line.starts_with("{ ") && line.ends_with("stacktrace:");
  }
  return out;
}

}  // namespace

Result<AggTable> ParseKernelHist(std::string_view text, const AggregationSpec& spec, const std::string& event) {
  AggTable table;
  table.event = event;
  std::map<std::vector<AggCell>, AggRow> rows;
  bool totals = false;
  for (const std::string& line : JoinEntries(text)) {
    if (line.starts_with("{ ")) {
      auto row = ParseRow(line, spec);
      if (!row) return Fail("cannot read " + event + "'s hist line: " + line);
      MergeRow(rows, spec, std::move(*row));
    } else if (line.starts_with("Totals:")) {
      totals = true;
    } else if (totals) {
      std::string_view t = Trim(line);
      if (t.starts_with("Hits:")) table.hits = ParseUnsigned(Trim(t.substr(5))).value_or(0);
      if (t.starts_with("Dropped:")) table.dropped = ParseUnsigned(Trim(t.substr(8))).value_or(0);
      if (t.empty()) break;  // the next trigger's section
    }
  }
  if (!totals) return Fail("cannot read " + event + "'s hist file: no Totals");
  for (auto& [keys, row] : rows) table.rows.push_back(std::move(row));
  return table;
}

}  // namespace kprobectl
