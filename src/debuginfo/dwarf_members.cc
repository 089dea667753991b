// SPDX-License-Identifier: GPL-2.0-or-later
#include "dwarf_members.h"

#include <dwarf.h>

#include <vector>

#include "dwarf_internal.h"
#include "dwarf_pieces.h"
#include "dwarf_types.h"
#include "kprobectl/strings.h"

namespace kprobectl::dwarf {

namespace {

struct Member {
  Dwarf_Die die;
  int64_t offset = 0;  // bytes from the start of the enclosing object
};

int64_t MemberLocation(Dwarf_Die* member) {
  Dwarf_Attribute attr;
  if (!dwarf_attr(member, DW_AT_data_member_location, &attr)) return 0;
  Dwarf_Word value;
  if (dwarf_formudata(&attr, &value) == 0) return static_cast<int64_t>(value);
  Dwarf_Op* ops;
  size_t len;
  if (dwarf_getlocation(&attr, &ops, &len) == 0 && len == 1 && ops[0].atom == DW_OP_plus_uconst)
    return static_cast<int64_t>(ops[0].number);
  return 0;
}

// A member by name, looking inside anonymous structs and unions too, and
// in a C++ class's base classes (DW_TAG_inheritance, at their offsets).
std::optional<Member> FindMember(Dwarf_Die* aggregate, const std::string& name) {
  Dwarf_Die child;
  if (dwarf_child(aggregate, &child) != 0) return std::nullopt;
  do {
    if (dwarf_tag(&child) == DW_TAG_inheritance) {
      Dwarf_Die base;
      if (!TypeOf(&child, &base)) continue;
      Dwarf_Die peeled = PeelType(base);
      if (auto inner = FindMember(&peeled, name)) {
        inner->offset += MemberLocation(&child);
        return inner;
      }
      continue;
    }
    if (dwarf_tag(&child) != DW_TAG_member) continue;
    std::string member_name = DieName(&child);
    if (member_name == name) return Member{child, MemberLocation(&child)};
    if (member_name.empty()) {
      Dwarf_Die type;
      if (!TypeOf(&child, &type)) continue;
      Dwarf_Die peeled = PeelType(type);
      int tag = dwarf_tag(&peeled);
      if (tag != DW_TAG_structure_type && tag != DW_TAG_union_type) continue;
      if (auto inner = FindMember(&peeled, name)) {
        inner->offset += MemberLocation(&child);
        return inner;
      }
    }
  } while (dwarf_siblingof(&child, &child) == 0);
  return std::nullopt;
}

std::vector<std::string> MemberNames(Dwarf_Die* aggregate) {
  std::vector<std::string> names;
  Dwarf_Die child;
  if (dwarf_child(aggregate, &child) != 0) return names;
  do {
    if (dwarf_tag(&child) == DW_TAG_member && !DieName(&child).empty()) names.push_back(DieName(&child));
  } while (dwarf_siblingof(&child, &child) == 0 && names.size() < 12);
  return names;
}

// A bitfield member's first bit, counted from its data member location
// (little-endian), and its width.
std::pair<uint64_t, uint64_t> BitfieldBits(Dwarf_Die* member, uint64_t type_size) {
  Dwarf_Attribute attr;
  Dwarf_Word bit_size = 0, value = 0;
  dwarf_formudata(dwarf_attr(member, DW_AT_bit_size, &attr), &bit_size);
  if (dwarf_attr(member, DW_AT_data_bit_offset, &attr) && dwarf_formudata(&attr, &value) == 0) return {value, bit_size};
  // DWARF 2/3: DW_AT_bit_offset counts from the most significant bit of
  // a storage unit of DW_AT_byte_size at DW_AT_data_member_location.
  Dwarf_Word byte_size = type_size, bit_offset = 0;
  if (dwarf_attr(member, DW_AT_byte_size, &attr)) dwarf_formudata(&attr, &byte_size);
  dwarf_formudata(dwarf_attr(member, DW_AT_bit_offset, &attr), &bit_offset);
  return {byte_size * 8 - bit_offset - bit_size, bit_size};
}

// A whole struct in one register (or a constant) is a variable of one
// piece: its members are that register's bits.
Place OnePiece(const Place& place, uint64_t size, const std::string& what) {
  auto pieces = std::make_shared<Pieces>();
  pieces->of = what;
  pieces->size = size;
  Piece piece;
  piece.bits = size * 8;
  piece.kind = Piece::kPlace;
  piece.place = place;
  pieces->list.push_back(piece);
  Place out;
  out.kind = Place::kPieces;
  out.pieces = std::move(pieces);
  return out;
}

bool InOneValue(const Place& place) {
  return place.kind == Place::kValue && place.offset == 0 && place.base.derefs.empty() &&
         (place.base.root == VariableFetch::kRegister || place.base.root == VariableFetch::kConstant);
}

// An object in pieces as the place of the piece that holds it, before it
// is read or followed: in a register at a bit offset, a bitfield type
// takes its bits (which cannot be followed as a pointer).
Result<void> Settle(Walked& w, bool follow) {
  if (w.place.kind != Place::kPieces) return {};
  uint64_t size = ByteSize(&w.type);
  PieceBits at = KP_TRY(PieceAt(*w.place.pieces, static_cast<uint64_t>(w.place.offset) * 8, size * 8, w.what));
  w.place = at.place;
  if (at.place.kind == Place::kMemory && at.skip != 0)
    return Fail(w.what + " does not begin at a byte of the memory that holds it");
  bool in_register = at.place.kind == Place::kValue && at.place.base.root == VariableFetch::kRegister;
  if (!in_register || (at.skip == 0 && at.width == size * 8)) return {};
  if (follow)
    return Fail(w.what + " is bits " + std::to_string(at.skip) + " and up of a register, which the kernel cannot " +
                "follow as a pointer");
  w.bitfield = std::pair<FetchType, int64_t>{KP_TRY(RegisterBits(at.width, at.skip, w.what)), 0};
  return {};
}

// A bitfield member of an object in pieces: the piece that holds its bits.
Result<void> PieceBitfield(Walked& w, uint64_t bit, uint64_t width, uint64_t type_size, const std::string& what) {
  PieceBits at = KP_TRY(PieceAt(*w.place.pieces, static_cast<uint64_t>(w.place.offset) * 8 + bit, width, what));
  w.place = at.place;
  if (at.place.kind == Place::kMemory) {
    auto bits = KP_TRY(BitfieldFetch(at.skip, width, type_size));
    w.place.offset += bits.second;
    w.bitfield = bits;
  } else if (at.place.base.root != VariableFetch::kConstant) {
    w.bitfield = std::pair<FetchType, int64_t>{KP_TRY(RegisterBits(at.width, at.skip, what)), 0};
  }
  return {};
}

bool IsReference(Dwarf_Die* type) {
  Dwarf_Die t = PeelType(*type);
  int tag = dwarf_tag(&t);
  return tag == DW_TAG_reference_type || tag == DW_TAG_rvalue_reference_type;
}

// A C++ reference is a pointer the language follows by itself: so does
// the walk, before a member, an index or a read.
Result<void> FollowReference(Walked& w) {
  if (!IsReference(&w.type)) return {};
  Dwarf_Die t = PeelType(w.type), referenced;
  if (!TypeOf(&t, &referenced)) return Fail(w.what + " is a reference to nothing known");
  KP_TRY_VOID(Settle(w, true));
  w.place = KP_TRY(Pointee(w.place, 0, w.what));
  w.type = referenced;
  return {};
}

bool IsAggregate(Dwarf_Die* type) {
  Dwarf_Die t = PeelType(*type);
  int tag = dwarf_tag(&t);
  return tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_class_type;
}

// libstdc++'s std::string keeps its characters at _M_dataplus._M_p (a
// char*, the first word of the object): a walk there, or false for any
// other type.
Result<bool> WalkToStringData(Walked& w) {
  Dwarf_Die t = PeelType(w.type);
  if (!IsAggregate(&t) || !FindMember(&t, "_M_dataplus")) return false;
  std::string name = w.name, what = w.what;  // still the string's, for the event and messages
  for (const char* member : {"_M_dataplus", "_M_p"}) KP_TRY_VOID(WalkMember(w, {ArgAccessor::kDot, member, 0, 0}));
  w.name = name;
  w.what = what;
  return true;
}

}  // namespace

// One [N]: an element of an array in memory, or through a pointer.
Result<void> WalkIndex(Walked& w, const ArgAccessor& acc) {
  KP_TRY_VOID(FollowReference(w));
  Dwarf_Die t = PeelType(w.type);
  int tag = dwarf_tag(&t);
  Dwarf_Die elem;
  if (tag == DW_TAG_array_type && TypeOf(&t, &elem)) {
    if (w.place.kind != Place::kMemory && w.place.kind != Place::kPieces)
      return Fail(w.what + " is an array the kernel cannot index here");
    w.place.offset += acc.index * static_cast<int64_t>(ByteSize(&elem));
  } else if (tag == DW_TAG_pointer_type && TypeOf(&t, &elem)) {
    KP_TRY_VOID(Settle(w, true));
    w.place = KP_TRY(Pointee(w.place, acc.index * static_cast<int64_t>(ByteSize(&elem)), w.what));
  } else {
    return Fail(w.what + " (" + TypeName(&w.type) + ") is neither an array nor a pointer, so [" +
                std::to_string(acc.index) + "] means nothing");
  }
  w.type = elem;
  w.what = w.what.substr(0, w.what.size() - 1) + "[" + std::to_string(acc.index) + "]'";
  return {};
}

// One .member or ->member, through anonymous structs and unions.
Result<void> WalkMember(Walked& w, const ArgAccessor& acc) {
  KP_TRY_VOID(FollowReference(w));
  Dwarf_Die t = PeelType(w.type);
  int tag = dwarf_tag(&t);
  Dwarf_Die aggregate = t;
  bool arrow = acc.kind == ArgAccessor::kArrow || (w.dot_follows_pointers && tag == DW_TAG_pointer_type);
  std::string bare = w.what.substr(1, w.what.size() - 2);
  if (arrow) {
    if (tag != DW_TAG_pointer_type)
      return Fail(w.what + " (" + TypeName(&w.type) + ") is not a pointer",
                  "use '.' for its members: " + bare + "." + acc.member);
    Dwarf_Die pointee;
    if (!TypeOf(&t, &pointee)) return Fail(w.what + " is a void pointer; it has no members");
    aggregate = PeelType(pointee);
  } else if (tag == DW_TAG_pointer_type) {
    return Fail(w.what + " is a pointer (" + TypeName(&w.type) + ")",
                "use '->' for what it points to: " + bare + "->" + acc.member);
  }
  int agg_tag = dwarf_tag(&aggregate);
  if (agg_tag != DW_TAG_structure_type && agg_tag != DW_TAG_union_type && agg_tag != DW_TAG_class_type)
    return Fail(w.what + " points to a " + TypeName(&aggregate) + ", which has no members");
  if (!dwarf_hasattr(&aggregate, DW_AT_byte_size))
    return Fail(TypeName(&aggregate) + " is declared but not defined in this debuginfo, so its members are unknown");
  auto member = FindMember(&aggregate, acc.member);
  if (!member) {
    auto names = MemberNames(&aggregate);
    return Fail(TypeName(&aggregate) + " has no member '" + acc.member + "'",
                names.empty() ? "" : "its members: " + Join(names, ", "));
  }
  if (w.bitfield) return Fail(w.what + " is a bitfield; it has no members");
  if (arrow) {
    KP_TRY_VOID(Settle(w, true));
    w.place = KP_TRY(Pointee(w.place, member->offset, w.what));
  } else {
    if (InOneValue(w.place)) w.place = OnePiece(w.place, ByteSize(&aggregate), w.what);
    if (w.place.kind != Place::kMemory && w.place.kind != Place::kPieces)
      return Fail(w.what + " is kept in registers here; its members cannot be read");
    w.place.offset += member->offset;
  }
  if (!TypeOf(&member->die, &w.type)) return Fail("member '" + acc.member + "' has no type");
  std::string what = "'" + bare + (acc.kind == ArgAccessor::kArrow ? "->" : ".") + acc.member + "'";
  if (dwarf_hasattr(&member->die, DW_AT_bit_size)) {
    uint64_t type_size = ByteSize(&w.type);
    auto [bit, width] = BitfieldBits(&member->die, type_size);
    if (w.place.kind == Place::kPieces) {
      KP_TRY_VOID(PieceBitfield(w, bit, width, type_size, what));
    } else {
      auto bits = KP_TRY(BitfieldFetch(bit, width, type_size));
      w.place.offset += bits.second;
      w.bitfield = bits;
    }
  }
  w.name = acc.member;
  w.what = what;
  return {};
}

// The fetch that reads what the path leads to: a scalar, a bitfield, a
// string (char arrays and pointers), or an array of scalars.
Result<VariableFetch> Read(const Walked& walked, bool want_string) {
  // A reference reads what it refers to (a reference to an object stays
  // its address, as a pointer would), a std::string as a string its chars.
  Walked w = walked;
  if (IsReference(&w.type)) {
    Dwarf_Die t = PeelType(w.type), referenced;
    if (want_string || (TypeOf(&t, &referenced) && !IsAggregate(&referenced))) KP_TRY_VOID(FollowReference(w));
  }
  if (want_string) (void)KP_TRY(WalkToStringData(w));
  KP_TRY_VOID(Settle(w, want_string));
  VariableFetch fetch;
  Dwarf_Die type = w.type;
  Dwarf_Die t = PeelType(type);
  int tag = dwarf_tag(&t);
  Dwarf_Die elem;
  bool has_elem = TypeOf(&t, &elem);
  const Place& place = w.place;
  if (w.bitfield) {
    fetch = KP_TRY(ReadPlace(place, w.what));
    fetch.type = w.bitfield->first;
  } else if (want_string) {
    if (tag == DW_TAG_array_type && has_elem && IsCharType(&elem) && place.kind == Place::kMemory) {
      fetch = place.base;  // the string starts at the array's own address
      fetch.derefs.push_back(place.offset);
    } else if (tag == DW_TAG_pointer_type && (!has_elem || IsCharType(&elem))) {
      fetch = KP_TRY(ReadPlace(place, w.what));
      fetch.derefs.push_back(0);
    } else if (tag == DW_TAG_array_type && has_elem && IsCharType(&elem)) {
      return Fail(w.what + " is a string the debuginfo holds as a constant: no copy of it in memory is known to read");
    } else {
      return Fail(w.what + " (" + TypeName(&type) +
                  ") cannot be read as a string: only char arrays and char "
                  "pointers can");
    }
    fetch.type = FetchType::Of(FetchType::kString);
  } else if (tag == DW_TAG_array_type && has_elem) {
    Dwarf_Die child;
    uint64_t count = 0;
    if (dwarf_child(&t, &child) == 0 && dwarf_tag(&child) == DW_TAG_subrange_type)
      count = ArrayCount(&child).value_or(0);
    if (place.kind != Place::kMemory)
      return Fail(w.what + (place.base.root == VariableFetch::kRegister
                                ? " is an array kept in a register here, and the kernel reads arrays from memory"
                                : " is an array the kernel cannot read here"));
    fetch = place.base;
    fetch.derefs.push_back(place.offset);
    if (IsCharType(&elem)) {
      fetch.type = FetchType::Of(FetchType::kString);
    } else {
      if (count == 0 || count > 64)
        return Fail(w.what + " is an array of " + std::to_string(count) + " elements; the kernel reads 1 to 64",
                    "fetch elements, " + w.what.substr(1, w.what.size() - 2) + "[0]");
      auto element = ScalarFetchType(&elem, w.what + "'s elements");
      const std::string bare = w.what.substr(1, w.what.size() - 2);  // what the user wrote, unquoted
      if (!element)
        return Fail(w.what + " is an array of " + std::to_string(count) + " " + TypeName(&elem) +
                        ", and the kernel fetches arrays of numbers only",
                    "fetch its elements one by one: " + bare + "[0]" + (count > 1 ? " " + bare + "[1]" : "") +
                        (count > 2 ? " ..." : ""));
      fetch.type = element->ArrayOf(static_cast<unsigned>(count));
    }
  } else {
    fetch = KP_TRY(ReadPlace(place, w.what));
    fetch.type = KP_TRY(ScalarFetchType(&type, w.what));
  }
  fetch.name = w.name;
  fetch.c_type = TypeName(&type);
  return fetch;
}

}  // namespace kprobectl::dwarf
