// SPDX-License-Identifier: GPL-2.0-or-later
//
// Variables at a probe address: found through the scopes that contain it
// (lexical blocks, inlined copies, the function, the CU, then globals of
// other CUs), located with location lists, and walked through members,
// array elements and pointers to a kernel fetch.
#include <dwarf.h>

#include <algorithm>
#include <set>
#include <vector>

#include "dwarf_internal.h"
#include "dwarf_location.h"
#include "dwarf_types.h"
#include "kprobectl/strings.h"

namespace kprobectl::dwarf {

namespace {

// The scopes that contain an address, innermost first, ending with the CU.
// Built by descending from the out-of-line function rather than with
// dwarf_getscopes(): inside an inlined copy, libdw's chain continues with
// the inlined function's abstract definition, which loses the caller's
// locals that are just as live there.
// The scopes at an address, innermost first, ending with the CU (found once
// per address: a search of the CU's top-level DIEs is the costly part).
struct Scopes {
  std::vector<Dwarf_Die> chain;
  Dwarf_Die* dies = nullptr;
  int count = 0;

  Scopes(DwarfInfo& info, Dwarf_Die* cu, uint64_t address) : chain(info.ScopeChain(cu, address)) {
    dies = chain.data();
    count = static_cast<int>(chain.size());
  }
};

// The DW_AT_frame_base of the out-of-line function whose code holds the
// address: the outermost subprogram of the scopes. Not the innermost one: for
// an inlined copy, libdw's scopes would continue with the abstract
// definition, not the caller that holds the code.
Dwarf_Attribute* FrameBase(const Scopes& scopes, Dwarf_Attribute* storage) {
  if (scopes.count < 2) return nullptr;
  return dwarf_attr(&scopes.dies[scopes.count - 2], DW_AT_frame_base, storage);
}

// "process:3 (0x13c5)", or "records.c:45 (0x13bf)" for a line outside the function's own text.
std::string Where(const DwarfAddress& at) {
  bool own = at.at.file == at.decl.file && at.at.line >= at.decl.line;
  std::string line = own ? at.function + ":" + std::to_string(at.at.line - at.decl.line)
                         : at.at.file.substr(at.at.file.rfind('/') + 1) + ":" + std::to_string(at.at.line);
  return line + " (" + Hex(at.address) + ")";
}

std::string VarsHint(const DwarfAddress& at) {
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
  while ((offset = dwarf_getlocations(attr, offset, &base, &start, &end, &expr, &len)) > 0)
    if (len > 0) have.push_back({start, end});
  std::set<uint64_t> lines;
  for (uint64_t line : info.CodeLines(&cu, at.decl.file, &fn_ranges))
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

// A member by name, looking inside anonymous structs and unions too.
std::optional<Member> FindMember(Dwarf_Die* aggregate, const std::string& name) {
  Dwarf_Die child;
  if (dwarf_child(aggregate, &child) != 0) return std::nullopt;
  do {
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

// The kernel's b<width>@<offset>/<container> for a bitfield member, and the
// byte offset of its container from the member's enclosing object.
Result<std::pair<FetchType, int64_t>> Bitfield(Dwarf_Die* member, int64_t member_offset, uint64_t type_size) {
  Dwarf_Attribute attr;
  Dwarf_Word bit_size = 0, value = 0;
  dwarf_formudata(dwarf_attr(member, DW_AT_bit_size, &attr), &bit_size);
  uint64_t bit_start;  // from the start of the enclosing object, little-endian
  if (dwarf_attr(member, DW_AT_data_bit_offset, &attr) && dwarf_formudata(&attr, &value) == 0) {
    bit_start = value;
  } else {
    // DWARF 2/3: DW_AT_bit_offset counts from the most significant bit of
    // a storage unit of DW_AT_byte_size at DW_AT_data_member_location.
    Dwarf_Word byte_size = type_size, bit_offset = 0;
    if (dwarf_attr(member, DW_AT_byte_size, &attr)) dwarf_formudata(&attr, &byte_size);
    dwarf_formudata(dwarf_attr(member, DW_AT_bit_offset, &attr), &bit_offset);
    bit_start = static_cast<uint64_t>(member_offset) * 8 + byte_size * 8 - bit_offset - bit_size;
    member_offset = 0;
  }
  bit_start += static_cast<uint64_t>(member_offset) * 8;
  for (uint64_t container : {type_size * 8, uint64_t{64}}) {
    if (container != 8 && container != 16 && container != 32 && container != 64) continue;
    uint64_t container_byte = (bit_start / container) * (container / 8);
    uint64_t offset = bit_start - container_byte * 8;
    if (offset + bit_size <= container)
      return std::pair<FetchType, int64_t>{
          FetchType::Bitfield(static_cast<unsigned>(bit_size), static_cast<unsigned>(offset),
                              static_cast<unsigned>(container)),
          static_cast<int64_t>(container_byte)};
  }
  return Fail("a bitfield of " + std::to_string(bit_size) + " bits that no 64-bit container holds");
}

// Looks up a variable by name at an address: scopes first, then the
// definitions of globals in other CUs.
Result<Dwarf_Die> FindVariable(DwarfInfo& info, Scopes& scopes, const DwarfAddress& at, const std::string& name) {
  Dwarf_Die var;
  int found = dwarf_getscopevar(scopes.dies, scopes.count, name.c_str(), 0, nullptr, 0, 0, &var);
  if (found >= 0 && dwarf_hasattr(&var, DW_AT_location)) return var;
  if (found >= 0 && (dwarf_hasattr_integrate(&var, DW_AT_const_value) ||
                     (dwarf_tag(&scopes.dies[found]) != DW_TAG_compile_unit)))
    return var;
  if (auto global = info.Global(name)) return *global;
  if (found >= 0) return var;
  return Fail("no variable '" + name + "' at " + Where(at), VarsHint(at));
}

}  // namespace

Result<VariableFetch> DwarfInfo::Fetch(const DwarfAddress& at, const ArgExpr& expr, bool want_string) {
  return FetchVariable(at, expr, want_string, true);
}

Result<VariableFetch> DwarfInfo::FetchVariable(const DwarfAddress& at, const ArgExpr& expr, bool want_string,
                                               bool explain) {
  ReadyDwarf dwarf = Ready();
  Dwarf_Die fn = dwarf.Die(at.die_offset);
  Dwarf_Die cu = dwarf.CuOf(&fn);
  Scopes scopes(*this, &cu, at.address);
  if (scopes.count <= 1) return Fail("no function contains " + Hex(at.address) + " in the debuginfo");
  Dwarf_Die var = KP_TRY(FindVariable(*this, scopes, at, expr.name));
  std::string what = "'" + expr.name + "'";

  Dwarf_Die type;
  if (!TypeOf(&var, &type)) return Fail(what + " has no type in the debuginfo");
  LocationContext ctx;
  ctx.what = what;
  ctx.address = at.address;
  ctx.function_entry = at.entry;
  Dwarf_Attribute frame_base_storage;
  ctx.frame_base = FrameBase(scopes, &frame_base_storage);
  ctx.size = ByteSize(&type);

  Place place;
  Dwarf_Attribute loc;
  if (dwarf_attr(&var, DW_AT_location, &loc)) {
    Dwarf_Op* ops = nullptr;
    size_t len = 0;
    int n = LocationAt(&loc, at.address, &ops, &len);
    if (n < 0) return Fail("cannot read the location of " + what + ": " + LastError());
    if (n == 0) {
      // Where else it could be fetched: a scan of the function's lines,
      // worth it only for a message someone reads.
      std::string elsewhere = explain ? WhereAvailable(*this, at, &loc) : std::string();
      return Fail("variable " + what + " has no location at " + Where(at) + " (optimized out there)",
                  elsewhere.empty() ? "it has no location anywhere in " + at.function
                                    : "it can be fetched at " + elsewhere);
    }
    place = KP_TRY(LocationToPlace(*this, &loc, ops, len, ctx));
  } else if (Dwarf_Attribute cv; dwarf_attr_integrate(&var, DW_AT_const_value, &cv)) {
    Dwarf_Sword value = 0;
    Dwarf_Word uvalue = 0;
    if (dwarf_formsdata(&cv, &value) != 0 && dwarf_formudata(&cv, &uvalue) == 0) value = static_cast<Dwarf_Sword>(uvalue);
    place.base.root = VariableFetch::kConstant;
    place.base.constant = value;
  } else {
    return Fail("variable " + what + " is optimized out (no location in the debuginfo)",
                "fetch it where it is computed, or from what it is computed from");
  }

  std::string name = expr.name;
  std::optional<std::pair<FetchType, int64_t>> bitfield;
  for (const ArgAccessor& acc : expr.accessors) {
    Dwarf_Die t = PeelType(type);
    int tag = dwarf_tag(&t);
    if (acc.kind == ArgAccessor::kIndex) {
      Dwarf_Die elem;
      if (tag == DW_TAG_array_type && TypeOf(&t, &elem)) {
        if (place.kind != Place::kMemory) return Fail(what + " is an array the kernel cannot index here");
        place.offset += acc.index * static_cast<int64_t>(ByteSize(&elem));
      } else if (tag == DW_TAG_pointer_type && TypeOf(&t, &elem)) {
        place = KP_TRY(Pointee(place, acc.index * static_cast<int64_t>(ByteSize(&elem)), what));
      } else {
        return Fail(what + " (" + TypeName(&type) + ") is neither an array nor a pointer, so [" +
                    std::to_string(acc.index) + "] means nothing");
      }
      type = elem;
      what = what.substr(0, what.size() - 1) + "[" + std::to_string(acc.index) + "]'";
      continue;
    }
    Dwarf_Die aggregate = t;
    bool arrow = acc.kind == ArgAccessor::kArrow;
    if (arrow) {
      if (tag != DW_TAG_pointer_type)
        return Fail(what + " (" + TypeName(&type) + ") is not a pointer", "use '.' for its members: " +
                                                                              what.substr(1, what.size() - 2) + "." + acc.member);
      Dwarf_Die pointee;
      if (!TypeOf(&t, &pointee)) return Fail(what + " is a void pointer; it has no members");
      aggregate = PeelType(pointee);
    } else if (tag == DW_TAG_pointer_type) {
      return Fail(what + " is a pointer (" + TypeName(&type) + ")",
                  "use '->' for what it points to: " + what.substr(1, what.size() - 2) + "->" + acc.member);
    }
    int agg_tag = dwarf_tag(&aggregate);
    if (agg_tag != DW_TAG_structure_type && agg_tag != DW_TAG_union_type && agg_tag != DW_TAG_class_type)
      return Fail(what + " points to a " + TypeName(&aggregate) + ", which has no members");
    if (!dwarf_hasattr(&aggregate, DW_AT_byte_size))
      return Fail(TypeName(&aggregate) + " is declared but not defined in this debuginfo, so its members are unknown");
    auto member = FindMember(&aggregate, acc.member);
    if (!member) {
      auto names = MemberNames(&aggregate);
      return Fail(TypeName(&aggregate) + " has no member '" + acc.member + "'",
                  names.empty() ? "" : "its members: " + Join(names, ", "));
    }
    if (bitfield) return Fail(what + " is a bitfield; it has no members");
    if (arrow) {
      place = KP_TRY(Pointee(place, member->offset, what));
    } else {
      if (place.kind != Place::kMemory) return Fail(what + " is kept in registers here; its members cannot be read");
      place.offset += member->offset;
    }
    if (!TypeOf(&member->die, &type)) return Fail("member '" + acc.member + "' has no type");
    if (dwarf_hasattr(&member->die, DW_AT_bit_size)) {
      auto bits = KP_TRY(Bitfield(&member->die, 0, ByteSize(&type)));
      place.offset += bits.second;
      bitfield = bits;
    }
    name = acc.member;
    what = "'" + what.substr(1, what.size() - 2) + (arrow ? "->" : ".") + acc.member + "'";
  }

  VariableFetch fetch;
  Dwarf_Die t = PeelType(type);
  int tag = dwarf_tag(&t);
  Dwarf_Die elem;
  bool has_elem = TypeOf(&t, &elem);
  if (bitfield) {
    fetch = KP_TRY(ReadPlace(place, what));
    fetch.type = bitfield->first;
  } else if (want_string) {
    if (tag == DW_TAG_array_type && has_elem && IsCharType(&elem) && place.kind == Place::kMemory) {
      fetch = place.base;  // the string starts at the array's own address
      fetch.derefs.push_back(place.offset);
    } else if (tag == DW_TAG_pointer_type && (!has_elem || IsCharType(&elem))) {
      fetch = KP_TRY(ReadPlace(place, what));
      fetch.derefs.push_back(0);
    } else {
      return Fail(what + " (" + TypeName(&type) + ") cannot be read as a string: only char arrays and char "
                  "pointers can");
    }
    fetch.type = FetchType::Of(FetchType::kString);
  } else if (tag == DW_TAG_array_type && has_elem) {
    Dwarf_Die child;
    uint64_t count = 0;
    if (dwarf_child(&t, &child) == 0 && dwarf_tag(&child) == DW_TAG_subrange_type) count = ArrayCount(&child).value_or(0);
    if (place.kind != Place::kMemory) return Fail(what + " is an array the kernel cannot read here");
    fetch = place.base;
    fetch.derefs.push_back(place.offset);
    if (IsCharType(&elem)) {
      fetch.type = FetchType::Of(FetchType::kString);
    } else {
      if (count == 0 || count > 64)
        return Fail(what + " is an array of " + std::to_string(count) + " elements; the kernel reads 1 to 64",
                    "fetch elements, " + what.substr(1, what.size() - 2) + "[0]");
      fetch.type = KP_TRY(ScalarFetchType(&elem, what + "'s elements")).ArrayOf(static_cast<unsigned>(count));
    }
  } else {
    fetch = KP_TRY(ReadPlace(place, what));
    fetch.type = KP_TRY(ScalarFetchType(&type, what));
  }
  fetch.name = name;
  fetch.c_type = TypeName(&type);
  return fetch;
}

namespace {

// Variables and parameters live at the address, outer scopes first, up to
// and including the out-of-line function: inside an inlined copy, its
// caller's locals are as live as the copy's own parameters. Parameters
// only ($params): those of the function probed (`function`, a subprogram or
// an inlined copy), at every copy, not its callers'.
std::vector<Dwarf_Die> VisibleVariables(Scopes& scopes, bool params_only, Dwarf_Off function) {
  int first = 0;
  if (params_only) {
    // The probed function's scope, else the innermost function's.
    std::optional<int> probed, innermost;
    for (int i = 0; i < scopes.count; ++i) {
      int tag = dwarf_tag(&scopes.dies[i]);
      if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine) continue;
      if (!innermost) innermost = i;
      if (dwarf_dieoffset(&scopes.dies[i]) == function) probed = i;
    }
    if (!probed && !innermost) return {};
    first = probed.value_or(*innermost);
  }
  std::vector<Dwarf_Die> out;
  std::set<std::string> names;
  for (int i = first; i < scopes.count; ++i) {
    Dwarf_Die child;
    int tag = dwarf_tag(&scopes.dies[i]);
    if (dwarf_child(&scopes.dies[i], &child) == 0) {
      std::vector<Dwarf_Die> here;
      do {
        int t = dwarf_tag(&child);
        if (t != DW_TAG_formal_parameter && (params_only || t != DW_TAG_variable)) continue;
        std::string name = DieName(&child);
        if (name.empty() || names.contains(name) || dwarf_hasattr(&child, DW_AT_declaration)) continue;
        names.insert(name);
        here.push_back(child);
      } while (dwarf_siblingof(&child, &child) == 0);
      out.insert(out.begin(), here.begin(), here.end());  // outer scopes first
    }
    if (tag == DW_TAG_subprogram || params_only) break;
  }
  return out;
}

}  // namespace

Result<std::vector<VariableFetch>> DwarfInfo::FetchAll(const DwarfAddress& at, bool params_only,
                                                       std::vector<std::string>* skipped) {
  ReadyDwarf dwarf = Ready();
  Dwarf_Die fn = dwarf.Die(at.die_offset);
  Dwarf_Die cu = dwarf.CuOf(&fn);
  Scopes scopes(*this, &cu, at.address);
  std::vector<VariableFetch> out;
  for (Dwarf_Die& var : VisibleVariables(scopes, params_only, at.die_offset)) {
    ArgExpr expr;
    expr.kind = ArgKind::kVariable;
    expr.name = DieName(&var);
    auto fetch = FetchVariable(at, expr, false, false);
    if (fetch) out.push_back(*fetch);
    else if (skipped) skipped->push_back(expr.name + ": " + fetch.error().message);
  }
  return out;
}

std::optional<FetchType> DwarfInfo::ReturnType(const DwarfAddress& at) {
  Dwarf_Die fn = Ready().Die(at.die_offset);
  Dwarf_Die type;
  if (!TypeOf(&fn, &type)) return std::nullopt;
  auto fetch_type = ScalarFetchType(&type, "the return value");
  return fetch_type ? std::optional<FetchType>(*fetch_type) : std::nullopt;
}

const std::vector<Dwarf_Die>& DwarfInfo::ScopeChain(Dwarf_Die* cu, uint64_t address) {
  auto [it, fresh] = scope_chains_.try_emplace(address);
  std::vector<Dwarf_Die>& chain = it->second;
  if (!fresh) return chain;
  Dwarf_Die child;
  bool found = false;
  if (dwarf_child(cu, &child) == 0) do {
      if (dwarf_tag(&child) == DW_TAG_subprogram && dwarf_haspc(&child, address) == 1) {
        found = true;
        break;
      }
    } while (dwarf_siblingof(&child, &child) == 0);
  if (found) {
    chain.push_back(child);
    for (bool deeper = true; deeper;) {
      deeper = false;
      Dwarf_Die inner;
      if (dwarf_child(&chain.back(), &inner) != 0) break;
      do {
        int tag = dwarf_tag(&inner);
        if ((tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine) && dwarf_haspc(&inner, address) == 1) {
          chain.push_back(inner);
          deeper = true;
          break;
        }
      } while (dwarf_siblingof(&inner, &inner) == 0);
    }
  }
  std::reverse(chain.begin(), chain.end());
  chain.push_back(*cu);
  return chain;
}

Result<std::vector<VariableInfo>> DwarfInfo::Variables(const DwarfAddress& at, bool externs) {
  ReadyDwarf dwarf = Ready();
  Dwarf_Die fn = dwarf.Die(at.die_offset);
  Dwarf_Die cu = dwarf.CuOf(&fn);
  Scopes scopes(*this, &cu, at.address);
  std::vector<Dwarf_Die> vars = VisibleVariables(scopes, false, at.die_offset);
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
    info.parameter = dwarf_tag(&var) == DW_TAG_formal_parameter;
    // Available means: kprobectl can fetch it here, not merely that DWARF
    // has some location for it.
    ArgExpr by_name;
    by_name.kind = ArgKind::kVariable;
    by_name.name = info.name;
    auto type_ok = [&] {
      Dwarf_Die t;
      if (!TypeOf(&var, &t)) return false;
      Dwarf_Die peeled = PeelType(t);
      int tag = dwarf_tag(&peeled);
      return tag != DW_TAG_structure_type && tag != DW_TAG_union_type && tag != DW_TAG_class_type;
    };
    // Structs are listed when they have a location: their members can be fetched.
    auto fetched = FetchVariable(at, by_name, false, false);
    Dwarf_Attribute loc;
    if (dwarf_attr(&var, DW_AT_location, &loc)) {
      Dwarf_Op* ops;
      size_t len;
      info.available = type_ok() ? fetched.has_value() : LocationAt(&loc, at.address, &ops, &len) > 0 && len > 0;
      Dwarf_Addr base, start, end;
      Dwarf_Op* expr;
      size_t exprlen;
      ptrdiff_t offset = 0;
      while ((offset = dwarf_getlocations(&loc, offset, &base, &start, &end, &expr, &exprlen)) > 0)
        if (exprlen > 0) info.ranges.push_back({start, end});
    } else {
      info.available = fetched.has_value();
    }
    out.push_back(std::move(info));
  }
  for (size_t i = locals; i < out.size(); ++i) out[i].external = true;
  return out;
}

}  // namespace kprobectl::dwarf
