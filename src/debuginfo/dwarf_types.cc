// SPDX-License-Identifier: GPL-2.0-or-later
//
// C types from DWARF: their spelling, and the kernel fetch type that reads
// them (integers by size and sign, pointers as x64, enums by their size,
// bool as u8, plain char as the kernel's char).
#include "dwarf_types.h"

#include <dwarf.h>

#include "dwarf_internal.h"

namespace kprobectl::dwarf {

Dwarf_Die PeelType(Dwarf_Die type) {
  for (int depth = 0; depth < 64; ++depth) {
    int tag = dwarf_tag(&type);
    if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type &&
        tag != DW_TAG_restrict_type && tag != DW_TAG_atomic_type)
      break;
    Dwarf_Die next;
    if (!TypeOf(&type, &next)) break;  // "const void": stays as the qualifier
    type = next;
  }
  return type;
}

std::string TypeName(Dwarf_Die* type) {
  if (!type) return "void";
  int tag = dwarf_tag(type);
  Dwarf_Die inner;
  bool has_inner = TypeOf(type, &inner);
  std::string name = DieName(type);
  switch (tag) {
    case DW_TAG_base_type:
    case DW_TAG_typedef:
      return name;
    case DW_TAG_structure_type:
      return "struct " + (name.empty() ? "(anonymous)" : name);
    case DW_TAG_union_type:
      return "union " + (name.empty() ? "(anonymous)" : name);
    case DW_TAG_enumeration_type:
      return "enum " + (name.empty() ? "(anonymous)" : name);
    case DW_TAG_class_type:
      return "class " + name;
    case DW_TAG_pointer_type:
      return (has_inner ? TypeName(&inner) : "void") + "*";
    case DW_TAG_reference_type:
      return (has_inner ? TypeName(&inner) : "void") + "&";
    case DW_TAG_const_type:
      return "const " + (has_inner ? TypeName(&inner) : "void");
    case DW_TAG_volatile_type:
      return "volatile " + (has_inner ? TypeName(&inner) : "void");
    case DW_TAG_restrict_type:
    case DW_TAG_atomic_type:
      return has_inner ? TypeName(&inner) : "void";
    case DW_TAG_array_type: {
      std::string dims;
      Dwarf_Die child;
      if (dwarf_child(type, &child) == 0) {
        do {
          if (dwarf_tag(&child) != DW_TAG_subrange_type) continue;
          auto count = ArrayCount(&child);
          dims += "[" + (count ? std::to_string(*count) : std::string()) + "]";
        } while (dwarf_siblingof(&child, &child) == 0);
      }
      return (has_inner ? TypeName(&inner) : "void") + dims;
    }
    case DW_TAG_subroutine_type:
      return (has_inner ? TypeName(&inner) : "void") + " (*)()";
    default:
      return name.empty() ? "?" : name;
  }
}

std::optional<uint64_t> ArrayCount(Dwarf_Die* subrange) {
  Dwarf_Attribute attr;
  Dwarf_Word value;
  if (dwarf_attr(subrange, DW_AT_count, &attr) && dwarf_formudata(&attr, &value) == 0) return value;
  if (dwarf_attr(subrange, DW_AT_upper_bound, &attr) && dwarf_formudata(&attr, &value) == 0) return value + 1;
  return std::nullopt;
}

uint64_t ByteSize(Dwarf_Die* type) {
  Dwarf_Die peeled = PeelType(*type);
  Dwarf_Word size = 0;
  if (dwarf_aggregate_size(&peeled, &size) == 0) return size;
  if (dwarf_tag(&peeled) == DW_TAG_pointer_type) return 8;
  return 0;
}

bool IsCharType(Dwarf_Die* type) {
  Dwarf_Die peeled = PeelType(*type);
  if (dwarf_tag(&peeled) != DW_TAG_base_type) return false;
  Dwarf_Attribute attr;
  Dwarf_Word encoding = 0;
  if (!dwarf_attr(&peeled, DW_AT_encoding, &attr) || dwarf_formudata(&attr, &encoding) != 0) return false;
  return (encoding == DW_ATE_signed_char || encoding == DW_ATE_unsigned_char) && ByteSize(&peeled) == 1;
}

namespace {

// "'req->hdr'" -> "req->hdr", for hints that show what to type.
std::string Bare(const std::string& what) {
  if (what.size() >= 2 && what.front() == '\'' && what.back() == '\'') return what.substr(1, what.size() - 2);
  return what;
}

}  // namespace

Result<FetchType> ScalarFetchType(Dwarf_Die* type, const std::string& what) {
  Dwarf_Die t = PeelType(*type);
  int tag = dwarf_tag(&t);
  uint64_t size = ByteSize(&t);
  auto bits = [&](uint64_t bytes) { return std::to_string(bytes * 8); };
  auto integer = [](FetchType::Base base, uint64_t bytes) {
    return FetchType::Integer(base, static_cast<unsigned>(bytes * 8));
  };
  switch (tag) {
    case DW_TAG_pointer_type:
    case DW_TAG_reference_type:
    case DW_TAG_rvalue_reference_type:
      return FetchType::Integer(FetchType::kHex, 64);
    case DW_TAG_enumeration_type: {
      Dwarf_Die underlying;
      bool is_signed = false;
      if (TypeOf(&t, &underlying)) {
        Dwarf_Die u = PeelType(underlying);
        Dwarf_Attribute attr;
        Dwarf_Word enc = 0;
        if (dwarf_attr(&u, DW_AT_encoding, &attr) && dwarf_formudata(&attr, &enc) == 0)
          is_signed = enc == DW_ATE_signed || enc == DW_ATE_signed_char;
      }
      if (size == 0) size = 4;
      return integer(is_signed ? FetchType::kSigned : FetchType::kUnsigned, size);
    }
    case DW_TAG_base_type: {
      Dwarf_Attribute attr;
      Dwarf_Word enc = 0;
      dwarf_attr(&t, DW_AT_encoding, &attr) && dwarf_formudata(&attr, &enc) == 0;
      if (size != 1 && size != 2 && size != 4 && size != 8)
        return Fail(what + " is a " + bits(size) + "-bit " + TypeName(&t) + "; the kernel fetches at most 64 bits",
                    "fetch a part of it with +OFFSET(...):u64");
      switch (enc) {
        case DW_ATE_boolean:
          return integer(FetchType::kUnsigned, size);
        case DW_ATE_signed:
          return integer(FetchType::kSigned, size);
        case DW_ATE_unsigned:
          return integer(FetchType::kUnsigned, size);
        case DW_ATE_signed_char:
        case DW_ATE_unsigned_char:
          // Plain "char" reads as a character; int8_t and uint8_t as numbers.
          if (DieName(&t) == "char") return FetchType::Of(FetchType::kChar);
          return integer(enc == DW_ATE_signed_char ? FetchType::kSigned : FetchType::kUnsigned, size);
        case DW_ATE_float:
          return integer(FetchType::kHex, size);  // the kernel has no floating-point type: show the bits
        default:
          return integer(FetchType::kHex, size);
      }
    }
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
    case DW_TAG_class_type:
      // A struct the size of a register (pm_message_t, a handle wrapping
      // one int): its bits, as perf fetches it.
      if (size == 1 || size == 2 || size == 4 || size == 8) return integer(FetchType::kHex, size);
      return Fail(what + " is a " + TypeName(&t) + ", not a value the kernel can fetch",
                  "name one of its members: " + Bare(what) + ".MEMBER");
    case DW_TAG_array_type:
      return Fail(what + " is an array (" + TypeName(type) + ")", "fetch an element, " + Bare(what) + "[0]");
    case DW_TAG_subroutine_type:
      return Fail(what + " is a function");
    default:
      return Fail(what + " has a type the kernel cannot fetch (" + TypeName(type) + ")");
  }
}

}  // namespace kprobectl::dwarf
