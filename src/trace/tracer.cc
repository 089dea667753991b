// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/tracer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace kprobectl {

namespace {

// Pages read per CPU in one drain: more waits for the next one, so that a
// flood on one CPU cannot starve printing.
constexpr size_t kMaxPagesPerCpu = 4096;
constexpr size_t kFlushAt = 1 << 20;

}  // namespace

int DrainIntervalMs(uint64_t busiest_bytes, double seconds, uint64_t buffer_bytes) {
  constexpr double kIdleMs = 100;
  if (busiest_bytes == 0 || seconds <= 0) return static_cast<int>(kIdleMs);
  double fill_ms = static_cast<double>(buffer_bytes) / (static_cast<double>(busiest_bytes) / seconds) * 1000;
  return static_cast<int>(std::clamp(fill_ms / 4, 1.0, kIdleMs));
}

Tracer::Tracer(EventDecoder& decoder, std::vector<EventPlan> plans, Printer& printer, std::ostream& out,
               std::string out_name, StackPlan stacks)
    : decoder_(decoder),
      plans_(std::move(plans)),
      printer_(printer),
      out_(out),
      out_name_(std::move(out_name)),
      stack_plan_(stacks) {
  int max_id = 0;
  for (const EventPlan& p : plans_) max_id = std::max(max_id, p.id);
  plan_of_.assign(static_cast<size_t>(max_id) + 1, -1);
  for (size_t i = 0; i < plans_.size(); ++i)
    if (plans_[i].id >= 0) plan_of_[static_cast<size_t>(plans_[i].id)] = static_cast<int>(i);
}

Result<void> Tracer::Flush() {
  if (buffer_.empty()) return {};
  errno = 0;
  out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  out_.flush();
  buffer_.clear();
  if (out_) return {};
  int error = errno;
  if (error == EPIPE) reader_gone_ = true;
  return Fail("cannot write the trace to " + out_name_ + ": " +
              (error ? std::strerror(error) : std::string("the stream failed")));
}

void Tracer::AttachStacks(size_t from, int& last_event) {
  for (size_t i = from; i < records_.size(); ++i) {
    Record& r = records_[i];
    bool kernel = r.type == stack_plan_.kernel_id, user = r.type == stack_plan_.user_id;
    if (!kernel && !user) {
      last_event = static_cast<int>(i);
      continue;
    }
    if (last_event >= 0) {
      Record& event = records_[static_cast<size_t>(last_event)];
      if (event.stacks == 0) {
        stacks_.emplace_back();
        event.stacks = static_cast<uint32_t>(stacks_.size());
      }
      EventStacks& s = stacks_[event.stacks - 1];
      (kernel ? s.kernel : s.user) = r.data;
      (kernel ? s.kernel_size : s.user_size) = r.size;
    }
    r.type = -1;  // printed with its event, not on its own
  }
}

Result<void> Tracer::Drain(RingReader& source) {
  pages_.clear();
  records_.clear();
  stacks_.clear();
  bool with_stacks = stack_plan_.kernel_id >= 0 || stack_plan_.user_id >= 0;
  // Records point into the pages: reserve so none moves while they print.
  pages_.reserve(static_cast<size_t>(source.cpus()) * kMaxPagesPerCpu);
  busiest_bytes_ = 0;
  int cpus_with_events = 0;
  for (int cpu = 0; cpu < source.cpus(); ++cpu) {
    int last_event = -1;
    uint64_t bytes = 0;
    size_t before = records_.size();
    for (size_t reads = 0; reads < kMaxPagesPerCpu; ++reads) {
      size_t n = KP_TRY(source.ReadPage(cpu, page_));
      if (n == 0) break;
      bytes += n;
      page_.resize(n);
      pages_.push_back(page_);
      size_t from = records_.size();
      uint64_t missed = missed_;
      KP_TRY_VOID(decoder_.DecodePage(pages_.back(), cpu, records_, &missed_));
      if (missed_ > missed && lost_sink_) {
        uint64_t page_time = 0;
        std::memcpy(&page_time, page_.data(), std::min<size_t>(8, page_.size()));
        lost_sink_(records_.size() > from ? records_[from].ts : page_time, cpu, missed_ - missed);
      }
      if (with_stacks) AttachStacks(from, last_event);
    }
    busiest_bytes_ = std::max(busiest_bytes_, bytes);
    cpus_with_events += records_.size() > before;
  }
  // Pages of one CPU are in order; a stable sort merges the CPUs by time
  // (one CPU's records need none: the sort was 7% of a flood's time).
  if (cpus_with_events > 1)
    std::stable_sort(records_.begin(), records_.end(), [](const Record& a, const Record& b) { return a.ts < b.ts; });
  for (const Record& r : records_) {
    int index =
        r.type >= 0 && static_cast<size_t>(r.type) < plan_of_.size() ? plan_of_[static_cast<size_t>(r.type)] : -1;
    if (index < 0) continue;
    if (sink_) {
      sink_(plans_[static_cast<size_t>(index)], r, r.stacks ? &stacks_[r.stacks - 1] : nullptr);
      continue;
    }
    printer_.Print(plans_[static_cast<size_t>(index)], r, buffer_, r.stacks ? &stacks_[r.stacks - 1] : nullptr);
    if (buffer_.size() > kFlushAt) KP_TRY_VOID(Flush());
  }
  return Flush();
}

}  // namespace kprobectl
