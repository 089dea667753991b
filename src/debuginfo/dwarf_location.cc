// SPDX-License-Identifier: GPL-2.0-or-later
//
// Location expressions to places the kernel can read.
//
// Why only these operations: the kernel's fetchargs can read a register,
// read memory at a register (or a fetched value) plus an offset, read memory
// at a static address, and use a constant. So a location is usable when it
// says "in register N" (DW_OP_regN), "in memory at register N + k"
// (DW_OP_bregN, DW_OP_fbreg through the frame base), "at address A"
// (DW_OP_addr), or "the constant c" (DW_OP_lit/const + DW_OP_stack_value,
// DW_OP_implicit_value). DW_OP_entry_value(DW_OP_regN) is the register's
// value when the frame's function was entered, which is the register
// itself only at that function's first instruction (not at an inlined
// copy's entry). A value that is a register plus an offset
// (DW_OP_bregN k; DW_OP_stack_value) cannot be read as a number but can be
// dereferenced (it is usually a pointer): Place keeps the pending offset.
// After a register or the frame base, loads and constant offsets
// (DW_OP_deref, DW_OP_plus_uconst, a constant and DW_OP_plus/minus) are
// what nested fetchargs do, +c(+k(%reg)): they are followed too. Anything
// else (arithmetic on two registers, comparisons) the kernel cannot
// compute, and the variable is left out, not read from its first
// operation alone.
//
// Location lists (DWARF 4 .debug_loc and DWARF 5 .debug_loclists alike) are
// resolved by dwarf_getlocation_addr() to the entry that covers the probe
// address; the frame base DW_OP_call_frame_cfa is computed from the CFI at
// that address (.eh_frame first, as user binaries have it; .debug_frame for
// kernels), which gives the CFA as a register plus an offset.
#include "dwarf_location.h"

#include <dwarf.h>

#include <cstring>

#include "dwarf_internal.h"
#include "dwarf_pieces.h"
#include "kprobectl/strings.h"

namespace kprobectl::dwarf {

namespace {

std::optional<std::pair<unsigned, int64_t>> BaseRegister(const Dwarf_Op& op) {
  if (op.atom >= DW_OP_breg0 && op.atom <= DW_OP_breg31)
    return std::pair<unsigned, int64_t>{op.atom - DW_OP_breg0, static_cast<int64_t>(op.number)};
  if (op.atom == DW_OP_bregx)
    return std::pair<unsigned, int64_t>{static_cast<unsigned>(op.number), static_cast<int64_t>(op.number2)};
  return std::nullopt;
}

std::optional<unsigned> Register(const Dwarf_Op& op) {
  if (op.atom >= DW_OP_reg0 && op.atom <= DW_OP_reg31) return op.atom - DW_OP_reg0;
  if (op.atom == DW_OP_regx) return static_cast<unsigned>(op.number);
  return std::nullopt;
}

std::optional<int64_t> Constant(const Dwarf_Op& op) {
  if (op.atom >= DW_OP_lit0 && op.atom <= DW_OP_lit31) return op.atom - DW_OP_lit0;
  switch (op.atom) {
    case DW_OP_const1u:
    case DW_OP_const2u:
    case DW_OP_const4u:
    case DW_OP_const8u:
    case DW_OP_constu:
      return static_cast<int64_t>(op.number);
    case DW_OP_const1s:
    case DW_OP_const2s:
    case DW_OP_const4s:
    case DW_OP_const8s:
    case DW_OP_consts:
      return static_cast<int64_t>(op.number);
    default:
      return std::nullopt;
  }
}

std::string OpName(unsigned atom) {
  const char* names[] = {"DW_OP_deref", "DW_OP_plus", "DW_OP_minus", "DW_OP_mul",  "DW_OP_and", "DW_OP_or",
                         "DW_OP_xor",   "DW_OP_shl",  "DW_OP_shr",   "DW_OP_shra", "DW_OP_neg", "DW_OP_not",
                         "DW_OP_eq",    "DW_OP_ne",   "DW_OP_lt",    "DW_OP_gt",   "DW_OP_le",  "DW_OP_ge"};
  unsigned codes[] = {DW_OP_deref, DW_OP_plus, DW_OP_minus, DW_OP_mul,  DW_OP_and, DW_OP_or,
                      DW_OP_xor,   DW_OP_shl,  DW_OP_shr,   DW_OP_shra, DW_OP_neg, DW_OP_not,
                      DW_OP_eq,    DW_OP_ne,   DW_OP_lt,    DW_OP_gt,   DW_OP_le,  DW_OP_ge};
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; ++i)
    if (codes[i] == atom) return names[i];
  return "operation " + Hex(atom);
}

Result<Place> Unsupported(const LocationContext& ctx, const Dwarf_Op& op) {
  return Fail(ctx.what + " is in a place the kernel cannot read (its location uses " + OpName(op.atom) + ")",
              "fetch it at another line, or fetch what it is computed from");
}

// The value of DW_OP_bregN k: register N plus k.
Place RegisterStart(const Dwarf_Op& op) {
  auto breg = BaseRegister(op);
  Place place;
  place.base.root = VariableFetch::kRegister;
  place.base.dwarf_register = breg->first;
  place.offset = breg->second;
  return place;
}

// The canonical frame address plus `offset`, as a register plus an offset.
Result<Place> CfaStart(DwarfInfo& info, int64_t offset, const LocationContext& ctx) {
  auto cfa = KP_TRY(info.CanonicalFrameAddress(ctx.address));
  Place place;
  place.base.root = VariableFetch::kRegister;
  place.base.dwarf_register = cfa.first;
  place.offset = cfa.second + offset;
  return place;
}

// The value of DW_OP_fbreg k: the frame base (the CFA, a register plus an
// offset, or a register's value) plus k.
Result<Place> FrameBaseStart(DwarfInfo& info, const Dwarf_Op& op, const LocationContext& ctx) {
  if (!ctx.frame_base) return Fail(ctx.what + " is relative to a frame base its function does not have");
  Dwarf_Op* fb = nullptr;
  size_t fb_len = 0;
  int n = dwarf_getlocation_addr(ctx.frame_base, ctx.address, &fb, &fb_len, 1);
  if (n <= 0 || fb_len != 1) return Fail("the frame base of " + ctx.what + " is unknown at this address");
  if (fb[0].atom == DW_OP_call_frame_cfa) return CfaStart(info, static_cast<int64_t>(op.number), ctx);
  Place place;
  place.base.root = VariableFetch::kRegister;
  if (auto breg = BaseRegister(fb[0])) {
    place.base.dwarf_register = breg->first;
    place.offset = breg->second + static_cast<int64_t>(op.number);
  } else if (auto reg = Register(fb[0])) {
    place.base.dwarf_register = *reg;
    place.offset = static_cast<int64_t>(op.number);
  } else {
    return Unsupported(ctx, fb[0]);
  }
  return place;
}

// The address arithmetic the kernel's fetchargs can follow, after a start
// value (a register or the frame base, plus an offset): loads (DW_OP_deref)
// and constant offsets (DW_OP_plus_uconst; a constant then DW_OP_plus or
// DW_OP_minus). With DW_OP_stack_value last the result is the object's
// value, else the address it is at. gcc writes such chains for a pointer
// kept in a struct the code reaches (bpf_map_mmap_close's map: DW_OP_breg5
// RDI+112, DW_OP_deref, DW_OP_plus_uconst 0xc8, memory at *(%di+112)+200,
// the fetch +200(+112(%di))) and for container_of() (ahash_save_req's tfm:
// *(%di+32) - 0x48, whose members can be read).
Result<Place> AddressArithmetic(Place value, const Dwarf_Op* ops, size_t len, const LocationContext& ctx) {
  for (size_t i = 0; i < len; ++i) {
    const Dwarf_Op& op = ops[i];
    if (op.atom == DW_OP_stack_value && i + 1 == len) return value;
    if (op.atom == DW_OP_deref) {
      Place memory = KP_TRY(Pointee(value, 0, ctx.what));
      Place loaded;
      loaded.base = KP_TRY(ReadPlace(memory, ctx.what));
      value = loaded;
    } else if (op.atom == DW_OP_plus_uconst) {
      value.offset += static_cast<int64_t>(op.number);
    } else if (auto c = Constant(op);
               c && i + 1 < len && (ops[i + 1].atom == DW_OP_plus || ops[i + 1].atom == DW_OP_minus)) {
      value.offset += ops[i + 1].atom == DW_OP_plus ? *c : -*c;
      ++i;
    } else {
      // A constant is an operand: the operation after it is what cannot be done.
      return Unsupported(ctx, Constant(op) && i + 1 < len ? ops[i + 1] : op);
    }
  }
  return Pointee(value, 0, ctx.what);  // no DW_OP_stack_value: the object is at that address
}

}  // namespace

Result<std::pair<unsigned, int64_t>> DwarfInfo::CanonicalFrameAddress(uint64_t address) {
  // .debug_frame through the index's FDE table when it has one: libdw then
  // reads one FDE, not every FDE before it (dwarf_frames.cc).
  Dwarf_CFI* one = nullptr;
  if (auto fde = index_ && elf_ ? index_->FrameFor(address) : std::nullopt) {
    auto& mini = frames_[*fde];
    if (!mini) mini = MakeMiniCfi(elf_, *fde);
    if (mini) one = mini->cfi;
  }
  for (Dwarf_CFI* cfi : {cfi_eh_, one, cfi_debug_}) {
    if (!cfi) continue;
    Dwarf_Frame* frame = nullptr;
    if (dwarf_cfi_addrframe(cfi, address, &frame) != 0) continue;
    Dwarf_Op* ops = nullptr;
    size_t nops = 0;
    std::optional<std::pair<unsigned, int64_t>> cfa;
    if (dwarf_frame_cfa(frame, &ops, &nops) == 0 && nops == 1) cfa = BaseRegister(ops[0]);
    free(frame);
    if (cfa) return *cfa;
  }
  return Fail("no call frame information (.eh_frame or .debug_frame) covers " + Hex(address) +
              ", so the frame base of its variables is unknown");
}

Result<Place> LocationToPlace(DwarfInfo& info, Dwarf_Attribute* attr, const Dwarf_Op* ops, size_t len,
                              const LocationContext& ctx) {
  for (size_t i = 0; i < len; ++i)
    if (ops[i].atom == DW_OP_piece || ops[i].atom == DW_OP_bit_piece) {
      // A first piece that holds the whole value is the value's location.
      if (i > 0 && ops[i].atom == DW_OP_piece && ops[i].number >= ctx.size) return SinglePlace(info, attr, ops, i, ctx);
      return PiecesPlace(info, attr, ops, len, ctx);
    }
  return SinglePlace(info, attr, ops, len, ctx);
}

Result<Place> SinglePlace(DwarfInfo& info, Dwarf_Attribute* attr, const Dwarf_Op* ops, size_t len,
                          const LocationContext& ctx) {
  Place place;
  if (len == 0) return Fail(ctx.what + " is optimized out at this address");
  const Dwarf_Op& op = ops[0];
  bool stack_value = len >= 2 && ops[len - 1].atom == DW_OP_stack_value;
  if (auto reg = Register(op); reg && len == 1) {
    place.base.root = VariableFetch::kRegister;
    place.base.dwarf_register = *reg;
    place.kind = Place::kValue;
    return place;
  }
  if (BaseRegister(op) || op.atom == DW_OP_fbreg || op.atom == DW_OP_call_frame_cfa) {
    // (Go puts an argument on the stack at DW_OP_call_frame_cfa, plus an offset.)
    Place start = KP_TRY(op.atom == DW_OP_fbreg            ? FrameBaseStart(info, op, ctx)
                         : op.atom == DW_OP_call_frame_cfa ? CfaStart(info, 0, ctx)
                                                           : RegisterStart(op));
    return AddressArithmetic(start, ops + 1, len - 1, ctx);
  }
  if (op.atom == DW_OP_addr && len == 1) {
    place.base.root = VariableFetch::kStatic;
    place.base.address = op.number;
    place.kind = Place::kMemory;
    return place;
  }
  if (auto c = Constant(op); c && len == 2 && stack_value) {
    place.base.root = VariableFetch::kConstant;
    place.base.constant = *c;
    place.kind = Place::kValue;
    return place;
  }
  if (op.atom == DW_OP_implicit_value && len == 1) {
    Dwarf_Block block;
    if (dwarf_getlocation_implicit_value(attr, &op, &block) != 0 || block.length > 8)
      return Fail(ctx.what + " is a constant wider than 64 bits");
    uint64_t value = 0;
    std::memcpy(&value, block.data, block.length);
    place.base.root = VariableFetch::kConstant;
    place.base.constant = static_cast<int64_t>(value);
    place.kind = Place::kValue;
    return place;
  }
  if ((op.atom == DW_OP_entry_value || op.atom == DW_OP_GNU_entry_value) && len == 2 && stack_value) {
    Dwarf_Attribute inner;
    Dwarf_Op* inner_ops = nullptr;
    size_t inner_len = 0;
    if (dwarf_getlocation_attr(attr, &op, &inner) == 0 && dwarf_getlocation(&inner, &inner_ops, &inner_len) == 0 &&
        inner_len == 1 && Register(inner_ops[0])) {
      if (!ctx.function_entry) {
        std::string fn = ctx.frame ? FunctionName(ctx.frame) : std::string();
        if (fn.empty()) fn = "the function";
        return Fail(ctx.what + " is only known as the value a register had when " + fn +
                        " was entered (DW_OP_entry_value), which it may no longer hold here",
                    "see what " + fn + "'s entry holds: kprobectl vars " + fn);
      }
      place.base.root = VariableFetch::kRegister;
      place.base.dwarf_register = *Register(inner_ops[0]);
      place.kind = Place::kValue;
      return place;
    }
  }
  for (size_t i = 0; i < len; ++i)
    if (!Register(ops[i]) && !BaseRegister(ops[i]) && !Constant(ops[i]) && ops[i].atom != DW_OP_stack_value)
      return Unsupported(ctx, ops[i]);
  return Unsupported(ctx, op);
}

Result<VariableFetch> ReadPlace(const Place& place, const std::string& what) {
  if (place.kind == Place::kPieces) return Fail(what + " is split over several places here (DW_OP_piece)");
  if (place.kind == Place::kMemory) {
    VariableFetch f = place.base;
    f.derefs.push_back(place.offset);
    return f;
  }
  if (place.offset != 0)
    return Fail(
        what + " is computed (" + (place.base.derefs.empty() ? "a register" : "a value read from memory") + " plus " +
            std::to_string(place.offset) + ") and cannot be fetched as a value",
        "dereference it instead, e.g. " + (what.size() > 1 && what.front() == '\'' && what.back() == '\''
                                               ? what.substr(0, what.size() - 1) + "->MEMBER'"  // 'r' -> 'r->MEMBER'
                                               : what + "->MEMBER"));
  return place.base;
}

Result<Place> Pointee(const Place& pointer, int64_t offset, const std::string& what) {
  if (pointer.kind == Place::kPieces) return Fail(what + " is split over several places here (DW_OP_piece)");
  if (pointer.kind == Place::kValue) {
    if (pointer.base.root == VariableFetch::kConstant) {
      Place p;
      p.base.root = VariableFetch::kStatic;
      p.base.address = static_cast<uint64_t>(pointer.base.constant) + static_cast<uint64_t>(pointer.offset);
      p.kind = Place::kMemory;
      p.offset = offset;
      return p;
    }
    Place p = pointer;
    p.kind = Place::kMemory;
    p.offset += offset;
    return p;
  }
  Place p;
  p.base = KP_TRY(ReadPlace(pointer, what));
  p.kind = Place::kMemory;
  p.offset = offset;
  return p;
}

}  // namespace kprobectl::dwarf
