// SPDX-License-Identifier: GPL-2.0-or-later
//
// Fuzz target: what people type. A probe spec (point and arguments), a line
// range and a funcs filter. Property: parsing never crashes, a spec that
// parses describes itself without crashing, a range is never backwards.
#include <string_view>

#include "fuzz_target.h"
#include "kprobectl/glob.h"
#include "kprobectl/line_range.h"
#include "kprobectl/probe_spec.h"

using namespace kprobectl;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto spec = ParseProbeSpec(text)) {
    (void)DescribePoint(spec->point);
    (void)NeedsDebuginfo(*spec);
  }
  // A range that parses never ends before it starts.
  if (auto range = ParseLineRange(text); range && range->end && *range->end < range->start) __builtin_trap();
  if (auto filter = GlobFilter::Parse(text)) (void)filter->Matches("vfs_read");
  (void)GlobMatch(text, "do_sys_openat2");
  return 0;
}
