// SPDX-License-Identifier: GPL-2.0-or-later
//
// The DWARF source: every kind of probe point (lines, patterns, files,
// inlined copies, clones) and variables, from the debuginfo stage's
// DwarfAddress and VariableFetch, for a user binary or a kernel image.
// Kernel targets are KASLR-safe: SYMBOL+OFF when the symbol's name is
// unique in the image, _text+OFF (arm64: _stext+OFF) when several functions
// share it.
#include <algorithm>

#include "kprobectl/cxx_names.h"
#include "kprobectl/glob.h"
#include "kprobectl/lang_names.h"
#include "kprobectl/strings.h"
#include "resolve_internal.h"

namespace kprobectl::resolve {

namespace {

// Instances of a clone symbol (foo.isra.0): DWARF knows them by the
// original name; keep the addresses inside the symbol.
Result<std::vector<DwarfAddress>> ResolveClone(const ProbePoint& point, Debuginfo& debuginfo, const ElfImage& image,
                                               const FindOptions& find) {
  std::vector<const ElfSymbol*> symbols;
  for (const ElfSymbol& s : image.symbols())
    if (s.type == ElfSymbol::kFunction && s.name == point.function) symbols.push_back(&s);
  if (symbols.empty()) return std::vector<DwarfAddress>{};
  ProbePoint base = point;
  base.function = EventBaseFromSymbol(point.function);
  auto all = KP_TRY(debuginfo.Resolve(base, find));
  std::vector<DwarfAddress> out;
  for (const DwarfAddress& a : all)
    for (const ElfSymbol* s : symbols)
      if (a.address >= s->value && a.address < s->value + std::max<uint64_t>(s->size, 1)) out.push_back(a);
  return out;
}

// A function the DWARF names no other way: a C++ lambda (gcc gives its
// operator() no linkage name) or an alias (glibc's malloc is __libc_malloc
// in its DWARF). The symbols the name matches give the code, and the DWARF
// describes the function there. Entries, offsets and returns only: lines
// need the function's own DWARF name.
std::vector<DwarfAddress> BySymbols(const ProbePoint& p, Debuginfo& debuginfo, const ElfImage& image) {
  std::vector<DwarfAddress> out;
  // FUNC@SRC names a function of one file: another file's symbol is no answer.
  if (p.function.empty() || IsGlob(p.function) || !p.file.empty()) return out;
  WantedName wanted = Wanted(p);
  std::string shown;
  for (const ElfSymbol& s : image.symbols()) {
    if (s.type != ElfSymbol::kFunction || s.value == 0 || !NameMatches(wanted, s, &shown)) continue;
    uint64_t offset = p.offset.value_or(0);
    if (s.size && offset >= s.size) continue;
    // The symbol must be where a function of the DWARF begins: not a copy
    // inlined at that instruction (its parameters are another function's),
    // not an alternate entry inside another function.
    auto start = debuginfo.AtAddress(s.value);
    if (!start || start->inlined || !start->entry) continue;
    auto at = offset ? debuginfo.AtAddress(s.value + offset) : start;
    if (!at) continue;
    at->function = shown;
    if (std::none_of(out.begin(), out.end(), [&](const DwarfAddress& a) { return a.address == at->address; }))
      out.push_back(*at);
  }
  return out;
}

// A Go function, by the names of the symbols the written name matches
// (lang_names.h: "(*T)" and "[...]" are no globs there); each as the DWARF
// knows it, which names it as its symbol.
Result<std::vector<DwarfAddress>> GoAddresses(const ProbePoint& p, Debuginfo& debuginfo, const ElfImage& image,
                                              const FindOptions& find) {
  WantedName wanted = Wanted(p, true);
  std::vector<std::string> names;
  std::string shown;
  for (const ElfSymbol& s : image.symbols())
    if (s.type == ElfSymbol::kFunction && s.value != 0 && NameMatches(wanted, s, &shown)) names.push_back(s.name);
  // A function Go inlined into every caller has no symbol: the DWARF has
  // its copies, by its name.
  if (names.empty() && !wanted.glob)
    if (auto inlined = debuginfo.Resolve(p, find); inlined && !inlined->empty()) return inlined;
  if (names.empty())
    return Fail("no function '" + p.function + "' in " + image.path(), NoFunctionHint(image, p.function));
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::vector<DwarfAddress> out;
  for (const std::string& name : names) {
    ProbePoint one = p;
    one.function = name;
    auto found = debuginfo.Resolve(one, find);
    // A glob's assembly functions (no DWARF) are left to the symbol table.
    if (!found && wanted.glob) continue;
    for (DwarfAddress& a : KP_TRY(std::move(found))) {
      // An ABI wrapper (runtime.newstack.abi0, for assembly's calls), which
      // Go's DWARF names as its function, calls that function: probing both
      // would count one call twice.
      const ElfSymbol* f = image.FunctionAt(a.address);
      if (f && f->name == name + ".abi0") continue;
      out.push_back(std::move(a));
    }
  }
  if (out.empty()) return Fail("no function matching '" + p.function + "' is in the DWARF of " + image.path());
  std::sort(out.begin(), out.end(), [](const DwarfAddress& a, const DwarfAddress& b) { return a.address < b.address; });
  return out;
}

Result<std::vector<DwarfAddress>> Addresses(const ProbeSpec& spec, Debuginfo& debuginfo, const ElfImage& image,
                                            const FindOptions& find) {
  const ProbePoint& p = spec.point;
  if (!p.version.empty()) return Fail("'" + DescribePoint(p) + "': symbol versions need the ELF path, not DWARF");
  if (p.address) return std::vector<DwarfAddress>{KP_TRY(debuginfo.AtAddress(*p.address + p.offset.value_or(0)))};
  if (!p.function.empty() && image.go()) return GoAddresses(p, debuginfo, image, find);
  if (!p.function.empty() && p.function.find('.') != std::string::npos && !IsGlob(p.function) &&
      !IsCxxName(p.function)) {
    auto clones = KP_TRY(ResolveClone(p, debuginfo, image, find));
    if (clones.empty())
      return Fail("no function '" + p.function + "' in " + image.path(), "list functions with 'kprobectl funcs'");
    return clones;
  }
  auto found = debuginfo.Resolve(p, find);
  if (found) return found;
  auto by_symbols = BySymbols(p, debuginfo, image);
  if (by_symbols.empty() && !IsGlob(p.function) && found.error().message.starts_with("no function '"))
    return Fail(found.error().message, NoFunctionHint(image, p.function));
  if (by_symbols.empty()) return found;
  if ((p.line || p.lazy_pattern) && !by_symbols[0].function.empty()) {
    auto dwarf_name = debuginfo.AtAddress(by_symbols[0].address);
    std::string named = dwarf_name ? dwarf_name->function : "";
    if (!named.empty() && named != p.function)
      return Fail("'" + p.function + "' is '" + named + "' in the debuginfo; its lines are known by that name",
                  "write '" + named + (p.line ? ":" + std::to_string(*p.line) : ";" + *p.lazy_pattern) + "'");
    return found;
  }
  return by_symbols;
}

std::string EventBaseFor(const ProbeSpec& spec, const DwarfAddress& at, bool go) {
  if (!spec.event.empty()) return spec.event;
  const ProbePoint& p = spec.point;
  std::string_view function = at.function.empty() ? p.function : at.function;
  std::string base = go ? GoEventBase(function) : EventBaseFromSymbol(function);
  if (p.address && at.function.empty()) return EventBase(p, "");
  // FUNC:0 is FUNC's entry, named as perf names it: no _L0 (event_names.cc).
  if (p.line && !p.function.empty()) return *p.line ? base + "_L" + std::to_string(*p.line) : base;
  if (p.line || p.lazy_pattern)
    return base + "_L" + std::to_string(at.at.line >= at.decl.line ? at.at.line - at.decl.line : at.at.line);
  return base;
}

// A return probe goes where the function is entered, its symbol: the
// kernel takes a kretprobe at a function's entry only, and on arm64 the
// DWARF's low_pc lies after ftrace's patchable NOPs at the symbol.
uint64_t ReturnProbeAddress(const DwarfAddress& at, const ElfImage& image, const Arch& arch) {
  const ElfSymbol* f = at.entry && !at.inlined ? image.FunctionAt(at.address) : nullptr;
  if (f && at.address > f->value && at.address - f->value <= arch.patchable_entry()) return f->value;
  return at.address;
}

ProbeOrigin OriginOf(const DwarfAddress& at, const ElfImage& image) {
  ProbeOrigin o;
  o.function = at.function;
  o.decl = at.decl;
  o.at = at.at;
  o.entry = at.entry;
  o.inlined = at.inlined;
  o.line_start = at.line_start;
  o.source = "DWARF";
  if (const ElfSymbol* f = image.FunctionAt(at.address)) {
    o.symbol = f->name;
    o.symbol_offset = at.address - f->value;
  }
  return o;
}

// A variable from the debuginfo as a typed fetch; the register must be one
// the kernel can read.
Result<TypedFetch> FromVariable(const VariableFetch& v, const ArgContext& ctx) {
  TypedFetch out;
  out.name = v.name;
  out.c_type = v.c_type;
  out.type = v.type;
  switch (v.root) {
    case VariableFetch::kRegister:
      if (!ctx.arch->DwarfRegisterName(v.dwarf_register))
        return Fail("'" + v.name + "' is in DWARF register " + std::to_string(v.dwarf_register) +
                    " (a vector or floating-point register), which the kernel cannot fetch");
      out.root = FetchRoot::Of(FetchRoot::kDwarfRegister, v.dwarf_register);
      break;
    case VariableFetch::kStatic:
      if (v.derefs.empty()) return Fail("'" + v.name + "' is an address, not a value the kernel can fetch");
      out.root = FetchRoot::Of(FetchRoot::kStatic, v.address);
      break;
    case VariableFetch::kArgument:
      out.root = FetchRoot::Of(FetchRoot::kArgument, v.argument);
      break;
    case VariableFetch::kConstant:
      if (!ctx.features->immediates)
        return Fail("'" + v.name + "' is the constant " + std::to_string(v.constant) +
                    " here, and this kernel has no immediate values (\\IMM, Linux 5.3)");
      out.root = FetchRoot::Value(FetchRoot::kConstant, v.constant);
      return out;  // a constant has nothing to dereference
  }
  for (int64_t d : v.derefs) out.derefs.push_back({d, false});
  return out;
}

// A return probe reads its arguments when the function returns, the
// DWARF's locations are the entry's. A variable in an argument register
// there is that argument, which ArgumentAtReturn() makes what the return
// can have; a constant or a global reads the same then. Any other place
// held the value at the entry only. `argument` gets which argument it is.
Result<void> AtReturn(const TypedFetch& fetch, const ProbeSpec& spec, const ArgContext& ctx,
                      std::optional<uint64_t>& argument) {
  const FetchRoot& r = fetch.root;
  if (!ctx.retprobe || r.kind == FetchRoot::kConstant || r.kind == FetchRoot::kStatic) return {};
  if (r.kind == FetchRoot::kArgument) argument = r.number;
  if (r.kind == FetchRoot::kDwarfRegister)
    if (auto reg = ctx.arch->DwarfRegisterName(static_cast<unsigned>(r.number))) argument = ctx.arch->ArgumentIn(*reg);
  std::string function = spec.point.function.empty() ? "FUNC" : spec.point.function;
  if (!argument)
    return Fail("'" + fetch.name + "' is where the function's entry keeps it, and a return probe reads it when the " +
                    "function returns, when that place may hold something else",
                "probe the entry too ('" + function + " " + fetch.name + "') to record it");
  return {};
}

// A variable from the debuginfo as the fetch the probe makes of it; in a
// return probe, `argument` gets which argument of the entry it is.
Result<TypedFetch> FetchOf(const VariableFetch& v, const ProbeSpec& spec, const ArgContext& ctx,
                           std::optional<uint64_t>& argument) {
  TypedFetch fetch = KP_TRY(FromVariable(v, ctx));
  KP_TRY_VOID(AtReturn(fetch, spec, ctx, argument));
  return fetch;
}

// The same, whole: what the return can have of an argument, decided.
Result<TypedFetch> FetchOf(const VariableFetch& v, const ProbeSpec& spec, const ArgContext& ctx) {
  std::optional<uint64_t> argument;
  TypedFetch fetch = KP_TRY(FetchOf(v, spec, ctx, argument));
  if (argument) KP_TRY_VOID(ArgumentAtReturn(fetch, *argument, v.name, spec, ctx));
  return fetch;
}

// One variable argument (var->member.field[N]) at `at`.
Result<TypedFetch> VariableArg(const ProbeSpec& spec, const ProbeArg& arg, Debuginfo& debuginfo, const DwarfAddress& at,
                               const ArgContext& ctx) {
  const ArgExpr& e = arg.expr;
  std::optional<FetchType> type;
  if (!arg.type.empty()) type = KP_TRY(CheckArgType(spec, arg, ctx));
  bool want_string = type && type->ReadsString() && e.derefs.empty();
  auto variable = debuginfo.Fetch(at, e, want_string);
  if (!variable) return ArgError(spec, e.pos, variable.error().message, variable.error().hint);
  // A bitfield type is what finds the member's bits in its place (a
  // member k bytes into a register: b32@32/64); another type would read the
  // place's first bits, another member's.
  const FetchType& bits = variable->type;
  if (type && type->base != FetchType::kBitfield && bits.base == FetchType::kBitfield && bits.bit_offset != 0) {
    std::string written = arg.text.substr(arg.name.empty() ? 0 : arg.name.size() + 1);
    written.resize(written.size() - arg.type.size() - 1);
    std::string which = bits.bit_width == 1 ? "bit " + std::to_string(bits.bit_offset)
                                            : "bits " + std::to_string(bits.bit_offset) + "-" +
                                                  std::to_string(bits.bit_offset + bits.bit_width - 1);
    return ArgError(spec, arg.type_pos,
                    "'" + written + "' is " + which + " of where it is kept (" + FormatFetchType(bits) +
                        "), and :" + arg.type + " would read the bits from 0 instead",
                    "leave the type out");
  }
  std::optional<uint64_t> argument;
  auto fetch = FetchOf(*variable, spec, ctx, argument);
  if (!fetch) return ArgError(spec, e.pos, fetch.error().message, fetch.error().hint);
  KP_TRY_VOID(ApplyWritten(spec, arg, type, variable->c_type, *fetch));
  if (!argument) return *fetch;
  auto kept = ArgumentAtReturn(*fetch, *argument, arg.text, spec, ctx);
  if (!kept) return ArgError(spec, e.pos, kept.error().message, kept.error().hint);
  return *fetch;
}

// $retval at a Go return instruction as the variable that is the first result.
Result<ProbeArg> FirstResult(const ProbeSpec& spec, const ProbeArg& arg, const DwarfAddress& at) {
  if (at.results.empty()) return ArgError(spec, arg.expr.pos, at.function + " returns nothing");
  ProbeArg out = arg;
  out.expr.kind = ArgKind::kVariable;
  out.expr.name = at.results[0].name;
  if (out.name.empty()) out.name = "retval";
  return out;
}

Result<GoPlaces> PlaceGo(Debuginfo& debuginfo, const DwarfAddress& at, const Target& target) {
  const ElfImage& image = *target.image;
  return GoPlacesAt(debuginfo, at, *target.arch, image.go_register_abi(), image.GoArgumentAreaSize(at.address));
}

// A Go function's entry: its arguments are where Go's ABI puts them, which
// its DWARF describes wrongly at times (a slice in four pieces, a struct's
// members without their padding); placed so, they are fetched there, at
// its first instruction, and true is returned. Otherwise (not Go's, inlined,
// a parameter the DWARF leaves out, a type it cannot place) the DWARF says,
// after the prologue.
bool GoEntry(Debuginfo& debuginfo, DwarfAddress& at, const Target& target) {
  if (!at.entry || at.inlined || !target.go() || debuginfo.LanguageAt(at) != Debuginfo::Language::kGo) return false;
  auto places = PlaceGo(debuginfo, at, target);
  if (!places ||
      std::any_of(places->args.begin(), places->args.end(), [](const AbiValue& v) { return !v.unplaceable.empty(); }))
    return false;
  at.params = std::move(places->args);
  return true;
}

// $vars / $params: every variable with a place there, in the DWARF's
// order. A Go or Rust string or byte slice is fetched as when named: its
// bytes cut at its length (else Rust's String and Vec, whose pointer lies
// deep in wrappers, would be skipped, and Go's strings split in members).
Result<std::vector<TypedFetch>> AllVariables(const ProbeSpec& spec, const ArgExpr& e, Debuginfo& debuginfo,
                                             const DwarfAddress& at, const ArgContext& ctx,
                                             std::vector<std::string>* skipped) {
  const bool params_only = e.kind == ArgKind::kParams;
  std::vector<std::string> skips;
  std::vector<VariableFetch> fetches = KP_TRY(debuginfo.FetchAll(at, params_only, &skips));
  std::vector<Debuginfo::Visible> visible;
  if (debuginfo.LanguageAt(at) != Debuginfo::Language::kOther) visible = KP_TRY(debuginfo.VisibleAt(at, params_only));
  std::vector<TypedFetch> out;
  auto add = [&](const VariableFetch& v) {
    auto fetch = FetchOf(v, spec, ctx);
    if (fetch)
      out.push_back(std::move(*fetch));
    else
      skips.push_back(v.name + ": " + fetch.error().message);
  };
  if (visible.empty()) {
    for (const VariableFetch& v : fetches) add(v);
  }
  for (const Debuginfo::Visible& var : visible) {
    ProbeArg named;
    named.expr.kind = ArgKind::kVariable;
    named.expr.name = var.name;
    named.pos = e.pos;
    auto counted = CountedStringArg(spec, named, debuginfo, at, [&](const ProbeArg& member) {
      return VariableArg(spec, member, debuginfo, at, ctx);
    });
    if (counted && *counted) {
      for (TypedFetch& part : **counted) out.push_back(std::move(part));
      std::erase_if(
          skips, [&](const std::string& s) { return s.starts_with(var.name + ":") || s.starts_with(var.name + "."); });
      continue;
    }
    for (const VariableFetch& v : fetches)
      if (v.variable == var.name) add(v);
  }
  if (skipped) skipped->insert(skipped->end(), skips.begin(), skips.end());
  return out;
}

// The arguments at one place: variables through the DWARF, $vars/$params
// expanded, the rest as raw arguments.
Result<std::vector<TypedFetch>> ArgsAt(const ProbeSpec& spec, Debuginfo& debuginfo, const DwarfAddress& at,
                                       const ArgContext& ctx, std::vector<std::string>* skipped) {
  std::vector<TypedFetch> args;
  std::vector<const ProbeArg*> from;
  for (size_t i = 0; i < spec.args.size(); ++i) {
    const ProbeArg& written = spec.args[i];
    // $retval at a Go function's return instruction: its first result,
    // fetched and typed as that variable.
    ProbeArg retval;
    if (written.expr.kind == ArgKind::kRetval && at.go_return) retval = KP_TRY(FirstResult(spec, written, at));
    const ProbeArg& arg = retval.expr.name.empty() ? written : retval;
    const ArgExpr& e = arg.expr;
    if (e.kind == ArgKind::kVars || e.kind == ArgKind::kParams) {
      for (TypedFetch& fetch : KP_TRY(AllVariables(spec, e, debuginfo, at, ctx, skipped))) {
        args.push_back(std::move(fetch));
        from.push_back(nullptr);
      }
      continue;
    }
    if (e.kind != ArgKind::kVariable) {
      TypedFetch fetch = KP_TRY(RawArg(spec, i, ctx));
      if (e.kind == ArgKind::kRetval && e.derefs.empty()) {
        auto type = debuginfo.ReturnType(at);
        if (!type) return ArgError(spec, e.pos, type.error().message, type.error().hint);
        if (arg.type.empty()) fetch.type = *type;
      }
      args.push_back(std::move(fetch));
      from.push_back(&written);
      continue;
    }
    auto counted = KP_TRY(CountedStringArg(spec, arg, debuginfo, at, [&](const ProbeArg& member) {
      return VariableArg(spec, member, debuginfo, at, ctx);
    }));
    for (TypedFetch& part : counted.value_or(std::vector<TypedFetch>{})) {
      args.push_back(std::move(part));
      from.push_back(&written);
    }
    if (counted) continue;
    args.push_back(KP_TRY(VariableArg(spec, arg, debuginfo, at, ctx)));
    from.push_back(&written);
  }
  KP_TRY_VOID(FinishArgs(spec, args, from));
  return args;
}

}  // namespace

Result<std::vector<ResolvedLocation>> LocateWithDwarf(const ProbeSpec& spec, Target& target, const SystemView& system,
                                                      const ResolveOptions& options) {
  Debuginfo& debuginfo = *target.debuginfo;
  const ElfImage& image = *target.image;
  ProbeKind kind = target.probe_kind();
  if (kind == ProbeKind::kUser && image.path().find_first_of(" \t\n") != std::string::npos)
    return Fail("the path '" + image.path() + "' has a blank, which uprobe_events cannot take",
                "probe it through a symbolic link whose path has no blanks");
  const ProbePoint& p = spec.point;
  FindOptions find{options.inlines, options.source_dirs};
  std::vector<DwarfAddress> addresses = KP_TRY(Addresses(spec, debuginfo, image, find));
  // Unoptimized code fills its variables' stack slots in the prologue.
  bool has_variables = options.for_variables;
  for (const ProbeArg& arg : spec.args) has_variables |= NeedsDebuginfo(arg.expr);
  const bool entries = has_variables && !p.line && !p.lazy_pattern && !p.offset && !p.retprobe && !p.address;
  for (DwarfAddress& at : addresses) {
    if (options.go_return_sites) {
      at.go_return = true;
      at.results = KP_TRY(PlaceGo(debuginfo, at, target)).results;
    } else if (entries) {
      at.go_entry = GoEntry(debuginfo, at, target);
      if (!at.go_entry) at = debuginfo.AfterPrologue(at);
    }
  }
  std::vector<ResolvedLocation> out;
  for (const DwarfAddress& at : addresses) {
    ResolvedLocation loc;
    loc.address = p.retprobe ? ReturnProbeAddress(at, image, *target.arch) : at.address;
    loc.target = KP_TRY(TargetAt(kind, image, loc.address));
    loc.origin = OriginOf(at, image);
    loc.dwarf = at;
    loc.event_base = EventBaseFor(spec, at, image.go());
    ArgContext ctx{target.arch,
                   kind,
                   p.retprobe,
                   at.entry && !at.inlined,
                   &system.features,
                   &image,
                   at.address,
                   options.keep_entry_args,
                   options.go_return_sites};
    loc.args = KP_TRY(ArgsAt(spec, debuginfo, at, ctx, &loc.skipped));
    out.push_back(std::move(loc));
  }
  return out;
}

}  // namespace kprobectl::resolve
