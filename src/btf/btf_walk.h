// SPDX-License-Identifier: GPL-2.0-or-later
//
// Member chains (->, ., [N]) walked over BTF types from a parameter to a
// VariableFetch, as dwarf_members.cc walks DWARF's: anonymous members,
// bitfields, arrays, strings; and a struct passed by value in argument
// registers (the System V ABI: up to 16 bytes in one or two), whose
// members are those registers' bits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "btf_file.h"
#include "kprobectl/probe_spec.h"
#include "kprobectl/result.h"
#include "kprobectl/variable_fetch.h"

namespace kprobectl::btf {

// Where a value is: the value itself (a parameter), memory at a value plus
// an offset (what a pointer leads to), or `offset` bytes into a struct or
// union passed by value in `slots` argument slots from base.argument.
struct Place {
  VariableFetch base;
  bool memory = false;
  int64_t offset = 0;
  unsigned slots = 0;
};

struct Walked {
  Place place;
  uint32_t type = 0;
  std::string name;  // the last member's or the parameter's
  std::string what;  // "'req->hdr.len'", for messages
  std::optional<std::pair<FetchType, int64_t>> bitfield;
};

Result<void> WalkIndex(const File& file, Walked& w, const ArgAccessor& acc);
Result<void> WalkMember(const File& file, Walked& w, const ArgAccessor& acc);
// The fetch that reads what the path leads to: a scalar, a bitfield, a
// string (char arrays and pointers), or an array of scalars.
Result<VariableFetch> Read(const File& file, const Walked& w, bool want_string);

// What can be read of the struct or union a path leads to, member by
// member, as dwarf_members.h's ReadableMembers: the path a user would
// write ("optval.user"), a fetcharg name ("optval_user"), the fetch or why
// there is none.
struct MemberFetch {
  std::string path;
  std::string name;
  Result<VariableFetch> fetch;
};
std::vector<MemberFetch> ReadableMembers(const File& file, const Walked& w);

}  // namespace kprobectl::btf
