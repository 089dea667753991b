// SPDX-License-Identifier: GPL-2.0-or-later
//
// Fuzz target: what the kernel prints back from kprobe_events,
// uprobe_events and dynamic_events. Property: never a crash, and a line
// that parses formats to a line that parses to the same definition.
#include <string_view>

#include "fuzz_target.h"
#include "kprobectl/trace_event_def.h"

using namespace kprobectl;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (ProbeKind kind : {ProbeKind::kKernel, ProbeKind::kUser}) {
    auto def = ParseDefinition(text, kind);
    if (!def) continue;
    std::string line = FormatDefinition(*def);
    auto again = ParseDefinition(line, kind);
    if (!again || !(*again == *def))
      std::fprintf(stderr, "read: %.*s\nwritten: %s\nread back: %s\n", static_cast<int>(text.size()), text.data(),
                   line.c_str(), again ? FormatDefinition(*again).c_str() : again.error().message.c_str());
    KP_FUZZ_CHECK(again.has_value());
    KP_FUZZ_CHECK(*again == *def);
    (void)EventsFileOf(*def);
  }
  return 0;
}
