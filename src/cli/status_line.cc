// SPDX-License-Identifier: GPL-2.0-or-later
#include "status_line.h"

#include "kprobectl/strings.h"

namespace kprobectl::cli {

std::string StatusLine::Text(double seconds, uint64_t events, double rate, const std::string& what,
                             const std::string& lost) {
  std::string out = "kprobectl: " + DecimalText(seconds, 1) + " s: " + std::to_string(events) + " " + what + " (" +
                    DecimalText(rate, 0) + "/s)";
  if (!lost.empty()) out += ", " + lost;
  return out;
}

void StatusLine::Update(uint64_t events, const std::string& what, const std::string& lost) {
  if (!on_) return;
  auto now = Clock::now();
  double since = std::chrono::duration<double>(now - last_).count();
  if (since < 0.5) return;
  rate_ = static_cast<double>(events - std::min(events, last_events_)) / since;
  last_ = now;
  last_events_ = events;
  // "\r" and erase to the end of the line (ECMA-48 EL): the line rewritten.
  err_ << "\r" << Text(std::chrono::duration<double>(now - start_).count(), events, rate_, what, lost) << "\033[K"
       << std::flush;
  shown_ = true;
}

void StatusLine::Clear() {
  if (!shown_) return;
  err_ << "\r\033[K" << std::flush;
  shown_ = false;
}

}  // namespace kprobectl::cli
