// SPDX-License-Identifier: GPL-2.0-or-later
//
// Event naming as perf does it, so that events made here work with perf's
// tools and the other way round. In: the group/event the user gave (if any),
// the function or address probed, the names that already exist. Out: unique
// "group/event" names that the kernel accepts, or an error naming the clash.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "kprobectl/probe_spec.h"
#include "kprobectl/result.h"

namespace kprobectl {

inline constexpr std::string_view kKernelGroup = "probe";
// Event probes: the kernel's default group for them (trace_eprobe.c).
inline constexpr std::string_view kEventProbeGroup = "eprobes";
// MAX_EVENT_NAME_LEN is 64 with the NUL (measured: 63 characters pass, 64 fail).
inline constexpr size_t kMaxEventNameLength = 63;

// "probe_" + the binary's basename up to its first character that is not a
// letter, a digit or '_', as perf names it.
std::string UserGroupName(std::string_view binary_path);

// The event name perf derives from a symbol: a leading '.' dropped, cut at the
// first '.' or '@' (.isra.0, .constprop.0, .part.0, .cold, @GLIBC_2.2.5), any
// other character the kernel refuses turned into '_'.
std::string EventBaseFromSymbol(std::string_view symbol);

// The base name of an event for `point` probed at `symbol` (the function the
// address belongs to): "FUNC", "FUNC_L<n>" for a relative line, "abs_<hex>"
// for a raw address. The "__return" suffix is added by EventNamer.
std::string EventBase(const ProbePoint& point, std::string_view symbol);

class EventNamer {
 public:
  // `existing` holds "group/event" for every event the kernel has now.
  EventNamer(std::set<std::string> existing, bool force) : taken_(std::move(existing)), force_(force) {}

  // Picks the name of the next event. `extra_address` is true for the second
  // and later addresses of one probe point, which get EV_1, EV_2, ... as perf.
  Result<std::string> Take(std::string_view group, std::string_view base, bool retprobe, bool extra_address);

 private:
  std::set<std::string> taken_;  // by the kernel or by this command
  std::set<std::string> ours_;   // by this command
  bool force_;
};

}  // namespace kprobectl
