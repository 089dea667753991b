// SPDX-License-Identifier: GPL-2.0-or-later
//
// Fuzz target: the other text tracefs hands us: its README (features),
// error_log (the entry for a command), and kprobe_profile/uprobe_profile.
#include <string_view>

#include "fuzz_target.h"
#include "kprobectl/kernel_features.h"
#include "kprobectl/probe_events.h"

using namespace kprobectl;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ParseFeatures(text, true, true);
  (void)FindErrorLogEntry(text, "p:probe/do_sys_open do_sys_open+0 a=%di");
  (void)FindErrorLogEntry(text, "");
  (void)ParseProfile(text, ProbeKind::kKernel);
  (void)ParseProfile(text, ProbeKind::kUser);
  return 0;
}
