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
#include <vector>

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
  bool dot_follows_pointers = false;  // Go's and Rust's '.' reaches a pointee's member, as '->'
};

// One [N]: an element of an array in memory, or through a pointer.
Result<void> WalkIndex(Walked& w, const ArgAccessor& acc);
// One .member or ->member.
Result<void> WalkMember(Walked& w, const ArgAccessor& acc);
// The fetch that reads what the path leads to.
Result<VariableFetch> Read(const Walked& w, bool want_string);

// What can be read of the struct, union or array a path leads to, member
// by member (through anonymous structs and unions, nested aggregates and
// arrays, an array whole where the kernel can read it so, else element by
// element): each with the path a user would write ("optval.user",
// "v.s[3]"), a fetcharg name made of it ("optval_user", "v_s_3"), and its
// fetch or why it has none. dwarf_pieces.cc: an aggregate in pieces is
// where this is needed.
struct MemberFetch {
  std::string path;
  std::string name;
  Result<VariableFetch> fetch;
};
std::vector<MemberFetch> ReadableMembers(const Walked& w);

}  // namespace kprobectl::dwarf
