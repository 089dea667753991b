// SPDX-License-Identifier: GPL-2.0-or-later
//
// From a variable's place to what a member chain (->, ., [N]) leads to, and
// the fetch that reads it: members through anonymous structs and unions,
// bitfields as the kernel's b<width>@<offset>/<container>, strings from char
// arrays and pointers, arrays of scalars.
#pragma once

#include <elfutils/libdw.h>

#include <optional>
#include <string>
#include <utility>

#include "dwarf_location.h"
#include "kprobectl/probe_spec.h"

namespace kprobectl::dwarf {

// Where an access path leads from a variable.
struct Walked {
  Place place;
  Dwarf_Die type;
  std::string name;  // the last member's or the variable's
  std::string what;  // "'req->hdr.len'", for messages
  std::optional<std::pair<FetchType, int64_t>> bitfield;
};

// One [N]: an element of an array in memory, or through a pointer.
Result<void> WalkIndex(Walked& w, const ArgAccessor& acc);
// One .member or ->member.
Result<void> WalkMember(Walked& w, const ArgAccessor& acc);
// The fetch that reads what the path leads to.
Result<VariableFetch> Read(const Walked& w, bool want_string);

}  // namespace kprobectl::dwarf
