// SPDX-License-Identifier: GPL-2.0-or-later
#include "counted_string.h"

#include <cstring>

namespace kprobectl {

std::optional<CountedBytes> ReadCountedString(const ArgPlan& arg, const Record& record) {
  if (arg.offset + size_t{arg.count} > record.size || arg.length_offset + size_t{arg.length_size} > record.size ||
      arg.length_size > 8)
    return std::nullopt;
  uint64_t length = 0;
  std::memcpy(&length, record.data + arg.length_offset, arg.length_size);  // little-endian, as the targets are
  CountedBytes out;
  out.cut = length > arg.count;
  out.bytes = std::string_view(reinterpret_cast<const char*>(record.data + arg.offset), out.cut ? arg.count : length);
  return out;
}

}  // namespace kprobectl
