// SPDX-License-Identifier: GPL-2.0-or-later
//
// Variables at a probe address: found through the scopes that contain it
// (lexical blocks, inlined copies, the function, the CU, then globals of
// other CUs), located with location lists, then walked through members,
// array elements and pointers to a kernel fetch (dwarf_members.cc).
#include <dwarf.h>

#include <algorithm>
#include <set>
#include <vector>

#include "dwarf_internal.h"
#include "dwarf_location.h"
#include "dwarf_members.h"
#include "dwarf_types.h"
#include "kprobectl/strings.h"

namespace kprobectl::dwarf {

namespace {

// The scopes that contain an address, innermost first, ending with the CU.
// Built by descending from the out-of-line function rather than with
// dwarf_getscopes(): inside an inlined copy, libdw's chain continues with
// the inlined function's abstract definition, which loses the caller's
// locals that are just as live there. (The chain of an address is found
// once: a search of the CU's top-level DIEs is the costly part.)
//
// A probe names one function (`at.die_offset`): the scopes start at its
// innermost block, not inside a copy of another function inlined into it
// that begins at the probe's address. Such a copy begins at a later view
// of that address than the probed function's code there: at the probe it
// has not begun, and its variables are not yet set. (gcc 12,
// set_memory_wb+0x33: _set_memory_wb inlined at view 0,
// change_page_attr_clear inside it at view 2, each with a parameter
// 'addr'; the probe's 'addr' is _set_memory_wb's %di, not
// change_page_attr_clear's frame slot.) A copy that began before the
// probe's address is under way there, and its scopes stay (use_clamp+N in
// the middle of an inlined clampi reads clampi's variables, as perf does).
struct Scopes {
  std::vector<Dwarf_Die> chain;
  Dwarf_Die* dies = nullptr;
  int count = 0;

  Scopes(DwarfInfo& info, Dwarf_Die* cu, Dwarf_Die* fn, const DwarfAddress& at)
      : chain(WithinProbed(info.ScopeChain(cu, at.address), fn, at)) {
    dies = chain.data();
    count = static_cast<int>(chain.size());
  }

  // `chain` without the outermost copy inlined into the probed function's
  // scope that begins at the probe's address, and the scopes inside it
  // (all of `chain` when the probed function is not in it).
  static std::vector<Dwarf_Die> WithinProbed(std::vector<Dwarf_Die> chain, Dwarf_Die* fn, const DwarfAddress& at) {
    auto probed =
        std::find_if(chain.begin(), chain.end(), [&](Dwarf_Die die) { return dwarf_dieoffset(&die) == at.die_offset; });
    if (probed == chain.end()) return WithFolded(std::move(chain), fn, at);
    // At the probed function's own entry nothing of it has run: a copy
    // that begins later (its code scheduled before its entry_pc: gcc 12,
    // ZSTD_createDCtx_advanced in ZSTD_createDCtx at ZSTD_decompress+24)
    // has not begun either.
    uint64_t probed_entry = 0;
    bool at_entry = EntryAddress(fn, &probed_entry) && probed_entry == at.address;
    auto begins_here = std::find_if(std::make_reverse_iterator(probed), chain.rend(), [&](Dwarf_Die die) {
      uint64_t entry = 0;
      return dwarf_tag(&die) == DW_TAG_inlined_subroutine && EntryAddress(&die, &entry) &&
             (entry == at.address || (at_entry && entry > at.address));
    });
    chain.erase(chain.begin(), begins_here.base());
    return chain;
  }

  // An inlined copy that begins at P with an empty range, [P, P) (all its
  // code folded into its caller's: gcc 12, css_next_descendant_pre's first
  // call in cgroup_save_control+5; or its code elsewhere: hrtimer_cancel
  // in do_nanosleep+56), holds no address at P, yet it is the probed
  // function there: the scopes are its own, then those that hold it, so
  // that its parameters, not the caller's, are the probe's (located for
  // P's first view, or not at all). Scopes at P that do not hold it are
  // not its.
  static std::vector<Dwarf_Die> WithFolded(std::vector<Dwarf_Die> chain, Dwarf_Die* fn, const DwarfAddress& at) {
    uint64_t entry = 0;
    bool begins_here = dwarf_tag(fn) == DW_TAG_inlined_subroutine && EntryAddress(fn, &entry) && entry == at.address;
    if (chain.empty() || !begins_here) return chain;
    size_t innermost_holder = chain.size();
    while (innermost_holder > 0 && Holds(&chain[innermost_holder - 1], fn)) --innermost_holder;
    chain.erase(chain.begin(), chain.begin() + static_cast<ptrdiff_t>(innermost_holder));
    chain.push_back(*fn);
    std::rotate(chain.rbegin(), chain.rbegin() + 1, chain.rend());
    return chain;
  }

  // Whether `die` lies inside `scope`'s subtree, when `scope`'s parent
  // holds it: after `scope`, before its next sibling (if any).
  static bool Holds(Dwarf_Die* scope, Dwarf_Die* die) {
    if (dwarf_dieoffset(scope) >= dwarf_dieoffset(die)) return false;
    Dwarf_Die next = *scope;
    return dwarf_siblingof(&next, &next) != 0 || dwarf_dieoffset(die) < dwarf_dieoffset(&next);
  }
};

// The out-of-line function whose code holds the address (the frame): the
// outermost subprogram of the scopes, none when a folded copy's scopes hold
// only itself and the CU. Its DW_AT_frame_base is the frame base, not the
// innermost function's: for an inlined copy, libdw's scopes would continue
// with the abstract definition, not the caller that holds the code. At its
// first instruction, and only there, DW_OP_entry_value(DW_OP_regN) is
// register N itself: an inlined copy's entry is not enough (gcc 12,
// opipe_prep's flags in do_splice+205 is do_splice's entry %r9, long
// overwritten there).
Dwarf_Die* OutOfLine(const Scopes& scopes) {
  for (int i = scopes.count - 1; i >= 0; --i)
    if (dwarf_tag(&scopes.dies[i]) == DW_TAG_subprogram) return &scopes.dies[i];
  return nullptr;
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
  return Fail("no variable '" + name + "' at " + Where(at), VarsHint(at));
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
  LocationContext ctx;
  ctx.what = what;
  ctx.address = at.address;
  ctx.frame = OutOfLine(scopes);
  uint64_t frame_entry = 0;
  ctx.function_entry = ctx.frame && EntryAddress(ctx.frame, &frame_entry) && frame_entry == at.address;
  Dwarf_Attribute frame_base_storage;
  ctx.frame_base = ctx.frame ? dwarf_attr(ctx.frame, DW_AT_frame_base, &frame_base_storage) : nullptr;
  ctx.size = size;
  Dwarf_Attribute loc;
  if (dwarf_attr(var, DW_AT_location, &loc)) {
    Dwarf_Op* ops = nullptr;
    size_t len = 0;
    int n = LocationAt(&loc, at.address, &ops, &len);
    if (n < 0) return Fail("cannot read the location of " + what + ": " + LastError());
    if (n == 0) {
      // Where else it could be fetched: a scan of the function's lines,
      // worth it only for a message someone reads.
      std::string elsewhere = explain ? WhereAvailable(info, at, &loc) : std::string();
      return Fail(
          "variable " + what + " has no location at " + Where(at) + " (optimized out there)",
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

// `var` (found in `scopes`) at `at`, through the accessors of `expr`.
Result<VariableFetch> FetchDie(DwarfInfo& info, Scopes& scopes, Dwarf_Die* var, const DwarfAddress& at,
                               const ArgExpr& expr, bool want_string, bool explain) {
  Walked w;
  w.name = expr.name;
  w.what = "'" + expr.name + "'";
  if (!TypeOf(var, &w.type)) return Fail(w.what + " has no type in the debuginfo");
  w.place = KP_TRY(VariablePlace(info, scopes, var, at, w.what, ByteSize(&w.type), explain));
  for (const ArgAccessor& acc : expr.accessors)
    KP_TRY_VOID(acc.kind == ArgAccessor::kIndex ? WalkIndex(w, acc) : WalkMember(w, acc));
  return Read(w, want_string);
}

bool Aggregate(Dwarf_Die* var) {
  Dwarf_Die type;
  if (!TypeOf(var, &type)) return false;
  Dwarf_Die peeled = PeelType(type);
  int tag = dwarf_tag(&peeled);
  return tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_class_type ||
         tag == DW_TAG_array_type;
}

ArgExpr ByName(Dwarf_Die* var) {
  ArgExpr expr;
  expr.kind = ArgKind::kVariable;
  expr.name = DieName(var);
  return expr;
}

// Available means: kprobectl can fetch it here, not merely that DWARF has
// some location for it. A struct, union or array cannot be fetched whole,
// but its members and elements can where its place is known (not split
// over registers by DW_OP_piece, not a constant).
bool Available(DwarfInfo& info, Scopes& scopes, Dwarf_Die* var, const DwarfAddress& at) {
  if (!Aggregate(var)) return FetchDie(info, scopes, var, at, ByName(var), false, false).has_value();
  Dwarf_Die type;
  uint64_t size = TypeOf(var, &type) ? ByteSize(&type) : 0;
  auto place = VariablePlace(info, scopes, var, at, "'" + DieName(var) + "'", size, false);
  return place && place->base.root != VariableFetch::kConstant;
}

}  // namespace

Result<VariableFetch> DwarfInfo::FetchVariable(const DwarfAddress& at, const ArgExpr& expr, bool want_string,
                                               bool explain) {
  ReadyDwarf dwarf = Ready();
  Dwarf_Die fn = dwarf.Die(at.die_offset);
  Dwarf_Die cu = dwarf.CuOf(&fn);
  Scopes scopes(*this, &cu, &fn, at);
  if (scopes.count <= 1) return Fail("no function contains " + Hex(at.address) + " in the debuginfo");
  Dwarf_Die var = KP_TRY(FindVariable(*this, scopes, at, expr.name));
  return FetchDie(*this, scopes, &var, at, expr, want_string, explain);
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
    first = probed ? *probed : *innermost;
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
  Scopes scopes(*this, &cu, &fn, at);
  std::vector<VariableFetch> out;
  // Each variable listed is fetched as that DIE: a look-up by its name
  // could find another of the name.
  for (Dwarf_Die& var : VisibleVariables(scopes, params_only, at.die_offset)) {
    ArgExpr expr = ByName(&var);
    auto fetch = FetchDie(*this, scopes, &var, at, expr, false, false);
    if (fetch)
      out.push_back(*fetch);
    else if (skipped)
      skipped->push_back(expr.name + ": " + fetch.error().message);
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
  if (!found)
    if (auto nested = NestedFunctionAt(cu, address)) {
      child = *nested;
      found = true;
    }
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
  Scopes scopes(*this, &cu, &fn, at);
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
    info.available = Available(*this, scopes, &var, at);
    Dwarf_Attribute loc;
    if (dwarf_attr(&var, DW_AT_location, &loc)) {
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
