// SPDX-License-Identifier: GPL-2.0-or-later
//
// Pieces (DWARF 5, 2.6.1.2 "Composite Location Descriptions"): the
// expression is cut at each DW_OP_piece N (the next N bytes) or
// DW_OP_bit_piece N, O (the next N bits, O bits into the place); what comes
// before a piece's operation is that piece's location, read as any simple
// location is (SinglePlace), and nothing at all means those bytes are
// optimized out. Bytes past the last piece are unknown too.
//
// The kernel reads one place per fetcharg, so a variable in pieces cannot
// be fetched whole, but each member that lies in one piece can: in memory,
// at that piece's address plus the member's offset in it; in a register,
// as the register's bits where the member is (a bitfield type,
// b<W>@<O>/<C>: the kernel stores the register's low C bits, then keeps W
// of them from bit O; x86-64 keeps a piece in a register's low bytes, so
// a member k bytes into an 8-byte piece is bits 8k and up); a constant, as
// those bits of it. A member across two pieces cannot be read as one
// value, and one in a piece that is optimized out has no value here.
#include "dwarf_pieces.h"

#include <dwarf.h>

#include <algorithm>

#include "dwarf_internal.h"
#include "dwarf_members.h"
#include "dwarf_types.h"
#include "kprobectl/strings.h"

namespace kprobectl::dwarf {

namespace {

std::optional<uint64_t> Literal(const Dwarf_Op& op) {
  if (op.atom >= DW_OP_lit0 && op.atom <= DW_OP_lit31) return op.atom - DW_OP_lit0;
  if (op.atom == DW_OP_const1u || op.atom == DW_OP_const2u || op.atom == DW_OP_constu) return op.number;
  return std::nullopt;
}

// gcc's parts of a register as a piece's value: DW_OP_bregN 0, then
// shifts right (a constant, DW_OP_shr) and masks of low bits (a constant
// 2^k - 1, DW_OP_and), then DW_OP_stack_value. Linux 6.1's do_misc_fixups
// keeps the two halves of a 64-bit address apart as DW_OP_breg0 RAX+0
// (bytes 4-7) and DW_OP_breg0 RAX+0, DW_OP_const1u 32, DW_OP_shr (bytes
// 12-15); copy_from_sockptr_offset's src.is_kernel is DW_OP_breg2 RCX+0,
// DW_OP_lit1, DW_OP_and. The value is register N's bits from `skip`, of
// which `bits` are kept, the others zeros.
struct RegisterPart {
  unsigned reg;
  uint64_t skip = 0;
  uint64_t bits = 64;
};
std::optional<RegisterPart> PartOfRegister(const Dwarf_Op* ops, size_t len) {
  bool breg = len >= 2 && ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31 && ops[0].number == 0;
  if (!breg || ops[len - 1].atom != DW_OP_stack_value || len % 2 != 0) return std::nullopt;
  RegisterPart part{static_cast<unsigned>(ops[0].atom - DW_OP_breg0)};
  for (size_t i = 1; i + 1 < len; i += 2) {
    auto k = Literal(ops[i]);
    if (!k) return std::nullopt;
    if (ops[i + 1].atom == DW_OP_shr && *k < 64) {
      part.skip += *k;
      part.bits = part.bits > *k ? part.bits - *k : 0;
    } else if (ops[i + 1].atom == DW_OP_and && (*k & (*k + 1)) == 0) {
      part.bits = std::min<uint64_t>(part.bits, static_cast<uint64_t>(__builtin_popcountll(*k)));
    } else {
      return std::nullopt;
    }
  }
  return part;
}

bool WholeBytes(uint64_t start, uint64_t bits) { return start % 8 == 0 && bits % 8 == 0; }

// "8-15" or "8" (bytes), or "3-5" (bits) for a piece that is not whole bytes.
std::string Range(uint64_t start, uint64_t bits) {
  uint64_t unit = WholeBytes(start, bits) ? 8 : 1;
  uint64_t first = start / unit, last = (start + bits) / unit - 1;
  return first == last ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(last);
}

std::string Unit(uint64_t start, uint64_t bits) {
  bool one = bits == (WholeBytes(start, bits) ? 8u : 1u);
  return WholeBytes(start, bits) ? (one ? "byte " : "bytes ") : (one ? "bit " : "bits ");
}

// "bytes 8-15", or "bits 3-5".
std::string Span(uint64_t start, uint64_t bits) { return Unit(start, bits) + Range(start, bits); }

// "bytes 0-7 and 8-15", "byte 0, bits 8-11 and 12-15, bytes 2-3": the
// unit said where it changes.
std::string Spans(const std::vector<std::pair<uint64_t, uint64_t>>& spans, const std::vector<std::string>& notes) {
  std::string out;
  for (size_t i = 0; i < spans.size(); ++i) {
    auto [start, bits] = spans[i];
    if (i > 0) out += i + 1 == spans.size() ? " and " : ", ";
    bool same = i > 0 && WholeBytes(start, bits) == WholeBytes(spans[i - 1].first, spans[i - 1].second);
    out += (same ? "" : Unit(start, bits)) + Range(start, bits) + notes[i];
  }
  return out;
}

bool IsRegister(const Place& place) {
  return place.kind == Place::kValue && place.base.root == VariableFetch::kRegister && place.base.derefs.empty() &&
         place.offset == 0;
}

}  // namespace

Result<Place> PiecesPlace(DwarfInfo& info, Dwarf_Attribute* attr, const Dwarf_Op* ops, size_t len,
                          const LocationContext& ctx) {
  auto pieces = std::make_shared<Pieces>();
  pieces->of = ctx.what;
  pieces->size = ctx.size;
  size_t begin = 0;
  uint64_t at = 0;
  bool anywhere = false;
  for (size_t i = 0; i < len; ++i) {
    if (ops[i].atom != DW_OP_piece && ops[i].atom != DW_OP_bit_piece) continue;
    Piece piece;
    bool bits = ops[i].atom == DW_OP_bit_piece;
    piece.bits = bits ? ops[i].number : ops[i].number * 8;
    uint64_t offset = bits ? ops[i].number2 : 0;
    LocationContext inner = ctx;
    inner.what = "the piece of " + ctx.what + " at " + Span(at, piece.bits);
    inner.size = (piece.bits + 7) / 8;
    if (i == begin) {
      piece.kind = Piece::kOptimizedOut;
    } else if (auto part = PartOfRegister(ops + begin, i - begin)) {
      piece.kind = Piece::kPlace;
      piece.place.base.root = VariableFetch::kRegister;
      piece.place.base.dwarf_register = part->reg;
      piece.skip = part->skip + offset;
      piece.zeros_after = part->bits > offset ? part->bits - offset : 0;
      if (piece.zeros_after == 0) {  // nothing of the register: zeros
        piece.place.base.root = VariableFetch::kConstant;
        piece.place.base.constant = 0;
        piece.skip = 0;
      }
    } else if (auto place = SinglePlace(info, attr, ops + begin, i - begin, inner)) {
      piece.kind = Piece::kPlace;
      piece.place = *place;
      piece.skip = offset;
    } else {
      piece.kind = Piece::kUnreadable;
      piece.why = place.error().message;
    }
    anywhere |= piece.kind != Piece::kOptimizedOut;
    at += piece.bits;
    pieces->list.push_back(std::move(piece));
    begin = i + 1;
  }
  if (!anywhere) return Fail(ctx.what + " is optimized out at this address");
  Place place;
  place.kind = Place::kPieces;
  place.pieces = std::move(pieces);
  return place;
}

Result<PieceBits> PieceAt(const Pieces& pieces, uint64_t start, uint64_t size, const std::string& what) {
  uint64_t lo = 0;
  std::vector<std::pair<uint64_t, uint64_t>> across;
  for (const Piece& piece : pieces.list) {
    uint64_t hi = lo + piece.bits;
    bool overlaps = start < hi && start + size > lo;
    if (overlaps) across.emplace_back(lo, piece.bits);
    if (!overlaps || start < lo || start + size > hi) {
      lo = hi;
      continue;
    }
    if (piece.kind == Piece::kOptimizedOut)
      return Fail(what + " is in " + Span(lo, piece.bits) + " of " + pieces.of + ", which are optimized out here");
    if (piece.kind == Piece::kUnreadable) return Fail(what + " cannot be read here: " + piece.why);
    uint64_t skip = start - lo + piece.skip;
    PieceBits out{piece.place, 0, size};
    const Place& place = piece.place;
    if (place.kind == Place::kMemory) {
      out.place.offset += static_cast<int64_t>(skip / 8);
      out.skip = skip % 8;
    } else if (place.kind == Place::kValue && place.base.root == VariableFetch::kConstant) {
      auto bits = static_cast<uint64_t>(place.base.constant);
      bits = skip >= 64 ? 0 : bits >> skip;
      if (size < 64) bits &= (uint64_t{1} << size) - 1;
      out.place.base.constant = static_cast<int64_t>(bits);
    } else if (IsRegister(place)) {
      out.skip = skip;
      // A register's part: past its bits, zeros.
      uint64_t rel = start - lo;
      if (piece.zeros_after && rel >= piece.zeros_after) {
        out.place.base.root = VariableFetch::kConstant;
        out.place.base.constant = 0;
        out.skip = 0;
      } else if (piece.zeros_after) {
        out.width = std::min(size, piece.zeros_after - rel);
      }
    } else if (skip != 0) {
      return Fail(what + " is part of a value computed from a register (" + Span(lo, piece.bits) + " of " + pieces.of +
                  "), which the kernel cannot take apart");
    }
    return out;
  }
  if (across.size() > 1)
    return Fail(what + " lies across " + std::to_string(across.size()) + " pieces of " + pieces.of + " (" +
                Spans(across, std::vector<std::string>(across.size())) +
                ", each in a place of its own: DW_OP_piece), which the kernel cannot read as one");
  return Fail(what + " is in " + Span(start, size) + " of " + pieces.of +
              ", which its location leaves out here (optimized out)");
}

std::string DescribePieces(const Pieces& pieces) {
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  std::vector<std::string> notes;
  uint64_t lo = 0;
  for (const Piece& piece : pieces.list) {
    spans.emplace_back(lo, piece.bits);
    notes.emplace_back(piece.kind == Piece::kOptimizedOut ? " optimized out" : "");
    lo += piece.bits;
  }
  return Spans(spans, notes);
}

Result<FetchType> RegisterBits(uint64_t width, uint64_t skip, const std::string& what) {
  if (auto type = ValueBitsFetch(width, skip)) return *type;
  return Fail(what + " lies past the 64 bits of the register that holds it");
}

namespace {

constexpr int kMaxDepth = 8;
constexpr uint64_t kMaxElements = 16;

void Collect(const Walked& w, const std::string& path, std::vector<MemberFetch>& out, int depth);

// The named members of `aggregate` (the type `w` leads to, or an anonymous
// struct or union inside it, whose members are found from `w` by name).
void Members(const Walked& w, Dwarf_Die aggregate, const std::string& path, std::vector<MemberFetch>& out, int depth) {
  Dwarf_Die child;
  if (depth > kMaxDepth || dwarf_child(&aggregate, &child) != 0) return;
  do {
    if (dwarf_tag(&child) != DW_TAG_member) continue;
    std::string member = DieName(&child);
    Dwarf_Die type;
    if (member.empty()) {
      Dwarf_Die inner = TypeOf(&child, &type) ? PeelType(type) : child;
      int tag = dwarf_tag(&inner);
      if (tag == DW_TAG_structure_type || tag == DW_TAG_union_type) Members(w, inner, path, out, depth + 1);
      continue;
    }
    Walked m = w;
    auto walked = WalkMember(m, {ArgAccessor::kDot, member, 0, 0});
    if (!walked)
      out.push_back({path + "." + member, "", std::unexpected(walked.error())});
    else
      Collect(m, path + "." + member, out, depth + 1);
  } while (dwarf_siblingof(&child, &child) == 0);
}

void Collect(const Walked& w, const std::string& path, std::vector<MemberFetch>& out, int depth) {
  Dwarf_Die t = PeelType(w.type);
  int tag = dwarf_tag(&t);
  if (tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_class_type) {
    Members(w, t, path, out, depth);
    return;
  }
  Dwarf_Die child;
  if (tag == DW_TAG_array_type && dwarf_child(&t, &child) == 0 && dwarf_tag(&child) == DW_TAG_subrange_type) {
    auto whole = Read(w, false);
    uint64_t count = ArrayCount(&child).value_or(0);
    if (whole || count == 0 || count > kMaxElements) {
      out.push_back({path, "", std::move(whole)});
      return;
    }
    for (uint64_t i = 0; i < count; ++i) {
      Walked e = w;
      auto index = static_cast<int64_t>(i);
      std::string element = path + "[" + std::to_string(i) + "]";
      if (auto walked = WalkIndex(e, {ArgAccessor::kIndex, "", index, 0}); !walked)
        out.push_back({element, "", std::unexpected(walked.error())});
      else
        Collect(e, element, out, depth + 1);
    }
    return;
  }
  out.push_back({path, "", Read(w, false)});
}

}  // namespace

std::vector<MemberFetch> ReadableMembers(const Walked& w) {
  std::vector<MemberFetch> out;
  Collect(w, w.what.substr(1, w.what.size() - 2), out, 0);
  for (MemberFetch& m : out) {
    m.name = IdentifierOf(m.path);
    if (m.fetch) m.fetch->name = m.name;
  }
  return out;
}

}  // namespace kprobectl::dwarf
