// SPDX-License-Identifier: GPL-2.0-or-later
//
// The live status of a long trace or hist (-d, -i or a command): one line
// on standard error, "kprobectl: 12.0 s: 48213 events (4017/s), 0 lost",
// rewritten in place at most twice a second, erased before anything else
// is written there or to the same terminal, and at the end. Only where
// standard error is a terminal and the events themselves are not being
// printed to it: never in a pipe or a file, so no log gets it.
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

namespace kprobectl::cli {

class StatusLine {
 public:
  StatusLine(std::ostream& err, bool on) : err_(err), on_(on) {}
  ~StatusLine() { Clear(); }
  StatusLine(const StatusLine&) = delete;
  StatusLine& operator=(const StatusLine&) = delete;
  bool on() const { return on_; }
  // Redrawn when half a second has passed: `events` so far (what they are:
  // "events", "probe hits"), and `lost` when it is known.
  void Update(uint64_t events, const std::string& what, const std::string& lost);
  // Erases the line, until the next Update.
  void Clear();
  // The line for these figures, `seconds` into the run, `rate` a second.
  static std::string Text(double seconds, uint64_t events, double rate, const std::string& what,
                          const std::string& lost);

 private:
  using Clock = std::chrono::steady_clock;
  std::ostream& err_;
  bool on_;
  bool shown_ = false;
  Clock::time_point start_ = Clock::now(), last_ = start_;
  uint64_t last_events_ = 0;
  double rate_ = 0;
};

}  // namespace kprobectl::cli
