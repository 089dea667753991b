// SPDX-License-Identifier: GPL-2.0-or-later
//
// Turning records into lines. In: an event's format (fields and the
// kernel's print fmt, which says how each argument is shown: %d, 0x%x,
// "%s", '%c', %pS, {...} arrays), the record bytes, and where the probe is.
// Out: one text line like the kernel's own trace, or one JSON object, per
// event; for --latency the entry-to-return time and a log2 histogram.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kprobectl/result.h"
#include "kprobectl/trace_decoder.h"

namespace kprobectl {

enum class ValueKind { kSigned, kUnsigned, kHex, kChar, kString, kSymbol };

struct ArgPlan {
  std::string name;
  unsigned offset = 0;
  unsigned size = 0;  // of one value
  ValueKind kind = ValueKind::kHex;
  bool dynamic = false;  // a string stored after the fixed fields
  unsigned count = 0;    // array elements; 0 = a scalar
};

struct EventPlan {
  int id = 0;
  std::string full_name;  // "group:event"
  bool retprobe = false;
  bool kernel = false;
  unsigned ip_offset = 0;   // __probe_ip, or __probe_func for return probes
  unsigned ret_offset = 0;  // __probe_ret_ip
  std::vector<ArgPlan> args;
  // Where the probe is: "compute+0x4". For return probes the function.
  std::string location;
  // For a user return probe: names the caller's runtime address, given the
  // process and the probed function's runtime address; empty if unknown.
  std::function<std::string(int pid, uint64_t func_ip, uint64_t ret_ip)> caller;
  // --latency: entries and returns of one function share a key.
  std::string latency_key;
  bool hidden = false;  // recorded for --latency only, not printed
};

// Builds the plan of an event from its format.
Result<EventPlan> PlanEvent(const EventFormat& format);

class Printer {
 public:
  struct Options {
    bool json = false;
    bool latency = false;
  };
  Printer(Options options, std::function<std::string(int pid)> comm,
          std::function<std::string(uint64_t address)> kernel_symbol)
      : options_(options), comm_(std::move(comm)), kernel_symbol_(std::move(kernel_symbol)) {}

  // Appends the event's line (with its newline) to `out`; nothing for a
  // hidden event. Returns whether it printed.
  bool Print(const EventPlan& plan, const Record& record, std::string& out);

  // The --latency histograms, one per function.
  std::string Histograms() const;
  uint64_t printed() const { return printed_; }

 private:
  // What one event's line says, worked out once for either form.
  struct Line {
    const EventPlan& plan;
    const Record& record;
    const std::string& where;
    const std::string& caller;
    const std::string& comm;
    std::optional<uint64_t> latency;
  };
  void AppendJson(const Line& line, std::string& out);
  void AppendText(const Line& line, std::string& out);
  void AppendValue(const ArgPlan& arg, const Record& record, std::string& out, bool json);
  std::optional<uint64_t> TrackLatency(const EventPlan& plan, const Record& record);

  Options options_;
  std::function<std::string(int)> comm_;
  std::function<std::string(uint64_t)> kernel_symbol_;
  std::map<std::pair<std::string, int>, std::vector<uint64_t>> open_calls_;  // (key, tid) -> entry times
  std::map<std::string, std::vector<uint64_t>> durations_;                   // key -> durations (ns)
  std::map<std::string, std::string> latency_names_;
  uint64_t printed_ = 0;
};

// Text and JSON escaping of bytes from the kernel, which need not be UTF-8.
void AppendCString(std::string& out, std::string_view bytes);     // "..." with C escapes
void AppendJsonString(std::string& out, std::string_view bytes);  // "..." valid JSON

}  // namespace kprobectl
