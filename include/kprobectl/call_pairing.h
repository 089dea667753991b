// SPDX-License-Identifier: GPL-2.0-or-later
//
// Calls paired, entry to return: for --latency (the time between) and for
// a return's arguments its entry keeps (trace_plan.h: KeptArgs). In: each
// event's plan and record, in time order, and word of events lost. Out:
// for a return, the open call it ends (its entry's time, and its record
// where a return prints fields of it), or none where that entry is not
// known.
//
// A call is its thread's, or its goroutine's where the probes record Go's
// g (kGoroutineField), and calls nest (recursion): a return ends the
// innermost open call. Where the probes also record the stack pointer
// (kCallStackField), that innermost call must be the return's own: its
// entry's stack pointer is the return's less what the return popped
// (Arch::return_address_bytes). An open call deeper than that is one whose
// return was never recorded (a kretprobe's missed instance, uretprobes'
// nesting limit, a filter) and is dropped; none at that depth means the
// return's entry was never recorded (overwritten in the ring buffer, or
// before the trace began): its entry is unknown, not another call's. A new
// entry at the depth of an open call (or above it) closes that call, which
// must have returned unseen. When events were lost, no open call is
// certain: all are dropped.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kprobectl/trace_decoder.h"
#include "kprobectl/trace_printer.h"

namespace kprobectl {

struct OpenCall {
  uint64_t ts = 0;
  uint64_t stack = 0;         // the entry's stack pointer, where recorded
  std::vector<uint8_t> data;  // the entry's record, where a return prints fields of it
  Record AsRecord() const;    // `data` as a record of the entry (ts and bytes)
};

class CallPairing {
 public:
  // `return_address_bytes`: what a return probe's stack pointer is past
  // its entry's (Arch::return_address_bytes), where it runs after the
  // function returned (uretprobe, kretprobe); 0 for a probe on a return
  // instruction (Go's), before it.
  explicit CallPairing(uint64_t return_address_bytes = 0) : return_address_bytes_(return_address_bytes) {}

  // An entry opens a call of each return it pairs with (EventPlan::opens)
  // and gives none; a return (EventPlan::call_key) gives the call it ends,
  // if known; any other event, none.
  std::optional<OpenCall> Next(const EventPlan& plan, const Record& record);
  // Events were lost (the ring buffer overwritten): every open call is
  // dropped, their returns' entries unknown. The tracer calls it where a
  // CPU's pages say so, before the first record after the gap, in time
  // order: a call entered earlier in the same drain is dropped too.
  void Lost() { open_.clear(); }

 private:
  using Stack = std::vector<OpenCall>;  // innermost last
  void Open(Stack& calls, const OpenCall& call, bool by_stack);
  std::optional<OpenCall> End(Stack& calls, const EventPlan& plan, const Record& record);

  uint64_t return_address_bytes_;
  std::map<std::pair<std::string, uint64_t>, Stack> open_;  // (return's key, thread or goroutine) -> calls
};

}  // namespace kprobectl
