// SPDX-License-Identifier: GPL-2.0-or-later
//
// Go's functions as its ABI sees them. Go's DWARF (1.19) gives a
// function's results (formal parameters with DW_AT_variable_parameter,
// named as written or "~r0", "~r1"...) no location at its return
// instructions, where they are: in the registers and stack slots Go's ABI
// assigns (arch/go_abi.cc); and at its entry its location lists for the
// arguments can be wrong. So the types of the receiver, arguments and
// results are read here as that assignment needs them, and a value the
// resolver placed at an address (DwarfAddress::results, ::params) gets that place:
// its registers as pieces, one per base value, as Go's own DWARF writes a
// register-assigned argument at the entry, or memory at the stack pointer
// plus its offset. Members, strings and counted strings then read it as
// any variable's.
#include "dwarf_go.h"

#include <dwarf.h>

#include <algorithm>

#include "dwarf_internal.h"
#include "dwarf_pieces.h"
#include "dwarf_types.h"
#include "kprobectl/strings.h"

namespace kprobectl::dwarf {

namespace {

constexpr int kMaxDepth = 32;

Result<GoAbiType> AbiTypeOf(Dwarf_Die type, const std::string& what, int depth);

Result<GoAbiType> StructType(Dwarf_Die* t, const std::string& what, int depth) {
  GoAbiType out{GoAbiType::kStruct, ByteSize(t), 1, {}, {}, 0};
  Dwarf_Die member;
  if (dwarf_child(t, &member) != 0) return out;
  do {
    if (dwarf_tag(&member) != DW_TAG_member) continue;
    Dwarf_Die member_type;
    Dwarf_Attribute attr;
    Dwarf_Word offset = 0;
    if (!TypeOf(&member, &member_type)) return Fail(what + ": member '" + DieName(&member) + "' has no type");
    if (dwarf_attr(&member, DW_AT_data_member_location, &attr)) dwarf_formudata(&attr, &offset);
    GoAbiType m = KP_TRY(AbiTypeOf(member_type, what, depth + 1));
    out.align = std::max(out.align, m.align);
    out.members.push_back(std::move(m));
    out.offsets.push_back(offset);
  } while (dwarf_siblingof(&member, &member) == 0);
  return out;
}

Result<GoAbiType> AbiTypeOf(Dwarf_Die type, const std::string& what, int depth) {
  if (depth > kMaxDepth) return Fail(what + "'s type nests too deeply to place by Go's ABI");
  Dwarf_Die t = PeelType(type);
  uint64_t size = ByteSize(&t);
  switch (dwarf_tag(&t)) {
    case DW_TAG_base_type: {
      Dwarf_Attribute attr;
      Dwarf_Word encoding = 0;
      if (dwarf_attr(&t, DW_AT_encoding, &attr)) dwarf_formudata(&attr, &encoding);
      if (encoding == DW_ATE_float) return GoAbiType{GoAbiType::kFloat, size, size, {}, {}, 0};
      if (encoding == DW_ATE_complex_float) {
        GoAbiType part{GoAbiType::kFloat, size / 2, size / 2, {}, {}, 0};
        return GoAbiType{GoAbiType::kStruct, size, size / 2, {part, part}, {0, size / 2}, 0};
      }
      return GoAbiType{GoAbiType::kInteger, size, std::max<uint64_t>(size, 1), {}, {}, 0};
    }
    case DW_TAG_pointer_type:
    case DW_TAG_subroutine_type:
      return GoAbiType{GoAbiType::kInteger, 8, 8, {}, {}, 0};
    case DW_TAG_structure_type:
      return StructType(&t, what, depth);
    case DW_TAG_array_type: {
      Dwarf_Die element, subrange;
      if (!TypeOf(&t, &element)) return Fail(what + ": an array without an element type");
      GoAbiType e = KP_TRY(AbiTypeOf(element, what, depth + 1));
      std::optional<uint64_t> count;
      if (dwarf_child(&t, &subrange) == 0) count = ArrayCount(&subrange);
      if (!count) count = e.size ? size / e.size : 0;
      uint64_t align = e.align;
      return GoAbiType{GoAbiType::kArray, size, align, {std::move(e)}, {}, *count};
    }
    default:
      return Fail(what + " is of type " + TypeName(&t) + ", which kprobectl cannot place by Go's ABI");
  }
}

// An out-of-line copy of a function Go also inlined has its parameters'
// attributes on their abstract entries (DW_AT_abstract_origin).
bool IsResult(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  bool flag = false;
  return dwarf_tag(die) == DW_TAG_formal_parameter && dwarf_attr_integrate(die, DW_AT_variable_parameter, &attr) &&
         dwarf_formflag(&attr, &flag) == 0 && flag;
}

}  // namespace

Debuginfo::Language DwarfInfo::LanguageAt(const DwarfAddress& at) {
  ReadyDwarf dwarf = Ready();
  Dwarf_Die fn = dwarf.Die(at.die_offset);
  Dwarf_Die cu = dwarf.CuOf(&fn);
  switch (dwarf_srclang(&cu)) {
    case DW_LANG_Go:
      return Language::kGo;
    case DW_LANG_Rust:
      return Language::kRust;
    default:
      return Language::kOther;
  }
}

Result<std::vector<GoValue>> DwarfInfo::GoValues(const DwarfAddress& at) {
  Dwarf_Die fn = Ready().Die(at.die_offset);
  if (dwarf_tag(&fn) != DW_TAG_subprogram)
    return Fail("the code at " + Hex(at.address) + " is " + at.function + " inlined into another function");
  std::vector<GoValue> out;
  Dwarf_Die child;
  if (dwarf_child(&fn, &child) != 0) return out;
  do {
    if (dwarf_tag(&child) != DW_TAG_formal_parameter) continue;
    GoValue value;
    value.name = DieName(&child);
    value.result = IsResult(&child);
    // Go 1.19 on arm64 can write a result twice (main.row's "~r0", the
    // same line and type): names are a function's own, one value each.
    if (std::any_of(out.begin(), out.end(), [&](const GoValue& v) { return v.name == value.name; })) continue;
    Dwarf_Die type;
    std::string what = "'" + value.name + "' of " + at.function;
    if (!TypeOf(&child, &type)) {
      value.unplaceable = what + " has no type in the debuginfo";
    } else if (auto placed = AbiTypeOf(type, what, 0)) {
      value.type = std::move(*placed);
    } else {
      value.unplaceable = placed.error().message;
    }
    out.push_back(std::move(value));
  } while (dwarf_siblingof(&child, &child) == 0);
  return out;
}

const AbiValue* AbiValueAt(const DwarfAddress& at, Dwarf_Die* var) {
  if (dwarf_tag(var) != DW_TAG_formal_parameter) return nullptr;
  const bool result = IsResult(var);
  const std::vector<AbiValue>* values = at.go_return && result   ? &at.results
                                        : at.go_entry && !result ? &at.params
                                                                 : nullptr;
  if (!values) return nullptr;
  std::string name = DieName(var);
  for (const AbiValue& v : *values)
    if (v.name == name) return &v;
  return nullptr;
}

Result<Place> AbiValuePlace(const AbiValue& value, const std::string& what, uint64_t size) {
  if (!value.unplaceable.empty())
    return Fail(what + " cannot be placed at the return: " + value.unplaceable,
                "fetch the function's other results, or the value where its callers keep it");
  Place place;
  const GoAbiPlace& abi = value.place;
  if (abi.on_stack) {
    place.kind = Place::kMemory;
    place.base.root = VariableFetch::kRegister;
    place.base.dwarf_register = value.stack_pointer;
    place.offset = abi.stack_offset;
    return place;
  }
  auto unreadable = [&](const GoAbiPlace::Piece& p) {
    return "it is in " + p.name + ", a floating-point register: Go " + (value.result ? "returns" : "passes") +
           " floating-point values there, and the kernel cannot fetch them";
  };
  const std::string float_hint =
      value.result ? "record it where the caller keeps it after the call, or fetch the function's other results"
                   : "fetch it where the function keeps it further on (kprobectl vars FUNC:LINE), or "
                     "fetch the other arguments";
  const bool all_float = std::all_of(abi.pieces.begin(), abi.pieces.end(), [](const auto& p) { return p.is_float; });
  if (!abi.pieces.empty() && all_float && abi.pieces.size() > 1)  // a complex number: both halves
    return Fail(what + " cannot be read here: " + unreadable(abi.pieces[0]) + " (and " + abi.pieces[1].name + ")",
                float_hint);
  if (abi.pieces.size() == 1 && abi.pieces[0].offset == 0 && abi.pieces[0].size == size) {
    if (abi.pieces[0].is_float) return Fail(what + " cannot be read here: " + unreadable(abi.pieces[0]), float_hint);
    place.base.root = VariableFetch::kRegister;
    place.base.dwarf_register = abi.pieces[0].dwarf_register;
    return place;
  }
  auto pieces = std::make_shared<Pieces>();
  pieces->of = what;
  pieces->size = size;
  uint64_t at = 0;
  for (const GoAbiPlace::Piece& p : abi.pieces) {
    if (p.offset > at) pieces->list.push_back(Piece{(p.offset - at) * 8, Piece::kOptimizedOut, {}, 0, 0, {}});
    Piece piece{p.size * 8, p.is_float ? Piece::kUnreadable : Piece::kPlace, {}, 0, 0, {}};
    if (p.is_float) piece.why = unreadable(p);
    piece.place.base.root = VariableFetch::kRegister;
    piece.place.base.dwarf_register = p.dwarf_register;
    pieces->list.push_back(std::move(piece));
    at = p.offset + p.size;
  }
  if (size > at) pieces->list.push_back(Piece{(size - at) * 8, Piece::kOptimizedOut, {}, 0, 0, {}});
  place.kind = Place::kPieces;
  place.pieces = std::move(pieces);
  return place;
}

}  // namespace kprobectl::dwarf
