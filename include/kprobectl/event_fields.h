// SPDX-License-Identifier: GPL-2.0-or-later
//
// An event's fields as its tracefs format file declares them, for event
// probes, which read them by name. In: the text of events/SYSTEM/EVENT/format.
// Out: each field's C type, name, offset, size and signedness, and whether
// it is a string kept in the record (__data_loc char[], char[N]); the
// common_* header fields are left out (event probes cannot read them).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kprobectl/result.h"

namespace kprobectl {

struct EventField {
  std::string c_type;  // "const char *", "__data_loc char[]", "char[16]", "pid_t"
  std::string name;
  unsigned offset = 0;
  unsigned size = 0;
  bool is_signed = false;
  bool data_loc = false;                // __data_loc / __rel_loc: a string or array in the record
  std::optional<unsigned> array_count;  // "char prev_comm[16]": 16
  // A string the record holds (its address is what the field gives).
  bool InlineString() const;
  // A pointer ("T *"), and what it points to ("T", qualifiers kept).
  bool IsPointer() const;
  std::string Pointee() const;
};

Result<std::vector<EventField>> ParseEventFields(std::string_view format);

}  // namespace kprobectl
