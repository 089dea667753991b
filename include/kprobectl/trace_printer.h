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

enum class ValueKind { kSigned, kUnsigned, kHex, kChar, kString, kSymbol, kCountedString };

struct ArgPlan {
  std::string name;
  unsigned offset = 0;
  unsigned size = 0;  // of one value
  ValueKind kind = ValueKind::kHex;
  bool dynamic = false;  // a string stored after the fixed fields
  unsigned count = 0;    // array elements; 0 = a scalar
  // kCountedString: u8[count] cut at the length in the field NAME__len.
  unsigned length_offset = 0;
  unsigned length_size = 0;
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
  // --latency: entries and returns of one function share a key; a return
  // is a return probe's event, or a probe on a return instruction (Go's:
  // latency_return).
  std::string latency_key;
  bool latency_return = false;
  std::optional<unsigned> call_offset;  // kGoroutineField: the call's goroutine, which pairs it, not the thread
  // trace --stack on a user probe kprobectl added: where its hidden
  // arguments captured the registers (DWARF number, offset) and the stack
  // bytes (chunk offsets, kCaptureChunkBytes each, contiguous in memory).
  std::vector<std::pair<unsigned, unsigned>> captured_registers;
  std::vector<unsigned> captured_stack;
  // A user probe's file, and the address in it where the probe is (for a
  // return probe, its function's): with the probe's runtime address, where
  // the file is loaded, even once the process is gone.
  std::string file;
  uint64_t file_vaddr = 0;
  bool hidden = false;  // recorded for --latency only, not printed
  // An event probe's event: no probe address; its location is the event
  // it reads ("syscalls.sys_enter_openat", as the kernel prints it).
  bool event_probe = false;
};

// Builds the plan of an event from its format; an event probe's has no
// __probe_ip.
Result<EventPlan> PlanEvent(const EventFormat& format, bool event_probe = false);

// The stacks the kernel records after an event when the instance's
// options ask for them (options/stacktrace, options/userstacktrace): the
// ftrace events kernel_stack and user_stack, on the same CPU right after
// the event they belong to. Their ids and where their fields are, from
// their formats; -1 when not recorded.
struct StackPlan {
  int kernel_id = -1;
  unsigned kernel_count_offset = 8;  // "size": the number of addresses (Linux 5.x+), or their bytes
  unsigned kernel_callers_offset = 16;
  int user_id = -1;
  unsigned user_tgid_offset = 8;
  unsigned user_callers_offset = 16;
  unsigned user_slots = 8;  // FTRACE_STACK_ENTRIES: the addresses it has room for
  // Each event's own side only: the kernel stack of a kernel probe, the
  // user stack of a uprobe (both are recorded when both kinds are traced).
  bool own_side = false;
};
// A plan from the formats of kernel_stack and user_stack (either may be
// null: not recorded).
StackPlan PlanStacks(const EventFormat* kernel_stack, const EventFormat* user_stack);

// What a stack capture recorded for one event, for the unwinder the CLI
// supplies (it needs the debuginfo stage): the registers by DWARF number,
// and the bytes from the stack pointer up.
struct CapturedState {
  std::vector<std::pair<unsigned, uint64_t>> registers;
  std::string stack;
};
// The frames of a captured user stack, named: the event's plan, its
// process, where the probe fired (its runtime address).
using UnwindFrames =
    std::function<std::vector<std::string>(const EventPlan& plan, int pid, uint64_t probe_ip, const CapturedState&)>;

// The stack records that followed one event (pointers into the pages).
struct EventStacks {
  const uint8_t* kernel = nullptr;
  unsigned kernel_size = 0;
  const uint8_t* user = nullptr;
  unsigned user_size = 0;
};

class Printer {
 public:
  struct Options {
    bool json = false;
    bool latency = false;
    StackPlan stacks;  // how to read the stacks handed to Print()
  };
  // `user_frame` names a user-space address of process `pid`
  // ("inet_pton+0x0 (/usr/lib/.../libc.so.6)"), or returns empty.
  Printer(Options options, std::function<std::string(int pid)> comm,
          std::function<std::string(uint64_t address)> kernel_symbol,
          std::function<std::string(int pid, uint64_t address)> user_frame = {}, UnwindFrames unwind = {})
      : options_(options),
        comm_(std::move(comm)),
        kernel_symbol_(std::move(kernel_symbol)),
        user_frame_(std::move(user_frame)),
        unwind_(std::move(unwind)) {}

  // Appends the event's line (with its newline) to `out`, and the stacks
  // recorded after it, if any; nothing for a hidden event. Returns whether
  // it printed.
  bool Print(const EventPlan& plan, const Record& record, std::string& out, const EventStacks* stacks = nullptr);

  // The frames of the stacks recorded after an event, kernel then user
  // space, named as Print() prints them (for hist's stack keys).
  struct Frames {
    std::vector<std::string> kernel, user;
  };
  Frames StackFrames(const EventPlan& plan, const Record& record, EventStacks stacks) const;

  // A return probe's caller, named as its line names it ("main+0x59").
  std::string Caller(const EventPlan& plan, const Record& record) const;
  // The event's arguments as a JSON object, as its --json line has them.
  std::string ArgsJson(const EventPlan& plan, const Record& record);

  // The --latency summaries, one per function: the calls, min, average
  // and max, the percentiles (exact: each call was seen), and a histogram
  // in the kernel's log2 buckets, in hist's notation.
  std::string Histograms() const;
  // The --latency calls, one list per function: when each returned (the
  // trace clock's ns) and how long it took.
  struct LatencyCalls {
    std::string function;
    std::vector<std::pair<uint64_t, uint64_t>> calls;  // (return time, ns)
  };
  std::vector<LatencyCalls> Latencies() const;
  // What Print() does but the line: latency tracked and counted (for
  // outputs drawn at the end, such as a heat map).
  void Observe(const EventPlan& plan, const Record& record);
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
  // The event's line, text or JSON (printer_line.cc: the hot path).
  void AppendLine(const Line& line, std::string& out);
  size_t LineBound(const Line& line);  // and looks up symbols_
  char* WriteJson(const Line& line, char* p) const;
  char* WriteText(const Line& line, char* p) const;
  // The frames of the stacks: kernel first, then user space, as the text's
  // " => FRAME" lines or JSON's "kernel_stack" and "user_stack" arrays.
  void AppendStacks(const EventPlan& plan, const Record& record, EventStacks stacks, std::string& out);
  std::vector<std::string> KernelFrames(const EventStacks& stacks) const;
  std::vector<std::string> UserFrames(const Record& record, const EventStacks& stacks) const;
  std::vector<std::string> UnwoundFrames(const EventPlan& plan, const Record& record) const;
  std::optional<uint64_t> TrackLatency(const EventPlan& plan, const Record& record);

  Options options_;
  std::function<std::string(int)> comm_;
  std::function<std::string(uint64_t)> kernel_symbol_;
  std::function<std::string(int, uint64_t)> user_frame_;
  UnwindFrames unwind_;
  std::map<std::pair<std::string, uint64_t>, std::vector<uint64_t>> open_calls_;  // (key, tid or g) -> entry times
  std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>> durations_;   // key -> (return time, ns)
  std::map<std::string, std::string> latency_names_;
  uint64_t printed_ = 0;
  std::vector<std::string> symbols_;  // the names of the line's %pS values, looked up before it is written
};

// Text and JSON escaping of bytes from the kernel, which need not be UTF-8.
void AppendCString(std::string& out, std::string_view bytes);     // "..." with C escapes
void AppendJsonString(std::string& out, std::string_view bytes);  // "..." valid JSON

}  // namespace kprobectl
