// SPDX-License-Identifier: GPL-2.0-or-later
//
// Where hist counts: in the kernel, by a hist trigger on each event (no
// event copied), or in kprobectl from the streamed records (every event
// copied), and why. In: what was asked (the aggregation, --latency,
// --in-user-space), what this kernel's hist triggers take, and the returns
// whose arguments an entry probe keeps. Out: the place, with the reason
// kprobectl counts, which hist says on standard error. The kernel counts
// unless one of the reasons below holds; the first that holds is the one
// given.
#pragma once

#include <string>
#include <vector>

#include "kprobectl/aggregation.h"
#include "kprobectl/kernel_features.h"
#include "kprobectl/result.h"

namespace kprobectl {

struct CountingAsk {
  AggregationSpec spec;     // as the user gave it, bound to no event
  bool latency = false;     // --latency: each return timed from its entry
  bool user_space = false;  // --in-user-space
  HistSupport kernel;       // what this kernel's hist triggers take
  // The first return whose arguments its entry probe keeps ("group:event"),
  // and those arguments' names; empty when no return's are kept.
  std::string kept_return;
  std::vector<std::string> kept_args;
};

struct CountingPlace {
  bool in_kernel = false;
  std::string why_user_space;  // empty when the kernel counts
  bool operator==(const CountingPlace&) const = default;
};

// Refuses what neither side can count (--latency with a stack key: the
// time is counted at the return, whose stack is not the call's).
Result<CountingPlace> ChooseCountingPlace(const CountingAsk& ask);

}  // namespace kprobectl
