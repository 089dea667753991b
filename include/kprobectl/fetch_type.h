// SPDX-License-Identifier: GPL-2.0-or-later
//
// The kernel's fetch-argument types (":TYPE" in kprobe_events/uprobe_events):
// u8..u64, s8..s64, x8..x64, char, string, ustring, symbol, symstr,
// b<W>@<O>/<C>, %pd, %pD, and arrays T[N]. Parsed once here, used by the
// spec parser (to reject bad types early) and by the resolver (to decide
// string wrapping and kernel feature checks).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kprobectl/result.h"

namespace kprobectl {

struct FetchType {
  enum Base { kUnsigned, kSigned, kHex, kChar, kString, kUString, kSymbol, kSymStr, kBitfield,
              kDentry, kFile } base = kHex;
  unsigned bits = 64;        // integer width; for bitfields the container size
  unsigned bit_width = 0;    // bitfields
  unsigned bit_offset = 0;   // bitfields
  unsigned array_len = 0;    // 0 = not an array

  bool IsString() const { return base == kString || base == kUString || base == kSymStr; }
};

// Returns a message (without caret) on error; `what` names the bad part.
Result<FetchType> ParseFetchType(std::string_view text);

}  // namespace kprobectl
