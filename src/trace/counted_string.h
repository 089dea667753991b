// SPDX-License-Identifier: GPL-2.0-or-later
//
// A counted string's bytes in a record (plan.cc pairs a u8[N] field with
// its NAME__len): in, the argument's plan and the record; out, the bytes
// cut at min(length, N), and whether the length passed the bound.
#pragma once

#include <optional>
#include <string_view>

#include "kprobectl/trace_printer.h"

namespace kprobectl {

struct CountedBytes {
  std::string_view bytes;
  bool cut = false;  // the string is longer than the bound: only its first bytes were recorded
};

// None when the record is too short for the fields (a damaged record).
std::optional<CountedBytes> ReadCountedString(const ArgPlan& arg, const Record& record);

}  // namespace kprobectl
