// SPDX-License-Identifier: GPL-2.0-or-later
//
// The tracer: reads what a ring buffer holds now (every CPU's pages, or
// captured pages in tests), merges the CPUs in time order and prints each
// event to the stream it is given. In: a decoder for the events' formats,
// their plans (by event id), a printer, a RingReader. Out: text or JSON on
// the stream; the events the kernel said it lost; write errors.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "kprobectl/result.h"
#include "kprobectl/trace_decoder.h"
#include "kprobectl/trace_printer.h"

namespace kprobectl {

// How long to wait before the next drain, in ms: 100 while events are few;
// under a flood, a quarter of the time the busiest CPU's ring buffer
// (`buffer_bytes`) takes to fill at the rate the last drain saw (its
// `busiest_bytes` in `seconds`), 1 ms at least, so that a burst four times
// as fast is still read before the kernel overwrites it. (With a fixed
// 100 ms, a 128 KB buffer lost 69% of a 170,000/s uprobe flood.)
int DrainIntervalMs(uint64_t busiest_bytes, double seconds, uint64_t buffer_bytes);

class Tracer {
 public:
  // `plans` are the events' plans (their `id` says which event each is);
  // `out_name` names the stream in errors ("standard output", a path);
  // `stacks` says which records are stacks, each printed with the event
  // before it on its CPU.
  Tracer(EventDecoder& decoder, std::vector<EventPlan> plans, Printer& printer, std::ostream& out, std::string out_name,
         StackPlan stacks = {});

  // Records go to `sink` instead of the printer (hist's counting in
  // kprobectl); the stream then gets nothing.
  // With the stacks recorded after the record, if any.
  using Sink = std::function<void(const EventPlan&, const Record&, const EventStacks*)>;
  void SetSink(Sink sink) { sink_ = std::move(sink); }
  // Told where the kernel overwrote events: the time of the first event
  // after the loss (the page's own time when it kept none), its CPU, and
  // how many (at least 1 where the kernel does not count them).
  using LostSink = std::function<void(uint64_t time, int cpu, uint64_t count)>;
  void SetLostSink(LostSink sink) { lost_sink_ = std::move(sink); }
  const std::vector<EventPlan>& plans() const { return plans_; }
  // Everything `source` holds now, printed in time order.
  Result<void> Drain(RingReader& source);
  // Events the kernel overwrote before they were read, as the pages say.
  uint64_t missed() const { return missed_; }
  // The stream is a pipe whose reader went away (`| head`): a way to stop,
  // not an error to report.
  bool reader_gone() const { return reader_gone_; }
  // Other text for the same output (hist's tables), written at once: a
  // reader gone is noticed as for events.
  Result<void> Emit(std::string_view text) {
    buffer_.append(text);
    return Flush();
  }

  // The most bytes one CPU's ring buffer gave in the last Drain(): with
  // the time since the one before, how fast the busiest buffer fills.
  uint64_t busiest_bytes() const { return busiest_bytes_; }

 private:
  Result<void> Flush();
  // Hands the stack records among records_[from..] (one CPU's, in order) to
  // the event each follows.
  void AttachStacks(size_t from, int& last_event);

  EventDecoder& decoder_;
  std::vector<EventPlan> plans_;
  std::vector<int> plan_of_;  // event id -> index in plans_, -1 for none
  Printer& printer_;
  std::ostream& out_;
  std::string out_name_;
  std::string buffer_;
  std::vector<uint8_t> page_;
  std::vector<std::vector<uint8_t>> pages_;
  std::vector<Record> records_;
  StackPlan stack_plan_;
  std::vector<EventStacks> stacks_;  // Record::stacks - 1 indexes it
  uint64_t missed_ = 0;
  uint64_t busiest_bytes_ = 0;
  bool reader_gone_ = false;
  Sink sink_;
  LostSink lost_sink_;
};

}  // namespace kprobectl
