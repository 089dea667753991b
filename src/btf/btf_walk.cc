// SPDX-License-Identifier: GPL-2.0-or-later
//
// A struct or union passed by value in argument registers is read member
// by member: its bytes 0-7 are the first slot's register, 8-15 the next
// one's (System V psABI 3.2.3, INTEGER class eightbytes), so a member k
// bytes into a slot is that register's bits from 8k, a bitfield type
// (b<W>@<8k>/<C>), as DWARF's pieces of such a struct are read
// (dwarf_pieces.cc).
#include "btf_walk.h"

#include "btf_types.h"
#include "kprobectl/strings.h"

namespace kprobectl::btf {

namespace {

VariableFetch ReadPlace(const Place& place) {
  VariableFetch out = place.base;
  if (place.memory) out.derefs.push_back(place.offset);
  return out;
}

Place Pointee(const Place& pointer, int64_t offset) { return Place{ReadPlace(pointer), true, offset, 0}; }

struct Found {
  Type::Member member;
  uint64_t bit_offset = 0;  // from the start of the outermost aggregate
};

// A member by name, looking inside anonymous structs and unions too.
std::optional<Found> FindMember(const File& file, const Type& aggregate, const std::string& name, int depth = 0) {
  if (depth > 16) return std::nullopt;
  for (const Type::Member& m : aggregate.members) {
    if (m.name == name) return Found{m, m.bit_offset};
    if (!m.name.empty()) continue;
    Type inner = file.Get(Peel(file, m.type));
    if (inner.kind != Type::kStruct && inner.kind != Type::kUnion) continue;
    if (auto found = FindMember(file, inner, name, depth + 1)) {
      found->bit_offset += m.bit_offset;
      return found;
    }
  }
  return std::nullopt;
}

std::vector<std::string> MemberNames(const Type& aggregate) {
  std::vector<std::string> names;
  for (const Type::Member& m : aggregate.members)
    if (!m.name.empty() && names.size() < 12) names.push_back(m.name);
  return names;
}

// A struct or union passed in argument slots (`slots`): the one slot the
// object `w` leads to lies in, as that argument, its bits through a
// bitfield type when they do not begin at its first (which cannot be
// followed as a pointer).
Result<void> Settle(const File& file, Walked& w, bool follow) {
  if (!w.place.slots) return {};
  uint64_t size = SizeOf(file, w.type);
  uint64_t start = static_cast<uint64_t>(w.place.offset) * 8;
  uint64_t first = start / 64, last = (start + size * 8 - 1) / 64;
  if (size == 0 || first != last) {
    std::string bytes = " (bytes " + std::to_string(start / 8) + "-" + std::to_string(start / 8 + size - 1) + ")";
    if (w.place.offset == 0)
      return Fail(w.what + " is passed in two argument registers" + bytes +
                  ", and the kernel fetches one place per argument");
    return Fail(w.what + " lies across two argument registers" + bytes + ", which the kernel cannot read as one");
  }
  w.place.base.argument += static_cast<unsigned>(first);
  w.place.slots = 0;
  w.place.offset = 0;
  if (start % 64 == 0) return {};
  if (follow)
    return Fail(w.what + " is bits " + std::to_string(start % 64) + " and up of an argument register, which the " +
                "kernel cannot follow as a pointer");
  auto bits = ValueBitsFetch(size * 8, start % 64);
  if (!bits) return Fail(w.what + " lies past the 64 bits of the argument register that holds it");
  w.bitfield = std::pair<FetchType, int64_t>{*bits, 0};
  return {};
}

}  // namespace

Result<void> WalkIndex(const File& file, Walked& w, const ArgAccessor& acc) {
  Type t = file.Get(Peel(file, w.type));
  if (t.kind == Type::kArray) {
    if (!w.place.memory && !w.place.slots) return Fail(w.what + " is an array the kernel cannot index here");
    w.place.offset += acc.index * static_cast<int64_t>(SizeOf(file, t.next));
  } else if (t.kind == Type::kPointer) {
    KP_TRY_VOID(Settle(file, w, true));
    w.place = Pointee(w.place, acc.index * static_cast<int64_t>(SizeOf(file, t.next)));
  } else {
    return Fail(w.what + " (" + TypeName(file, w.type) + ") is neither an array nor a pointer, so [" +
                std::to_string(acc.index) + "] means nothing");
  }
  w.type = t.next;
  w.what = w.what.substr(0, w.what.size() - 1) + "[" + std::to_string(acc.index) + "]'";
  return {};
}

Result<void> WalkMember(const File& file, Walked& w, const ArgAccessor& acc) {
  uint32_t peeled = Peel(file, w.type);
  Type t = file.Get(peeled);
  bool arrow = acc.kind == ArgAccessor::kArrow;
  std::string bare = w.what.substr(1, w.what.size() - 2);
  uint32_t aggregate_id = peeled;
  if (arrow) {
    if (t.kind != Type::kPointer)
      return Fail(w.what + " (" + TypeName(file, w.type) + ") is not a pointer",
                  "use '.' for its members: " + bare + "." + acc.member);
    if (t.next == 0) return Fail(w.what + " is a void pointer; it has no members");
    aggregate_id = Peel(file, t.next);
  } else if (t.kind == Type::kPointer) {
    return Fail(w.what + " is a pointer (" + TypeName(file, w.type) + ")",
                "use '->' for what it points to: " + bare + "->" + acc.member);
  }
  Type aggregate = file.Get(aggregate_id);
  if (aggregate.kind == Type::kForward)
    return Fail(TypeName(file, aggregate_id) + " is declared but not defined in this BTF, so its members are unknown");
  if (aggregate.kind != Type::kStruct && aggregate.kind != Type::kUnion)
    return Fail(w.what + (arrow ? " points to a " : " is a ") + TypeName(file, aggregate_id) +
                ", which has no members");
  if (w.bitfield) return Fail(w.what + " is a bitfield; it has no members");
  auto found = FindMember(file, aggregate, acc.member);
  if (!found) {
    auto names = MemberNames(aggregate);
    return Fail(TypeName(file, aggregate_id) + " has no member '" + acc.member + "'",
                names.empty() ? "" : "its members: " + Join(names, ", "));
  }
  const Type::Member& m = found->member;
  Type member_type = file.Get(Peel(file, m.type));
  // A bitfield: BTF's kind_flag form (bitfield_size), or an int whose bits
  // are fewer than its size (the older form).
  uint64_t bits = m.bitfield_size;
  uint64_t bit_start = found->bit_offset;
  if (!bits && member_type.kind == Type::kInt && member_type.int_bits &&
      (member_type.int_bits != member_type.size * 8 || member_type.int_offset)) {
    bits = member_type.int_bits;
    bit_start += member_type.int_offset;
  }
  std::string what = "'" + bare + (arrow ? "->" : ".") + acc.member + "'";
  if (arrow) KP_TRY_VOID(Settle(file, w, true));
  std::optional<std::pair<FetchType, int64_t>> bitfield;
  if (bits && w.place.slots && !arrow) {
    // A bitfield in an argument register: the register's bits.
    uint64_t start = static_cast<uint64_t>(w.place.offset) * 8 + bit_start;
    if (start / 64 != (start + bits - 1) / 64)
      return Fail(what + " lies across two argument registers, and the kernel fetches one place per argument");
    w.place.base.argument += static_cast<unsigned>(start / 64);
    w.place.slots = 0;
    w.place.offset = 0;
    bitfield = std::pair<FetchType, int64_t>{*ValueBitsFetch(bits, start % 64), 0};
  } else {
    int64_t byte_offset = static_cast<int64_t>(bit_start / 8);
    if (bits) {
      bitfield = KP_TRY(BitfieldFetch(bit_start, bits, SizeOf(file, m.type)));
      byte_offset = bitfield->second;
    }
    if (arrow) {
      w.place = Pointee(w.place, byte_offset);
    } else {
      if (!w.place.memory && !w.place.slots)
        return Fail(w.what + " is passed in registers; its members cannot be read", "fetch it whole, " + bare);
      w.place.offset += byte_offset;
    }
  }
  w.type = m.type;
  w.bitfield = bitfield;
  w.name = acc.member;
  w.what = what;
  return {};
}

Result<VariableFetch> Read(const File& file, const Walked& walked, bool want_string) {
  Walked w = walked;
  KP_TRY_VOID(Settle(file, w, want_string));
  Type t = file.Get(Peel(file, w.type));
  VariableFetch fetch;
  if (w.bitfield) {
    fetch = ReadPlace(w.place);
    fetch.type = w.bitfield->first;
  } else if (want_string) {
    if (t.kind == Type::kArray && IsChar(file, t.next) && w.place.memory) {
      fetch = w.place.base;  // the string starts at the array's own address
      fetch.derefs.push_back(w.place.offset);
    } else if (t.kind == Type::kPointer && (t.next == 0 || IsChar(file, t.next))) {
      fetch = ReadPlace(w.place);
      fetch.derefs.push_back(0);
    } else {
      return Fail(w.what + " (" + TypeName(file, w.type) +
                  ") cannot be read as a string: only char arrays and char pointers can");
    }
    fetch.type = FetchType::Of(FetchType::kString);
  } else if (t.kind == Type::kArray) {
    if (!w.place.memory) return Fail(w.what + " is an array the kernel cannot read here");
    fetch = w.place.base;
    fetch.derefs.push_back(w.place.offset);
    if (IsChar(file, t.next)) {
      fetch.type = FetchType::Of(FetchType::kString);
    } else {
      if (t.count == 0 || t.count > 64)
        return Fail(w.what + " is an array of " + std::to_string(t.count) + " elements; the kernel reads 1 to 64",
                    "fetch elements, " + w.what.substr(1, w.what.size() - 2) + "[0]");
      fetch.type = KP_TRY(ScalarFetchType(file, t.next, w.what + "'s elements")).ArrayOf(t.count);
    }
  } else {
    fetch = ReadPlace(w.place);
    fetch.type = KP_TRY(ScalarFetchType(file, w.type, w.what));
  }
  fetch.name = w.name;
  fetch.c_type = TypeName(file, w.type);
  return fetch;
}

namespace {

constexpr int kMaxDepth = 8;
constexpr uint64_t kMaxElements = 16;

void Collect(const File& file, const Walked& w, const std::string& path, std::vector<MemberFetch>& out, int depth);

// The named members of `aggregate` (the type `w` leads to, or an anonymous
// struct or union inside it, whose members are found from `w` by name).
void Members(const File& file, const Walked& w, const Type& aggregate, const std::string& path,
             std::vector<MemberFetch>& out, int depth) {
  if (depth > kMaxDepth) return;
  for (const Type::Member& m : aggregate.members) {
    if (m.name.empty()) {
      Type inner = file.Get(Peel(file, m.type));
      if (inner.kind == Type::kStruct || inner.kind == Type::kUnion) Members(file, w, inner, path, out, depth + 1);
      continue;
    }
    Walked c = w;
    if (auto walked = WalkMember(file, c, {ArgAccessor::kDot, m.name, 0, 0}); !walked)
      out.push_back({path + "." + m.name, "", std::unexpected(walked.error())});
    else
      Collect(file, c, path + "." + m.name, out, depth + 1);
  }
}

void Collect(const File& file, const Walked& w, const std::string& path, std::vector<MemberFetch>& out, int depth) {
  Type t = file.Get(Peel(file, w.type));
  if (t.kind == Type::kStruct || t.kind == Type::kUnion) {
    Members(file, w, t, path, out, depth);
    return;
  }
  if (t.kind == Type::kArray) {
    auto whole = Read(file, w, false);
    if (whole || t.count == 0 || t.count > kMaxElements) {
      out.push_back({path, "", std::move(whole)});
      return;
    }
    for (uint32_t i = 0; i < t.count; ++i) {
      Walked e = w;
      std::string element = path + "[" + std::to_string(i) + "]";
      if (auto walked = WalkIndex(file, e, {ArgAccessor::kIndex, "", i, 0}); !walked)
        out.push_back({element, "", std::unexpected(walked.error())});
      else
        Collect(file, e, element, out, depth + 1);
    }
    return;
  }
  out.push_back({path, "", Read(file, w, false)});
}

}  // namespace

std::vector<MemberFetch> ReadableMembers(const File& file, const Walked& w) {
  std::vector<MemberFetch> out;
  Collect(file, w, w.what.substr(1, w.what.size() - 2), out, 0);
  for (MemberFetch& m : out) {
    m.name = IdentifierOf(m.path);
    if (m.fetch) m.fetch->name = m.name;
  }
  return out;
}

}  // namespace kprobectl::btf
