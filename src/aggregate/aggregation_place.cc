// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/aggregation_place.h"

#include <algorithm>

#include "kprobectl/strings.h"

namespace kprobectl {

namespace {

// Why kprobectl counts, or empty: the kernel can.
std::string WhyUserSpace(const CountingAsk& ask) {
  const AggregationSpec& spec = ask.spec;
  auto max =
      std::find_if(spec.values.begin(), spec.values.end(), [](const AggValue& v) { return v.op == AggValue::kMax; });
  if (HasKey(spec, AggKey::kUserStack))
    return "-k ustack: the kernel's hist triggers have no user-stack key (kprobectl unwinds each event's user stack)";
  if (!ask.kernel.hist) return "this kernel has no hist triggers (CONFIG_HIST_TRIGGERS)";
  if (max != spec.values.end()) return "--max " + max->arg + ": a hist trigger sums its values and keeps no maximum";
  if (ask.latency && !ask.kernel.synthetic)
    return "this kernel has no synthetic events (CONFIG_SYNTH_EVENTS) to pair entries and returns";
  // The kernel's hist triggers see one event at a time.
  if (!ask.kept_return.empty())
    return ask.kept_return + "'s " + Join(ask.kept_args, ", ") +
           " kept by its entry probe (the kernel keeps no arguments for this return probe), which kprobectl pairs "
           "with each return";
  if (ask.user_space) return "--in-user-space";
  return "";
}

}  // namespace

Result<CountingPlace> ChooseCountingPlace(const CountingAsk& ask) {
  bool stack_key = std::any_of(ask.spec.keys.begin(), ask.spec.keys.end(), [](const AggKey& k) { return k.IsStack(); });
  if (stack_key && ask.latency)
    return Fail("--latency with a stack key: the time is counted at the return, whose stack is not the call's",
                "count the entry probe by its stack: hist --probe 'FUNC' -k kstack (or ustack)");
  CountingPlace out;
  out.why_user_space = WhyUserSpace(ask);
  out.in_kernel = out.why_user_space.empty();
  return out;
}

}  // namespace kprobectl
