// SPDX-License-Identifier: GPL-2.0-or-later
//
// The BTF source, for a kernel target without DWARF: the places come from
// the symbol table (or the kernel, by name), the parameters and their
// types from BTF. BTF knows a parameter only where the ABI puts it, at the
// function's entry; at its return only a kernel that keeps the arguments
// for return probes ($argN, Linux 6.9) can read them, or trace and hist,
// which fetch them at the entry (ArgumentAtReturn). Lines, source files
// and locals are the DWARF's alone.
#include "kprobectl/strings.h"
#include "resolve_internal.h"

namespace kprobectl::resolve {

namespace {

constexpr std::string_view kEntryHint = "probe FUNC or FUNC%return; other places need the kernel's DWARF";

// The function whose prototype BTF gives, for variables at `loc`.
Result<std::string> BtfFunction(const ProbeSpec& spec, const ResolvedLocation& loc, const ArgContext& ctx, size_t pos) {
  if (!ctx.at_entry && !ctx.retprobe)
    return ArgError(spec, pos,
                    "BTF knows parameters only at a function's entry, and " + DescribePoint(spec.point) + " is not one",
                    std::string(kEntryHint));
  const std::string& name = loc.origin.symbol.empty() ? loc.origin.function : loc.origin.symbol;
  if (name.empty())
    return ArgError(spec, pos, "an address has no function for BTF to describe", std::string(kEntryHint));
  if (name.find('.') != std::string::npos)
    return ArgError(spec, pos,
                    "'" + name +
                        "' is a copy the compiler made (a clone or a split part), whose parameters BTF "
                        "does not describe",
                    "probe the function it came from, or use the kernel's DWARF");
  return name;
}

// A fetch from BTF: the Nth argument at the entry (a return probe's made
// what the return can have by ArgumentAtReturn, once its :TYPE is known).
TypedFetch FromBtf(const VariableFetch& v) {
  TypedFetch out;
  out.name = v.name;
  out.c_type = v.c_type;
  out.type = v.type;
  out.root = FetchRoot::Of(FetchRoot::kArgument, v.argument);
  for (int64_t d : v.derefs) out.derefs.push_back({d, false});
  return out;
}

Result<TypedFetch> BtfAtReturn(TypedFetch fetch, const VariableFetch& v, std::string_view written,
                               const ProbeSpec& spec, size_t pos, const ArgContext& ctx) {
  if (!ctx.retprobe) return fetch;
  auto kept = ArgumentAtReturn(fetch, v.argument, written, spec, ctx);
  if (!kept) return ArgError(spec, pos, kept.error().message, kept.error().hint);
  return fetch;
}

Result<TypedFetch> BtfVariable(const ProbeSpec& spec, const ProbeArg& arg, const BtfInfo& btf,
                               const std::string& function, const ArgContext& ctx) {
  const ArgExpr& e = arg.expr;
  std::optional<FetchType> type;
  if (!arg.type.empty()) type = KP_TRY(CheckArgType(spec, arg, ctx));
  bool want_string = type && type->ReadsString() && e.derefs.empty();
  auto variable = btf.Fetch(function, e, want_string);
  if (!variable) return ArgError(spec, e.pos, variable.error().message, variable.error().hint);
  TypedFetch fetch = FromBtf(*variable);
  KP_TRY_VOID(ApplyWritten(spec, arg, type, variable->c_type, fetch));
  return BtfAtReturn(std::move(fetch), *variable, arg.text, spec, e.pos, ctx);
}

// $retval and $argN typed as the prototype declares them: the return
// type, and the parameter the Nth argument slot holds whole.
void TypeFromPrototype(const BtfInfo& btf, const ResolvedLocation& loc, const ArgExpr& e, TypedFetch& fetch) {
  const std::string& function = loc.origin.symbol.empty() ? loc.origin.function : loc.origin.symbol;
  if (e.kind == ArgKind::kRetval) {
    if (auto type = btf.ReturnType(function)) {
      fetch.type = type->first;
      fetch.c_type = type->second;
    }
  } else if (e.kind == ArgKind::kArg && function.find('.') == std::string::npos) {
    std::vector<std::string> skipped;
    auto params = btf.FetchAll(function, &skipped);
    if (!params) return;
    for (const VariableFetch& v : *params)
      if (v.root == VariableFetch::kArgument && v.argument == e.number && v.derefs.empty()) {
        fetch.type = v.type;
        fetch.c_type = v.c_type;
      }
  }
}

Result<std::vector<TypedFetch>> BtfArgs(const ProbeSpec& spec, const BtfInfo& btf, ResolvedLocation& loc,
                                        const ArgContext& ctx) {
  std::vector<TypedFetch> args;
  std::vector<const ProbeArg*> from;
  for (size_t i = 0; i < spec.args.size(); ++i) {
    const ProbeArg& arg = spec.args[i];
    const ArgExpr& e = arg.expr;
    if (e.kind == ArgKind::kVars || e.kind == ArgKind::kParams) {
      std::string function = KP_TRY(BtfFunction(spec, loc, ctx, e.pos));
      auto params = btf.FetchAll(function, &loc.skipped);
      if (!params) return ArgError(spec, e.pos, params.error().message, params.error().hint);
      for (const VariableFetch& v : *params) {
        args.push_back(KP_TRY(BtfAtReturn(FromBtf(v), v, v.name, spec, e.pos, ctx)));
        from.push_back(nullptr);
      }
      if (e.kind == ArgKind::kVars) loc.skipped.push_back("locals: BTF has none (they need the kernel's DWARF)");
    } else if (e.kind == ArgKind::kVariable) {
      std::string function = KP_TRY(BtfFunction(spec, loc, ctx, e.pos));
      args.push_back(KP_TRY(BtfVariable(spec, arg, btf, function, ctx)));
      from.push_back(&arg);
    } else {
      TypedFetch fetch = KP_TRY(RawArg(spec, i, ctx));
      if (arg.type.empty() && e.derefs.empty()) TypeFromPrototype(btf, loc, e, fetch);
      args.push_back(std::move(fetch));
      from.push_back(&arg);
    }
  }
  KP_TRY_VOID(FinishArgs(spec, args, from));
  return args;
}

}  // namespace

Result<std::vector<ResolvedLocation>> LocateWithBtf(const ProbeSpec& spec, const Target& target,
                                                    const SystemView& system, const ResolveOptions& options,
                                                    std::vector<std::string>* notes) {
  const ProbePoint& p = spec.point;
  if (p.line || p.lazy_pattern || !p.file.empty()) {
    KP_TRY_VOID(CheckKernelFunction(p.function, target, system));  // a wrong name first
    std::string why = target.debuginfo_error.message.empty() ? "" : " (" + target.debuginfo_error.message + ")";
    return Fail(
        "'" + DescribePoint(p) + "' needs the kernel's DWARF: BTF has no lines or source files" + why,
        target.debuginfo_error.hint.empty() ? "install the kernel's debug package" : target.debuginfo_error.hint);
  }
  ProbeSpec places = spec;  // the places alone; the arguments are BTF's
  places.args.clear();
  std::vector<ResolvedLocation> out = KP_TRY(target.image ? LocateWithSymbols(places, target, system, options)
                                                          : LocateByName(places, target, system, options));
  for (ResolvedLocation& loc : out) {
    ArgContext ctx{target.arch,      ProbeKind::kKernel, p.retprobe,  loc.origin.entry,
                   &system.features, target.image.get(), loc.address, options.keep_entry_args};
    loc.args = KP_TRY(BtfArgs(spec, *target.btf, loc, ctx));
  }
  if (notes && NeedsDebuginfo(spec))
    notes->push_back("'" + DescribePoint(p) + "': parameters and types from BTF (" + target.btf->path() + ")");
  return out;
}

}  // namespace kprobectl::resolve
