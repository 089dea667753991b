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

Tracer::Tracer(EventDecoder& decoder, std::vector<EventPlan> plans, Printer& printer, std::ostream& out,
               std::string out_name)
    : decoder_(decoder), plans_(std::move(plans)), printer_(printer), out_(out), out_name_(std::move(out_name)) {
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

Result<void> Tracer::Drain(RingReader& source) {
  pages_.clear();
  records_.clear();
  // Records point into the pages: reserve so none moves while they print.
  pages_.reserve(static_cast<size_t>(source.cpus()) * kMaxPagesPerCpu);
  for (int cpu = 0; cpu < source.cpus(); ++cpu)
    for (size_t reads = 0; reads < kMaxPagesPerCpu; ++reads) {
      size_t n = KP_TRY(source.ReadPage(cpu, page_));
      if (n == 0) break;
      page_.resize(n);
      pages_.push_back(page_);
      KP_TRY_VOID(decoder_.DecodePage(pages_.back(), cpu, records_, &missed_));
    }
  // Pages of one CPU are in order; a stable sort merges the CPUs by time.
  std::stable_sort(records_.begin(), records_.end(), [](const Record& a, const Record& b) { return a.ts < b.ts; });
  for (const Record& r : records_) {
    int index =
        r.type >= 0 && static_cast<size_t>(r.type) < plan_of_.size() ? plan_of_[static_cast<size_t>(r.type)] : -1;
    if (index < 0) continue;
    printer_.Print(plans_[static_cast<size_t>(index)], r, buffer_);
    if (buffer_.size() > kFlushAt) KP_TRY_VOID(Flush());
  }
  return Flush();
}

}  // namespace kprobectl
