// SPDX-License-Identifier: GPL-2.0-or-later
//
// Aggregations: what `kprobectl hist` counts and how. In: the user's keys
// (comm, pid, an argument by the name the probe gave it, with .log2 or
// .buckets=N), values (sum/max of an argument), sort and top-N, and the
// definitions of the events they apply to. Out: a checked AggregationSpec;
// for the kernel, a hist trigger line (Documentation/trace/histogram.rst);
// for kernels without hist triggers, an aggregator fed one record at a
// time; either way an AggTable, which prints the same from both.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kprobectl/fetch_type.h"
#include "kprobectl/kernel_features.h"
#include "kprobectl/quantiles.h"
#include "kprobectl/result.h"
#include "kprobectl/trace_decoder.h"
#include "kprobectl/trace_event_def.h"
#include "kprobectl/trace_printer.h"

namespace kprobectl {

struct AggKey {
  // kKernelStack: -k kstack (or the kernel's name, stacktrace); kUserStack:
  // -k ustack, which the kernel's hist triggers have no key for.
  enum Kind { kComm, kPid, kArg, kKernelStack, kUserStack } kind = kArg;
  enum Buckets { kExact, kLog2, kLinear } buckets = kExact;
  std::string arg;    // kArg: the argument's name
  uint64_t step = 0;  // kLinear: the bucket width
  std::string text;   // as the user wrote it: the column's name
  FetchType type;     // kArg: the argument's, once bound to an event
  bool IsStack() const { return kind == kKernelStack || kind == kUserStack; }
};

struct AggValue {
  enum Op { kSum, kMax } op = kSum;
  std::string arg;
  FetchType type;  // the argument's, once bound to an event
  std::string Column() const { return (op == kSum ? "sum(" : "max(") + arg + ")"; }
};

struct AggregationSpec {
  std::vector<AggKey> keys;      // at least one
  std::vector<AggValue> values;  // the count is always there
  std::string sort = "hits";     // a column: "hits", a key's text, a value's Column()
  bool descending = true;
  unsigned top = 0;  // 0: every row
  // A kernel probe's function: its kernel stacks start at its frame, the
  // tracing machinery's above it (kprobe_ftrace_handler...) left out.
  std::string stack_top;
};

// The command line's words: --key (each may hold KEY,KEY), --sum, --max,
// --sort COLUMN[.ascending|.descending], --top. Keys default to comm.
struct AggregationWords {
  std::vector<std::string> keys, sums, maxes;
  std::string sort;
  unsigned top = 0;
};
Result<AggregationSpec> ParseAggregation(const AggregationWords& words);

// Whether any key is a stack of that kind.
bool HasKey(const AggregationSpec& spec, AggKey::Kind kind);

// The spec for one event, its keys and values typed from `def`'s
// arguments: each must name one that can be what it is asked to be (a key
// an integer or a string, a string neither bucketed nor summed, no array).
// The error names the event, the argument and what the event has.
Result<AggregationSpec> BindAggregation(const AggregationSpec& spec, const TraceEventDef& def);

// "hist:keys=common_pid.execname,n.log2:vals=hitcount,size:size=SIZE",
// with " if FILTER" when a filter is given. Max values cannot be expressed
// this way: refused with the reason.
Result<std::string> HistTrigger(const AggregationSpec& spec, const HistSupport& support, const std::string& filter,
                                unsigned size);

// hist --latency in the kernel: entry and return paired per thread
// (common_pid) by hist variables, the return's onmatch() generating the
// synthetic event `synthetic` ("u64 ns", the time between them), which
// the aggregation's trigger counts. `entry` is "group.event"; `tag` makes
// the variables' names unique.
struct LatencyTriggers {
  std::string fields = "u64 ns";  // the synthetic event's
  std::string entry;              // on the entry event
  std::string ret;                // on the return event
};
LatencyTriggers MakeLatencyTriggers(const std::string& synthetic, const std::string& entry, const std::string& tag);

// One row: its key cells, its count, its values (in spec order).
struct AggCell {
  std::string text;   // as printed
  int64_t order = 0;  // for sorting numbers as numbers
  bool numeric = false;
  bool operator<(const AggCell& o) const {
    return numeric != o.numeric ? numeric : numeric ? order < o.order : text < o.text;
  }
  bool operator==(const AggCell& o) const = default;
};
// A stack key's cell: its frames, the innermost first, one a line; with
// `top`, from the first frame in that function on (named without an
// offset), when there is one.
AggCell StackCell(const std::vector<std::string>& frames, const std::string& top = {});

struct AggRow {
  std::vector<AggCell> keys;
  uint64_t count = 0;
  std::vector<int64_t> values;
};
struct AggTable {
  std::string event;  // "group:event"
  std::vector<AggRow> rows;
  uint64_t hits = 0;
  uint64_t dropped = 0;  // hits the kernel's table had no room for
};

// Reads an event's hist file (its first trigger's section) into a table,
// for a bound spec; rows of one comm under several pids merge.
Result<AggTable> ParseKernelHist(std::string_view text, const AggregationSpec& spec, const std::string& event);
// Adds `row` to `rows`, merging it into one with the same keys.
void MergeRow(std::map<std::vector<AggCell>, AggRow>& rows, const AggregationSpec& spec, AggRow row);

// Sorted, cut to the top N, printed as aligned columns under a heading.
std::string FormatTable(const AggTable& table, const AggregationSpec& spec);
// The rows in that order, cut so.
std::vector<AggRow> SortedRows(const AggTable& table, const AggregationSpec& spec);

// The fallback: fed records of one event, in time order.
class UserAggregator {
 public:
  // `format` is the event's, as decoded; `comm` names a process.
  // With `latency`, the argument "ns" is the time Add() is given. With
  // `kept`, a return's arguments its call's entry keeps (trace_plan.h)
  // are read from that entry's record, whose format is `entry`.
  static Result<UserAggregator> Create(const AggregationSpec& spec, const EventFormat& format,
                                       std::function<std::string(int pid)> comm, bool latency = false,
                                       const KeptArgs* kept = nullptr, const EventFormat* entry = nullptr);
  // `stacks`: the event's frames, named (with a stack key); `entry`: the
  // record of its call's entry, for its kept arguments. Returns false, and
  // counts nothing, where a kept argument's entry is not known.
  bool Add(const Record& record, uint64_t latency_ns = 0, const Printer::Frames* stacks = nullptr,
           const Record* entry = nullptr);
  AggTable Table(const std::string& event) const;
  void Clear();

 private:
  struct Field {
    unsigned offset = 0, size = 0;
    bool is_signed = false, dynamic = false, latency = false;
    bool from_entry = false;  // in the call's entry's record
  };
  UserAggregator(AggregationSpec spec, std::vector<Field> keys, std::vector<Field> values,
                 std::function<std::string(int)> comm)
      : spec_(std::move(spec)),
        key_fields_(std::move(keys)),
        value_fields_(std::move(values)),
        comm_(std::move(comm)) {}
  AggregationSpec spec_;
  std::vector<Field> key_fields_;  // by key; unused for comm and pid
  std::vector<Field> value_fields_;
  std::function<std::string(int)> comm_;
  std::map<std::vector<AggCell>, AggRow> rows_;
  uint64_t hits_ = 0;
};

// A bound key's cell for a raw value (the kernel's u64, sign-extended),
// bucketed as the key says; for log2 and linear keys the kernel's own
// bucket is given as `raw` when `bucketed` (2^K's K, a bucket's start).
AggCell NumberCell(const AggKey& key, uint64_t raw, bool bucketed = false);

}  // namespace kprobectl
