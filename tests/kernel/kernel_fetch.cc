// SPDX-License-Identifier: GPL-2.0-or-later
#include "kernel_fetch.h"

#include <dwarf.h>

#include <algorithm>
#include <cstdio>

namespace kprobectl::test {

namespace {

bool TypeOf(Dwarf_Die* die, Dwarf_Die* type) {
  Dwarf_Attribute attr;
  return dwarf_attr_integrate(die, DW_AT_type, &attr) && dwarf_formref_die(&attr, type);
}

uint64_t Udata(Dwarf_Die* die, unsigned name, uint64_t otherwise) {
  Dwarf_Attribute attr;
  Dwarf_Word value = 0;
  return dwarf_attr_integrate(die, name, &attr) && dwarf_formudata(&attr, &value) == 0 ? value : otherwise;
}

bool Location(Dwarf_Die* var, Dwarf_Attribute* attr) {
  if (!dwarf_attr_integrate(var, DW_AT_location, attr)) return false;
  // gcc writes a short exprloc as block1 in DWARF 4 units.
  if (attr->form == DW_FORM_block1) attr->form = DW_FORM_exprloc;
  return true;
}

bool IsReg(const Dwarf_Op& op) { return op.atom >= DW_OP_reg0 && op.atom <= DW_OP_reg31; }
bool IsBreg(const Dwarf_Op& op) { return op.atom >= DW_OP_breg0 && op.atom <= DW_OP_breg31; }

std::optional<uint64_t> Literal(const Dwarf_Op& op) {
  if (op.atom >= DW_OP_lit0 && op.atom <= DW_OP_lit31) return op.atom - DW_OP_lit0;
  if (op.atom == DW_OP_const1u || op.atom == DW_OP_const2u || op.atom == DW_OP_const4u || op.atom == DW_OP_const8u ||
      op.atom == DW_OP_constu)
    return op.number;
  return std::nullopt;
}

std::string Signed(int64_t offset) { return (offset < 0 ? "-" : "+") + std::to_string(offset < 0 ? -offset : offset); }

// The operations, for a message: "0x75 112, 0x6, 0x23 200" (DW_OP_breg5
// RDI+112, DW_OP_deref, DW_OP_plus_uconst 200).
std::string OpsText(const std::vector<Dwarf_Op>& ops) {
  std::string out;
  for (const Dwarf_Op& op : ops) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%x", op.atom);
    out += (out.empty() ? "" : ", ") + std::string(hex);
    if (op.number) out += " " + std::to_string(static_cast<int64_t>(op.number));
  }
  return out.empty() ? "(empty)" : out;
}

// A location of several pieces: each piece's place in the value and its operations.
struct Piece {
  uint64_t bit_offset = 0, bit_size = 0;
  std::vector<Dwarf_Op> ops;
};

std::optional<std::vector<Piece>> Pieces(const std::vector<Dwarf_Op>& ops) {
  std::vector<Piece> out;
  std::vector<Dwarf_Op> pending;
  uint64_t at = 0;
  for (const Dwarf_Op& op : ops) {
    if (op.atom == DW_OP_piece || op.atom == DW_OP_bit_piece) {
      uint64_t bits = op.atom == DW_OP_piece ? op.number * 8 : op.number;
      out.push_back({at, bits, pending});
      at += bits;
      pending.clear();
    } else {
      pending.push_back(op);
    }
  }
  if (out.empty() || !pending.empty()) return std::nullopt;
  return out;
}

// The register DW_OP_entry_value's block names, when it is one DW_OP_regN.
std::optional<unsigned> EntryValueRegister(const Dwarf_Op& op) {
  if ((op.atom != DW_OP_entry_value && op.atom != DW_OP_GNU_entry_value) || op.number != 1) return std::nullopt;
  // libdw gives the block's length, and a pointer to the operand: the
  // length (ULEB128), then the block.
  const auto* block = reinterpret_cast<const unsigned char*>(static_cast<uintptr_t>(op.number2));
  if (!block) return std::nullopt;
  while (*block & 0x80) ++block;
  ++block;
  if (block[0] < DW_OP_reg0 || block[0] > DW_OP_reg31) return std::nullopt;
  return block[0] - DW_OP_reg0;
}

// The smallest container the kernel's bitfield fetch takes that holds the
// type and the bits read (b<width>@<offset>/<container>).
unsigned Container(uint64_t type_bytes, uint64_t reach_bits) {
  uint64_t need = std::max(type_bytes * 8, reach_bits);
  for (unsigned c : {8u, 16u, 32u, 64u})
    if (c >= need) return c;
  return 0;
}

struct Member {
  std::string path;
  uint64_t bit_offset = 0, bit_size = 0;
  bool bitfield = false;
  Dwarf_Die type;
};

std::optional<uint64_t> ArrayCount(Dwarf_Die* array) {
  Dwarf_Die sub;
  if (dwarf_child(array, &sub) != 0) return std::nullopt;
  do {
    if (dwarf_tag(&sub) != DW_TAG_subrange_type) continue;
    if (dwarf_hasattr(&sub, DW_AT_count)) return Udata(&sub, DW_AT_count, 0);
    if (dwarf_hasattr(&sub, DW_AT_upper_bound)) return Udata(&sub, DW_AT_upper_bound, 0) + 1;
  } while (dwarf_siblingof(&sub, &sub) == 0);
  return std::nullopt;
}

// The scalar members of an aggregate type, flattened in declaration order.
void Leaves(Dwarf_Die type, const std::string& prefix, uint64_t base, std::vector<Member>& out) {
  Dwarf_Die t = Peeled(type);
  int tag = dwarf_tag(&t);
  if (tag == DW_TAG_array_type) {
    Dwarf_Die element;
    auto count = ArrayCount(&t);
    if (!TypeOf(&t, &element) || !count) return;
    uint64_t bits = Udata(&element, DW_AT_byte_size, 0) * 8;
    if (bits == 0) bits = Udata(&(element = Peeled(element)), DW_AT_byte_size, 0) * 8;
    for (uint64_t i = 0; i < *count; ++i) Leaves(element, prefix + "[" + std::to_string(i) + "]", base + i * bits, out);
    return;
  }
  if (tag != DW_TAG_structure_type && tag != DW_TAG_union_type) {
    out.push_back({prefix, base, Udata(&t, DW_AT_byte_size, 0) * 8, false, type});
    return;
  }
  Dwarf_Die child;
  if (dwarf_child(&t, &child) != 0) return;
  do {
    if (dwarf_tag(&child) != DW_TAG_member) continue;
    Dwarf_Die member_type;
    if (!TypeOf(&child, &member_type)) continue;
    uint64_t offset = dwarf_hasattr(&child, DW_AT_data_bit_offset) ? Udata(&child, DW_AT_data_bit_offset, 0)
                                                                   : Udata(&child, DW_AT_data_member_location, 0) * 8;
    const char* name = dwarf_diename(&child);
    std::string path = name ? (prefix.empty() ? "" : prefix + ".") + name : prefix;
    if (dwarf_hasattr(&child, DW_AT_bit_size)) {
      out.push_back({path, base + offset, Udata(&child, DW_AT_bit_size, 0), true, member_type});
      continue;
    }
    Leaves(member_type, path, base + offset, out);
  } while (dwarf_siblingof(&child, &child) == 0);
}

// One member read from the piece that holds it.
MemberFetch MemberFromPiece(const Member& m, const Piece& p) {
  MemberFetch out{m.path, {Fetch::kUnknown, OpsText(p.ops)}, m.bitfield, MemberFetch::kOther};
  if (p.ops.empty()) {
    out.fetch = {Fetch::kNone, "optimized out"};
    return out;
  }
  const uint64_t rel = m.bit_offset - p.bit_offset;
  Dwarf_Die type = m.type;
  const std::string ftype = FetchTypeOf(&type);
  Dwarf_Die peeled = Peeled(m.type);
  const uint64_t bytes = Udata(&peeled, DW_AT_byte_size, 0);
  if (ftype.empty()) {
    out.fetch.text = "a member that is no scalar";
    return out;
  }
  // Bits `from` and up of a register, as many as the member has (a
  // register shifted right has fewer: zeros follow them).
  auto bits = [&](const std::string& reg, uint64_t from) {
    uint64_t width = std::min<uint64_t>(m.bit_size, from < 64 ? 64 - from : 0);
    return "%" + reg + ":b" + std::to_string(width) + "@" + std::to_string(from) + "/" +
           std::to_string(Container(bytes, from + width));
  };
  auto fetched = [&](MemberFetch::Piece piece, std::string text) {
    out.piece = piece;
    out.fetch = {Fetch::kFetched, std::move(text)};
    return out;
  };
  const std::vector<Dwarf_Op>& ops = p.ops;
  if (ops.size() == 1 && IsReg(ops[0])) {
    std::string reg = RegisterName(ops[0].atom - DW_OP_reg0);
    return fetched(MemberFetch::kRegister, !m.bitfield && rel == 0 ? "%" + reg + ":" + ftype : bits(reg, rel));
  }
  if (ops.size() == 2 && ops[1].atom == DW_OP_stack_value)
    if (auto value = Literal(ops[0])) {
      uint64_t v = rel >= 64 ? 0 : *value >> rel;
      if (m.bit_size < 64) v &= (uint64_t{1} << m.bit_size) - 1;
      return fetched(MemberFetch::kConstant, "\\" + std::to_string(v) + ":" + ftype);
    }
  // A register's bits: DW_OP_bregN 0, DW_OP_lit1, DW_OP_and (its bit 0) or
  // DW_OP_bregN 0, DW_OP_constNu S, DW_OP_shr (its bits from S).
  if (ops.size() == 4 && IsBreg(ops[0]) && static_cast<int64_t>(ops[0].number) == 0 &&
      ops[3].atom == DW_OP_stack_value) {
    std::string reg = RegisterName(ops[0].atom - DW_OP_breg0);
    auto operand = Literal(ops[1]);
    if (operand && ops[2].atom == DW_OP_and && *operand == 1 && m.bit_size == 1 && rel == 0)
      return fetched(MemberFetch::kRegisterBit, bits(reg, 0));
    if (operand && ops[2].atom == DW_OP_shr) {
      out.zero_extended = *operand + rel + m.bit_size > 64;
      return fetched(MemberFetch::kRegisterShifted, bits(reg, *operand + rel));
    }
  }
  return out;
}

}  // namespace

std::string RegisterName(unsigned n) {
  static const char* const kNames[] = {"ax", "dx", "cx",  "bx",  "si",  "di",  "bp",  "sp",
                                       "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"};
  return n < 16 ? kNames[n] : "";
}

std::vector<LocationEntry> LocationList(Dwarf_Die* var) {
  std::vector<LocationEntry> out;
  Dwarf_Attribute attr;
  if (!Location(var, &attr)) return out;
  Dwarf_Addr base, start, end;
  Dwarf_Op* expr = nullptr;
  size_t len = 0;
  ptrdiff_t offset = 0;
  while ((offset = dwarf_getlocations(&attr, offset, &base, &start, &end, &expr, &len)) > 0)
    out.push_back({start, end, std::vector<Dwarf_Op>(expr, expr + len)});
  return out;
}

std::optional<std::vector<Dwarf_Op>> LocationAt(Dwarf_Die* var, uint64_t address) {
  std::vector<LocationEntry> entries = LocationList(var);
  // An exprloc: one entry, [0, -1).
  if (entries.size() == 1 && entries[0].start == 0 && entries[0].end == static_cast<uint64_t>(-1))
    return entries[0].ops;
  for (const LocationEntry& e : entries)
    if (e.start == address) return e.ops;
  for (const LocationEntry& e : entries)
    if (address >= e.start && address < e.end) return e.ops;
  return std::nullopt;
}

Dwarf_Die Peeled(Dwarf_Die type) {
  for (int depth = 0; depth < 16; ++depth) {
    int tag = dwarf_tag(&type);
    if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type &&
        tag != DW_TAG_restrict_type && tag != DW_TAG_atomic_type)
      break;
    Dwarf_Die inner;
    if (!TypeOf(&type, &inner)) break;
    type = inner;
  }
  return type;
}

std::string TypeName(Dwarf_Die* type) {
  Dwarf_Die inner;
  bool has_inner = TypeOf(type, &inner);
  auto of_inner = [&] { return has_inner ? TypeName(&inner) : std::string("void"); };
  const char* own = dwarf_diename(type);
  std::string name = own ? own : "";
  switch (dwarf_tag(type)) {
    case DW_TAG_structure_type:
      return "struct " + (name.empty() ? "(anonymous)" : name);
    case DW_TAG_union_type:
      return "union " + (name.empty() ? "(anonymous)" : name);
    case DW_TAG_enumeration_type:
      return "enum " + (name.empty() ? "(anonymous)" : name);
    case DW_TAG_pointer_type:
      return of_inner() + "*";
    case DW_TAG_const_type:
      return "const " + of_inner();
    case DW_TAG_volatile_type:
      return "volatile " + of_inner();
    case DW_TAG_array_type: {
      auto count = ArrayCount(type);
      return of_inner() + "[" + (count ? std::to_string(*count) : "") + "]";
    }
    default:
      return name;
  }
}

std::string TypeNameOf(Dwarf_Die* var) {
  Dwarf_Die type;
  return TypeOf(var, &type) ? TypeName(&type) : "void";
}

std::string FetchTypeOf(Dwarf_Die* type) {
  Dwarf_Die t = Peeled(*type);
  uint64_t bits = Udata(&t, DW_AT_byte_size, 0) * 8;
  switch (dwarf_tag(&t)) {
    case DW_TAG_pointer_type:
      return "x64";
    case DW_TAG_base_type: {
      uint64_t encoding = Udata(&t, DW_AT_encoding, 0);
      if (bits != 8 && bits != 16 && bits != 32 && bits != 64) return "";
      if (encoding == DW_ATE_signed || encoding == DW_ATE_signed_char) return "s" + std::to_string(bits);
      if (encoding == DW_ATE_unsigned || encoding == DW_ATE_unsigned_char || encoding == DW_ATE_boolean)
        return "u" + std::to_string(bits);
      return "";
    }
    default:
      return "";
  }
}

Fetch FetchAt(Dwarf_Die* var, uint64_t address, bool frame_entry) {
  Dwarf_Die type;
  const std::string ftype = TypeOf(var, &type) ? FetchTypeOf(&type) : "";
  Dwarf_Attribute attr;
  if (!Location(var, &attr)) {
    Dwarf_Word value = 0;
    if (dwarf_attr_integrate(var, DW_AT_const_value, &attr) && dwarf_formudata(&attr, &value) == 0 && !ftype.empty())
      return {Fetch::kFetched, "\\" + std::to_string(value) + ":" + ftype};
    return {Fetch::kNone, "no location in the debuginfo"};
  }
  auto ops = LocationAt(var, address);
  if (!ops || ops->empty()) return {Fetch::kNone, "no location here"};
  if (Pieces(*ops)) return {Fetch::kUnknown, "in pieces: " + OpsText(*ops)};
  if (ftype.empty()) return {Fetch::kUnknown, "not a scalar"};
  const std::vector<Dwarf_Op>& o = *ops;
  if (o.size() == 1 && IsReg(o[0])) return {Fetch::kFetched, "%" + RegisterName(o[0].atom - DW_OP_reg0) + ":" + ftype};
  if (o.size() == 2 && o[1].atom == DW_OP_stack_value) {
    if (auto value = Literal(o[0])) return {Fetch::kFetched, "\\" + std::to_string(*value) + ":" + ftype};
    if (auto reg = EntryValueRegister(o[0])) {
      if (frame_entry) return {Fetch::kFetched, "%" + RegisterName(*reg) + ":" + ftype};
      return {Fetch::kNone, "a register's value at the frame's entry (DW_OP_entry_value)"};
    }
  }
  // In memory: at a register plus an offset, loads and offsets after it.
  if (IsBreg(o[0])) {
    std::string base = "%" + RegisterName(o[0].atom - DW_OP_breg0);
    int64_t offset = static_cast<int64_t>(o[0].number);
    for (size_t i = 1; i < o.size(); ++i) {
      if (o[i].atom == DW_OP_deref) {
        base = Signed(offset) + "(" + base + ")";
        offset = 0;
      } else if (o[i].atom == DW_OP_plus_uconst) {
        offset += static_cast<int64_t>(o[i].number);
      } else {
        return {Fetch::kUnknown, OpsText(o)};
      }
    }
    return {Fetch::kFetched, Signed(offset) + "(" + base + "):" + ftype};
  }
  return {Fetch::kUnknown, OpsText(o)};
}

std::optional<std::vector<MemberFetch>> MembersInPieces(Dwarf_Die* var, uint64_t address) {
  auto ops = LocationAt(var, address);
  auto pieces = ops ? Pieces(*ops) : std::nullopt;
  Dwarf_Die type;
  if (!pieces || !TypeOf(var, &type)) return std::nullopt;
  std::vector<Member> members;
  Leaves(type, "", 0, members);
  std::vector<MemberFetch> out;
  for (const Member& m : members) {
    auto holder = std::find_if(pieces->begin(), pieces->end(), [&](const Piece& p) {
      return m.bit_offset >= p.bit_offset && m.bit_offset + m.bit_size <= p.bit_offset + p.bit_size;
    });
    if (holder == pieces->end()) {
      out.push_back({m.path, {Fetch::kUnknown, "a member over two pieces"}, m.bitfield, MemberFetch::kOther});
      continue;
    }
    out.push_back(MemberFromPiece(m, *holder));
  }
  return out;
}

std::string PiecesText(Dwarf_Die* var, uint64_t address) {
  auto ops = LocationAt(var, address);
  auto pieces = ops ? Pieces(*ops) : std::nullopt;
  if (!pieces) return {};
  std::vector<std::string> parts;
  for (const Piece& p : *pieces)
    parts.push_back(std::to_string(p.bit_offset / 8) + "-" + std::to_string((p.bit_offset + p.bit_size) / 8 - 1));
  std::string out = "bytes ";
  for (size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return out;
}

}  // namespace kprobectl::test
