// SPDX-License-Identifier: GPL-2.0-or-later
//
// Variables at a probe address: found through the scopes that contain it
// (lexical blocks, inlined copies, the function, the CU, then globals of
// other CUs), located with location lists, then walked through members,
// array elements and pointers to a kernel fetch (dwarf_members.cc).
#include <dwarf.h>

#include <set>
#include <vector>

#include "dwarf_go.h"
#include "dwarf_internal.h"
#include "dwarf_location.h"
#include "dwarf_members.h"
#include "dwarf_pieces.h"
#include "dwarf_scopes.h"
#include "dwarf_types.h"
#include "kprobectl/strings.h"

namespace kprobectl::dwarf {

namespace {

// "process:3 (0x13c5)", or "records.c:45 (0x13bf)" for a line outside the function's own text.
std::string Where(DwarfInfo& info, const DwarfAddress& address) {
  const DwarfAddress at = info.WithLine(address);
  bool own = at.at.file == at.decl.file && at.at.line >= at.decl.line;
  std::string line = own ? at.function + ":" + std::to_string(at.at.line - at.decl.line)
                         : at.at.file.substr(at.at.file.rfind('/') + 1) + ":" + std::to_string(at.at.line);
  return line + " (" + Hex(at.address) + ")";
}

std::string VarsHint(DwarfInfo& info, const DwarfAddress& address) {
  const DwarfAddress at = info.WithLine(address);
  bool own = at.at.file == at.decl.file && at.at.line >= at.decl.line;
  return "see the variables there with 'kprobectl vars " +
         (own ? at.function + ":" + std::to_string(at.at.line - at.decl.line) : Hex(at.address)) + "'";
}

// Lines of the function where `attr`'s location list has an entry: "compute:3 compute:4".
std::string WhereAvailable(DwarfInfo& info, const DwarfAddress& at, Dwarf_Attribute* attr) {
  ReadyDwarf dwarf = info.Ready();
  Dwarf_Die fn = dwarf.Die(at.die_offset);
  Dwarf_Die cu = dwarf.CuOf(&fn);
  auto fn_ranges = Ranges(&fn);
  std::vector<AddressRange> have;
  Dwarf_Addr base, start, end;
  Dwarf_Op* expr;
  size_t len;
  ptrdiff_t offset = 0;
  // A register's value at the frame's entry is no place after the entry.
  while ((offset = dwarf_getlocations(attr, offset, &base, &start, &end, &expr, &len)) > 0)
    if (len > 0 && expr[0].atom != DW_OP_entry_value && expr[0].atom != DW_OP_GNU_entry_value)
      have.push_back({start, end});
  std::set<uint64_t> lines;
  for (uint64_t line : info.OwnCodeLines(&cu, at.decl.file, at.decl.line, fn_ranges))
    for (const auto& hit : info.LineAddresses(&cu, at.decl.file, line, &fn_ranges))
      for (const AddressRange& r : have)
        if (hit.address >= r.start && hit.address < r.end) lines.insert(line);
  std::vector<std::string> parts;
  std::string file = at.decl.file.substr(at.decl.file.rfind('/') + 1);
  for (uint64_t l : lines) {
    if (parts.size() == 8) break;
    // A line before the declaration (a macro's or a split part's) has no
    // place relative to the function: say where it is in its file.
    parts.push_back(l >= at.decl.line ? at.function + ":" + std::to_string(l - at.decl.line)
                                      : file + ":" + std::to_string(l));
  }
  return Join(parts, " ");
}

// The location expression in force when a probe at `address` fires. The
// probe runs before the instruction there, at the address's first "view":
// so an entry that starts exactly there wins, in list order, even a
// zero-length one (gcc's [a, a) entries say where a value is at view 0 of
// a, before the statements that share a's first instruction). Otherwise
// the entry that covers the address. Returns 0 when none does.
int LocationAt(Dwarf_Attribute* attr, uint64_t address, Dwarf_Op** ops, size_t* len) {
  Dwarf_Addr base, start, end;
  Dwarf_Op* expr;
  size_t exprlen;
  ptrdiff_t offset = 0;
  while ((offset = dwarf_getlocations(attr, offset, &base, &start, &end, &expr, &exprlen)) > 0) {
    if (start == address && end != static_cast<Dwarf_Addr>(-1)) {
      *ops = expr;
      *len = exprlen;
      return 1;
    }
  }
  return dwarf_getlocation_addr(attr, address, ops, len, 1);
}

// Looks up a variable by name at an address: scopes first, then the
// definitions of globals in other CUs.
Result<Dwarf_Die> FindVariable(DwarfInfo& info, Scopes& scopes, const DwarfAddress& at, const std::string& name) {
  Dwarf_Die var;
  int found = dwarf_getscopevar(scopes.dies, scopes.count, name.c_str(), 0, nullptr, 0, 0, &var);
  if (found >= 0 && dwarf_hasattr(&var, DW_AT_location)) return var;
  if (found >= 0 &&
      (dwarf_hasattr_integrate(&var, DW_AT_const_value) || (dwarf_tag(&scopes.dies[found]) != DW_TAG_compile_unit)))
    return var;
  if (auto global = info.Global(name)) return *global;
  if (found >= 0) return var;
  return Fail("no variable '" + name + "' at " + Where(info, at), VarsHint(info, at));
}

}  // namespace

Result<VariableFetch> DwarfInfo::Fetch(const DwarfAddress& at, const ArgExpr& expr, bool want_string) {
  return FetchVariable(at, expr, want_string, true);
}

namespace {

// A variable's place at `at`: from its location (list), or its constant
// value. `explain` adds where else it has one when it has none here.
Result<Place> VariablePlace(DwarfInfo& info, Scopes& scopes, Dwarf_Die* var, const DwarfAddress& at,
                            const std::string& what, uint64_t size, bool explain) {
  if (const AbiValue* placed = AbiValueAt(at, var)) return AbiValuePlace(*placed, what, size);
  // At a Go function's first instruction only its arguments hold values:
  // its frame, where -N -l code keeps the rest, is not made yet.
  if (at.go_entry)
    return Fail(what + " has no value yet at the entry of " + at.function + ", where only its arguments have one",
                "probe a line of it (kprobectl line " + at.function + ")");
  LocationContext ctx;
  ctx.what = what;
  ctx.address = at.address;
  ctx.frame = OutOfLine(scopes);
  uint64_t frame_entry = 0;
  ctx.function_entry = ctx.frame && EntryAddress(ctx.frame, &frame_entry) && frame_entry == at.address;
  Dwarf_Attribute frame_base_storage;
  ctx.frame_base = ctx.frame ? LocationAttr(ctx.frame, DW_AT_frame_base, &frame_base_storage) : nullptr;
  ctx.size = size;
  Dwarf_Attribute loc;
  if (LocationAttr(var, DW_AT_location, &loc)) {
    Dwarf_Op* ops = nullptr;
    size_t len = 0;
    int n = LocationAt(&loc, at.address, &ops, &len);
    if (n < 0) return Fail("cannot read the location of " + what + ": " + LastError());
    if (n == 0) {
      // Where else it could be fetched: a scan of the function's lines,
      // worth it only for a message someone reads.
      std::string elsewhere = explain ? WhereAvailable(info, at, &loc) : std::string();
      return Fail(
          "variable " + what + " has no location at " + Where(info, at) + " (optimized out there)",
          elsewhere.empty() ? "it has no location anywhere in " + at.function : "it can be fetched at " + elsewhere);
    }
    return LocationToPlace(info, &loc, ops, len, ctx);
  }
  if (Dwarf_Attribute cv; dwarf_attr_integrate(var, DW_AT_const_value, &cv)) {
    Dwarf_Sword value = 0;
    Dwarf_Word uvalue = 0;
    if (dwarf_formsdata(&cv, &value) != 0 && dwarf_formudata(&cv, &uvalue) == 0)
      value = static_cast<Dwarf_Sword>(uvalue);
    Place place;
    place.base.root = VariableFetch::kConstant;
    place.base.constant = value;
    return place;
  }
  return Fail("variable " + what + " is optimized out (no location in the debuginfo)",
              "fetch it where it is computed, or from what it is computed from");
}

// The walk from `var` (found in `scopes`) at `at`, before any accessor.
Result<Walked> StartWalk(DwarfInfo& info, Scopes& scopes, Dwarf_Die* var, const DwarfAddress& at,
                         const std::string& name, bool explain) {
  Walked w;
  w.name = name;
  w.what = "'" + name + "'";
  w.dot_follows_pointers = info.LanguageAt(at) != Debuginfo::Language::kOther;
  if (!TypeOf(var, &w.type)) return Fail(w.what + " has no type in the debuginfo");
  w.place = KP_TRY(VariablePlace(info, scopes, var, at, w.what, ByteSize(&w.type), explain));
  return w;
}

bool IsAggregateType(Dwarf_Die type) {
  Dwarf_Die peeled = PeelType(type);
  int tag = dwarf_tag(&peeled);
  return tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_class_type ||
         tag == DW_TAG_array_type;
}

// What cannot be read of a variable in pieces: the variable itself said
// to be in pieces, and for a struct or array the members that can be read
// instead.
Error InPieces(Walked w, const Error& error) {
  Error out = error;
  if (w.place.offset == 0 && ByteSize(&w.type) >= w.place.pieces->size)
    out.message = w.what + " is split over several places here (" + DescribePieces(*w.place.pieces) +
                  ": DW_OP_piece), and the kernel fetches one place per argument";
  if (!IsAggregateType(w.type)) return out;
  std::vector<std::string> readable;
  for (const MemberFetch& m : ReadableMembers(w))
    if (m.fetch) readable.push_back(m.path);
  Dwarf_Die t = PeelType(w.type);
  std::string parts = dwarf_tag(&t) == DW_TAG_array_type ? "elements" : "members";
  out.hint = readable.empty() ? "none of its " + parts + " can be read here either"
                              : "fetch its " + parts + ": " + Join(readable, " ");
  return out;
}

// `var` (found in `scopes`) at `at`, walked through the accessors of `expr`.
Result<Walked> WalkDie(DwarfInfo& info, Scopes& scopes, Dwarf_Die* var, const DwarfAddress& at, const ArgExpr& expr,
                       bool explain) {
  Walked w = KP_TRY(StartWalk(info, scopes, var, at, expr.name, explain));
  for (const ArgAccessor& acc : expr.accessors)
    KP_TRY_VOID(acc.kind == ArgAccessor::kIndex ? WalkIndex(w, acc) : WalkMember(w, acc));
  return w;
}

// `var` (found in `scopes`) at `at`, through the accessors of `expr`.
Result<VariableFetch> FetchDie(DwarfInfo& info, Scopes& scopes, Dwarf_Die* var, const DwarfAddress& at,
                               const ArgExpr& expr, bool want_string, bool explain) {
  Walked w = KP_TRY(WalkDie(info, scopes, var, at, expr, explain));
  auto fetch = Read(w, want_string);
  if (!fetch && w.place.kind == Place::kPieces) return std::unexpected(InPieces(w, fetch.error()));
  return fetch;
}

bool Aggregate(Dwarf_Die* var) {
  Dwarf_Die type;
  return TypeOf(var, &type) && IsAggregateType(type);
}

ArgExpr ByName(Dwarf_Die* var) {
  ArgExpr expr;
  expr.kind = ArgKind::kVariable;
  expr.name = DieName(var);
  return expr;
}

// What $params and $vars take member by member, walked to: an aggregate
// split over several places (DW_OP_piece) here, and a struct or union
// parameter the ABI passed by value in two registers' worth of bytes (9 to
// 16) that is in memory here (passed on the stack, when the registers ran
// out: Linux 6.1's do_ip_getsockopt optlen), as the same struct in two
// registers is, and as BTF reads both. Other aggregates in memory are left
// out (their members can be fetched by name).
std::optional<Walked> ByMembers(DwarfInfo& info, Scopes& scopes, Dwarf_Die* var, const DwarfAddress& at) {
  if (!Aggregate(var)) return std::nullopt;
  auto w = StartWalk(info, scopes, var, at, DieName(var), false);
  if (!w) return std::nullopt;
  if (w->place.kind == Place::kPieces) return *w;
  Dwarf_Die t = PeelType(w->type);
  int tag = dwarf_tag(&t);
  uint64_t size = ByteSize(&t);
  bool by_value = dwarf_tag(var) == DW_TAG_formal_parameter && tag != DW_TAG_array_type && size > 8 && size <= 16;
  if (by_value && w->place.kind == Place::kMemory) return *w;
  return std::nullopt;
}

// Available means: kprobectl can fetch it here, not merely that DWARF has
// some location for it. A struct, union or array cannot be fetched whole,
// but its members and elements can where its place is known (in memory or
// in a register, not a constant; in pieces, those members that lie in
// one: VariableInfo says which).
void SetAvailable(DwarfInfo& info, Scopes& scopes, Dwarf_Die* var, const DwarfAddress& at, VariableInfo& out) {
  if (!Aggregate(var)) {
    out.available = FetchDie(info, scopes, var, at, ByName(var), false, false).has_value();
    return;
  }
  auto w = StartWalk(info, scopes, var, at, DieName(var), false);
  if (w && w->place.kind == Place::kPieces) {
    out.in_pieces = true;
    for (const MemberFetch& m : ReadableMembers(*w))
      (m.fetch ? out.piece_members : out.pieces_refused).push_back(m.path);
    out.available = !out.piece_members.empty();
    return;
  }
  out.available = w && w->place.base.root != VariableFetch::kConstant;
}

// `use(scopes, var)` on the variable `name` as the code at `at` sees it.
template <typename Use>
auto OnVariable(DwarfInfo& info, ReadyDwarf& dwarf, const DwarfAddress& at, const std::string& name, Use use)
    -> decltype(use(std::declval<Scopes&>(), std::declval<Dwarf_Die*>())) {
  Dwarf_Die fn = dwarf.Die(at.die_offset);
  Dwarf_Die cu = dwarf.CuOf(&fn);
  Scopes scopes(info, &cu, &fn, at);
  if (scopes.count <= 1) return Fail("no function contains " + Hex(at.address) + " in the debuginfo");
  Dwarf_Die var = KP_TRY(FindVariable(info, scopes, at, name));
  return use(scopes, &var);
}

}  // namespace

Result<VariableFetch> DwarfInfo::FetchVariable(const DwarfAddress& at, const ArgExpr& expr, bool want_string,
                                               bool explain) {
  ReadyDwarf dwarf = Ready();
  return OnVariable(*this, dwarf, at, expr.name, [&](Scopes& scopes, Dwarf_Die* var) {
    return FetchDie(*this, scopes, var, at, expr, want_string, explain);
  });
}

Result<std::string> DwarfInfo::TypeNameOf(const DwarfAddress& at, const ArgExpr& expr) {
  ReadyDwarf dwarf = Ready();
  return OnVariable(*this, dwarf, at, expr.name, [&](Scopes& scopes, Dwarf_Die* var) -> Result<std::string> {
    Walked w = KP_TRY(WalkDie(*this, scopes, var, at, expr, false));
    Dwarf_Die underlying = PeelType(w.type);
    return TypeName(&underlying);
  });
}

Result<std::vector<VariableFetch>> DwarfInfo::FetchAll(const DwarfAddress& at, bool params_only,
                                                       std::vector<std::string>* skipped) {
  ReadyDwarf dwarf = Ready();
  Dwarf_Die fn = dwarf.Die(at.die_offset);
  Dwarf_Die cu = dwarf.CuOf(&fn);
  Scopes scopes(*this, &cu, &fn, at);
  std::vector<VariableFetch> out;
  // Each variable listed is fetched as that DIE: a look-up by its name
  // could find another of the name.
  for (Dwarf_Die& var : VisibleVariables(scopes, params_only, dwarf_dieoffset(&fn))) {
    // A struct split over several places, or passed by value: its members.
    const std::string name = DieName(&var);
    if (auto w = ByMembers(*this, scopes, &var, at)) {
      for (MemberFetch& m : ReadableMembers(*w))
        if (m.fetch) {
          m.fetch->variable = name;
          out.push_back(std::move(*m.fetch));
        } else if (skipped) {
          skipped->push_back(m.path + ": " + m.fetch.error().message);
        }
      continue;
    }
    ArgExpr expr = ByName(&var);
    auto fetch = FetchDie(*this, scopes, &var, at, expr, false, false);
    if (fetch) {
      fetch->variable = name;
      out.push_back(*fetch);
    } else if (skipped) {
      skipped->push_back(expr.name + ": " + fetch.error().message);
    }
  }
  return out;
}

Result<std::vector<Debuginfo::Visible>> DwarfInfo::VisibleAt(const DwarfAddress& at, bool params_only) {
  ReadyDwarf dwarf = Ready();
  Dwarf_Die fn = dwarf.Die(at.die_offset);
  Dwarf_Die cu = dwarf.CuOf(&fn);
  Scopes scopes(*this, &cu, &fn, at);
  std::vector<Visible> out;
  for (Dwarf_Die& var : VisibleVariables(scopes, params_only, dwarf_dieoffset(&fn))) {
    Dwarf_Die type;
    std::string type_name = "void";
    if (TypeOf(&var, &type)) {
      Dwarf_Die underlying = PeelType(type);
      type_name = TypeName(&underlying);
    }
    out.push_back({DieName(&var), type_name});
  }
  return out;
}

Result<std::optional<FetchType>> DwarfInfo::ReturnType(const DwarfAddress& at) {
  Dwarf_Die fn = Ready().Die(at.die_offset);
  Dwarf_Die type;
  if (!TypeOf(&fn, &type)) return std::nullopt;
  Dwarf_Die base = PeelType(type);
  Dwarf_Attribute attr;
  Dwarf_Word encoding = 0;
  if (dwarf_tag(&base) == DW_TAG_base_type &&
      dwarf_formudata(dwarf_attr(&base, DW_AT_encoding, &attr), &encoding) == 0 &&
      (encoding == DW_ATE_float || encoding == DW_ATE_complex_float))
    return Fail(at.function + " returns a " + TypeName(&base) +
                    ", in a floating-point register, which the kernel cannot fetch ($retval reads the integer "
                    "return register)",
                "record the value where the caller keeps it after the call");
  auto fetch_type = ScalarFetchType(&type, "the return value");
  return fetch_type ? std::optional<FetchType>(*fetch_type) : std::nullopt;
}

Result<std::vector<VariableInfo>> DwarfInfo::Variables(const DwarfAddress& at, bool externs) {
  ReadyDwarf dwarf = Ready();
  Dwarf_Die fn = dwarf.Die(at.die_offset);
  Dwarf_Die cu = dwarf.CuOf(&fn);
  Scopes scopes(*this, &cu, &fn, at);
  std::vector<Dwarf_Die> vars = VisibleVariables(scopes, false, dwarf_dieoffset(&fn));
  size_t locals = vars.size();
  if (externs) {
    Dwarf_Die child;
    if (dwarf_child(&cu, &child) == 0) do {
        if (dwarf_tag(&child) == DW_TAG_variable && dwarf_hasattr(&child, DW_AT_location)) vars.push_back(child);
      } while (dwarf_siblingof(&child, &child) == 0);
  }
  std::vector<VariableInfo> out;
  for (Dwarf_Die& var : vars) {
    VariableInfo info;
    info.name = DieName(&var);
    Dwarf_Die type;
    info.c_type = TypeOf(&var, &type) ? TypeName(&type) : "void";
    if (info.c_type != "void") {
      Dwarf_Die underlying = PeelType(type);
      info.underlying_type = TypeName(&underlying);
    }
    info.parameter = dwarf_tag(&var) == DW_TAG_formal_parameter;
    SetAvailable(*this, scopes, &var, at, info);
    Dwarf_Attribute loc;
    if (LocationAttr(&var, DW_AT_location, &loc)) {
      Dwarf_Addr base, start, end;
      Dwarf_Op* expr;
      size_t exprlen;
      ptrdiff_t offset = 0;
      while ((offset = dwarf_getlocations(&loc, offset, &base, &start, &end, &expr, &exprlen)) > 0)
        if (exprlen > 0) info.ranges.push_back({start, end});
    }
    out.push_back(std::move(info));
  }
  for (size_t i = locals; i < out.size(); ++i) out[i].external = true;
  return out;
}

}  // namespace kprobectl::dwarf
