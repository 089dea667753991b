// SPDX-License-Identifier: GPL-2.0-or-later
//
// A walk over BTF types from a value to what a member chain names: shared
// by a function's parameters (btf_fetch.cc) and the values an event's
// fields hold (btf_values.cc). In: where the walk starts (a value, or
// memory at a value) and its type. Out: the place and type each step
// reaches, and the VariableFetch that reads the last.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "btf_file.h"
#include "kprobectl/fetch_type.h"
#include "kprobectl/probe_spec.h"
#include "kprobectl/result.h"
#include "kprobectl/variable_fetch.h"

namespace kprobectl::btf {

// Where a value is: the value itself (a parameter), or memory at a value
// plus an offset (what a pointer leads to).
struct Place {
  VariableFetch base;
  bool memory = false;
  int64_t offset = 0;
};

VariableFetch ReadPlace(const Place& place);
// Memory at `pointer`'s value plus `offset`.
Place Pointee(const Place& pointer, int64_t offset);

struct Walked {
  Place place;
  uint32_t type = 0;
  std::string name;  // the last member's or the parameter's
  std::string what;  // "'req->hdr.len'", for messages
  std::optional<std::pair<FetchType, int64_t>> bitfield;
};

Result<void> WalkIndex(const File& file, Walked& w, const ArgAccessor& acc);
Result<void> WalkMember(const File& file, Walked& w, const ArgAccessor& acc);
// The fetch that reads what the walk reached: a scalar, a bitfield, a
// string (char arrays and pointers), or an array of scalars.
Result<VariableFetch> Read(const File& file, const Walked& w, bool want_string);

}  // namespace kprobectl::btf
