// SPDX-License-Identifier: GPL-2.0-or-later
//
// Arguments that need no debuginfo, resolved the same way by every source.
// Most pass through after checks the kernel would make less clearly; a few
// change form:
//  - $argN becomes the Nth argument at the function's entry (the arch table
//    says where): uprobes have no $argN at all ("$arg* can be used only on
//    function entry or exit"), and kprobes only at ftrace-based entries.
//    In a return probe it stays $argN where the kernel keeps it, and is
//    fetched at the entry for trace and hist where it does not
//    (ArgumentAtReturn).
//  - :string on a register-like value reads the memory it points to, since
//    the kernel wants a memory reference for strings.
//  - @SYMBOL on a user probe becomes an address in the image, which
//    Synthesize() writes in the uprobe form relative to the mapped file.
#include "kprobectl/strings.h"
#include "resolve_internal.h"

namespace kprobectl::resolve {

std::unexpected<Error> ArgError(const ProbeSpec& spec, size_t pos, std::string what, std::string hint) {
  return std::unexpected(Error{CaretMessage("invalid argument: " + what, spec.text, pos), std::move(hint)});
}

namespace {

std::string DefaultName(const ArgExpr& e, size_t position) {
  bool plain = e.derefs.empty();
  switch (e.kind) {
    case ArgKind::kArg:
      return "arg" + std::to_string(e.number);
    case ArgKind::kRetval:
      return plain ? "retval" : "arg" + std::to_string(position);
    case ArgKind::kComm:
      return "comm";
    case ArgKind::kStackN:
      return plain ? "stack" + std::to_string(e.number) : "arg" + std::to_string(position);
    case ArgKind::kStack:
      return "stack";
    case ArgKind::kRegister:
      return plain ? e.name : "arg" + std::to_string(position);
    case ArgKind::kSymbol: {
      std::string name;
      for (char c : e.name) name += IsIdentChar(c) ? c : '_';
      return name;
    }
    default:
      return "arg" + std::to_string(position);
  }
}

std::unexpected<Error> NeedsDwarf(const ProbeSpec& spec, const ArgExpr& e) {
  return ArgError(spec, e.pos,
                  (e.kind == ArgKind::kVariable ? "variable '" + e.name + "'"
                   : e.kind == ArgKind::kVars   ? std::string("$vars")
                                                : std::string("$params")) +
                      " needs debuginfo (DWARF) to be found",
                  "fetch registers instead ($argN, %REG, $retval, +OFFSET(%REG))");
}

// In a return probe the argument at the entry: RawArg() hands it to
// ArgumentAtReturn() once its dereferences and type are known.
Result<FetchRoot> ArgumentRoot(const ProbeSpec& spec, const ArgExpr& e, const ArgContext& ctx) {
  if (!ctx.at_entry && !ctx.retprobe && !ctx.go_return)
    return ArgError(spec, e.pos,
                    "$arg" + std::to_string(e.number) + " is only known at a function's entry; at " +
                        DescribePoint(spec.point) + " the registers may hold other values",
                    "probe the function itself (FUNC), or fetch the register that holds the value (%REG)");
  return FetchRoot::Of(FetchRoot::kArgument, e.number);
}

}  // namespace

// Linux 6.9 keeps a function's arguments for its kernel return probes
// ($argN, "tracing/probes: Support $argN in return probe (kprobe and
// fprobe)": stored at the entry, its README then says "kernel return
// probes support: $retval, $arg<N>"); uprobes keep none. Where the kernel does not, trace and hist
// fetch the argument at the entry themselves and pair it with the return
// (trace_plan.h), which gives the same value as the kernel's $argN: the
// argument as the call passed it. Not so memory read through it: the
// kernel reads that at the return, the entry could read what the function
// then changed.
Result<void> ArgumentAtReturn(TypedFetch& fetch, uint64_t argument, std::string_view written, const ProbeSpec& spec,
                              const ArgContext& ctx) {
  const bool kernel = ctx.kind == ProbeKind::kKernel;
  if (kernel && ctx.features->retprobe_args) {
    fetch.root = FetchRoot::Of(FetchRoot::kReturnArgument, argument);
    return {};
  }
  const std::string why = kernel
                              ? "this kernel cannot keep a function's arguments for its return probe ($argN, Linux 6.9)"
                              : "no kernel keeps a function's arguments for a user return probe (uprobes keep none)";
  const std::string what = "'" + std::string(written) + "'";
  const std::string n = std::to_string(argument);
  std::string function = spec.point.function.empty() ? "FUNC" : spec.point.function;
  std::string entry = "'" + function + " " + std::string(written) + "'";
  if (!ctx.keep_entry)
    return Fail(what + " is argument " + n + ", and " + why,
                "'kprobectl trace --probe' and 'kprobectl hist --probe' can: they fetch it at the function's entry "
                "with a probe of their own and print it with the return; or probe the entry too (" +
                    entry + ")");
  if (!fetch.derefs.empty() || (fetch.type && fetch.type->ReadsString()))
    return Fail(what + " reads memory through argument " + n + " when the function returns, and " + why +
                    "; read at the entry, that memory could differ from the return's",
                "probe the entry for it there (" + entry + "), or fetch argument " + n + " itself");
  fetch.at_entry = true;
  return {};
}

namespace {

Result<FetchRoot> UserSymbolRoot(const ProbeSpec& spec, const ArgExpr& e, const ArgContext& ctx) {
  const ElfSymbol* found = nullptr;
  for (const ElfSymbol& s : ctx.image->symbols())
    if (s.name == e.name && s.type != ElfSymbol::kOther && (!found || s.global)) found = &s;
  if (!found)
    return ArgError(spec, e.pos, "no symbol '" + e.name + "' in " + ctx.image->path(),
                    "list the binary's data symbols with 'nm " + ctx.image->path() + "'");
  return FetchRoot::Of(FetchRoot::kStatic, found->value + static_cast<uint64_t>(e.offset));
}

// The root of a raw argument; `is_memory` says whether reading it already
// reads memory (so a string type needs no dereference added).
Result<FetchRoot> Root(const ProbeSpec& spec, const ArgExpr& e, const ArgContext& ctx, bool& is_memory) {
  is_memory = false;
  switch (e.kind) {
    case ArgKind::kVariable:
    case ArgKind::kVars:
    case ArgKind::kParams:
      return NeedsDwarf(spec, e);
    case ArgKind::kArg:
      return ArgumentRoot(spec, e, ctx);
    case ArgKind::kRetval:
      if (!ctx.retprobe)
        return ArgError(spec, e.pos, "$retval is only available in return probes",
                        "add %return to the probe point: " + DescribePoint(spec.point) + "%return");
      return FetchRoot::Of(FetchRoot::kReturnValue);
    case ArgKind::kComm:
      is_memory = true;  // a string already
      return FetchRoot::Of(FetchRoot::kComm);
    case ArgKind::kStackN:
      return FetchRoot::Of(FetchRoot::kStackEntry, e.number);
    case ArgKind::kStack:
      return FetchRoot::Of(FetchRoot::kStack);
    case ArgKind::kRegister:
      if (!ctx.arch->IsRegister(e.name)) {
        auto suggestion = ctx.arch->SuggestRegister(e.name);
        std::string hint = !suggestion ? std::string(ctx.arch->name()) + " registers: " + ctx.arch->RegisterSummary()
                           : suggestion->why.empty()
                               ? "the kernel names it %" + std::string(suggestion->name)
                               : "did you mean %" + std::string(suggestion->name) + "? (" + suggestion->why + ")";
        return ArgError(spec, e.pos, "unknown register '%" + e.name + "' on " + std::string(ctx.arch->name()), hint);
      }
      return FetchRoot::Named(FetchRoot::kRegister, e.name);
    case ArgKind::kSymbol:
      is_memory = true;
      if (ctx.kind == ProbeKind::kKernel) return FetchRoot::Named(FetchRoot::kKernelSymbol, e.name, e.offset);
      return UserSymbolRoot(spec, e, ctx);
    case ArgKind::kAddress:
      is_memory = true;
      if (e.file_relative) {
        if (ctx.kind == ProbeKind::kKernel)
          return ArgError(spec, e.pos, "@+OFFSET (file-relative) is for user probes",
                          "give a kernel address as @0xADDRESS or @SYMBOL");
        return FetchRoot::Of(FetchRoot::kFileOffset, e.number);
      }
      return FetchRoot::Of(FetchRoot::kAbsolute, e.number);
    case ArgKind::kImmediate:
      is_memory = true;
      if (!ctx.features->immediates)
        return ArgError(spec, e.pos, "this kernel does not support immediate values (\\IMM, Linux 5.3)");
      return FetchRoot::Named(FetchRoot::kImmediate, e.name);
  }
  return ArgError(spec, e.pos, "unsupported argument");
}

}  // namespace

Result<FetchType> CheckArgType(const ProbeSpec& spec, const ProbeArg& arg, const ArgContext& ctx) {
  auto parsed = ParseFetchType(arg.type);
  if (!parsed) return std::unexpected(parsed.error());
  auto supported = RequireFetchType(*ctx.features, ctx.kind, *parsed, arg.type);
  if (!supported) return ArgError(spec, arg.type_pos, supported.error().message, supported.error().hint);
  return *parsed;
}

Result<void> CheckDepth(const ProbeSpec& spec, const ProbeArg& arg, const TypedFetch& fetch) {
  // The base fetch and the store, each dereference (a static's first one
  // is folded into its memory reference), and a string's or bitfield's read.
  size_t derefs = fetch.derefs.size();
  if (fetch.root.kind == FetchRoot::kStatic && derefs > 0) --derefs;
  bool extra = fetch.type && (fetch.type->IsString() || fetch.type->base == FetchType::kBitfield);
  if (2 + derefs + (extra ? 1 : 0) > kMaxFetchInstructions)
    return ArgError(spec, arg.pos,
                    "'" + arg.text + "' dereferences too deeply for the kernel (at most " +
                        std::to_string(kMaxFetchInstructions - 2) + " steps)");
  return {};
}

Result<void> ApplyWritten(const ProbeSpec& spec, const ProbeArg& arg, const std::optional<FetchType>& type,
                          const std::string& c_type, TypedFetch& fetch) {
  if (type && type->array_len && c_type.ends_with("*")) fetch.derefs.push_back({0, false});
  for (const ArgDeref& d : arg.expr.derefs) fetch.derefs.push_back(d);
  // The kernel reads an array from memory only ("String accepts only
  // memory argument", whatever the elements).
  if (type && type->array_len && fetch.derefs.empty() && fetch.root.kind != FetchRoot::kStatic)
    return ArgError(spec, arg.type_pos,
                    "'" + arg.text.substr(0, arg.text.find(':')) +
                        "' is kept in a register here, and the kernel reads " + arg.type +
                        " (an array) from memory only",
                    "leave the type out, or give a number's (:u64, :s32, ...)");
  if (type) fetch.type = type;
  if (!arg.name.empty()) fetch.name = arg.name;
  return CheckDepth(spec, arg, fetch);
}

Result<TypedFetch> RawArg(const ProbeSpec& spec, size_t index, const ArgContext& ctx) {
  const ProbeArg& arg = spec.args[index];
  const ArgExpr& e = arg.expr;
  bool is_memory = false;
  TypedFetch out;
  out.root = KP_TRY(Root(spec, e, ctx, is_memory));
  if (out.root.kind == FetchRoot::kStatic) out.derefs.push_back({0, false});  // the load @SYM itself makes
  if (!arg.type.empty()) out.type = KP_TRY(CheckArgType(spec, arg, ctx));
  for (const ArgDeref& d : e.derefs) {
    if (d.user && ctx.kind == ProbeKind::kKernel && !ctx.features->user_deref)
      return ArgError(spec, arg.pos, "this kernel cannot dereference user memory (+uOFFSET, Linux 5.5)");
    out.derefs.push_back(d);
    is_memory = true;
  }
  if (out.type && out.type->ReadsString() && !is_memory && e.kind != ArgKind::kComm) out.derefs.push_back({0, false});
  // The kernel reads an array from memory only ("String accepts only
  // memory argument", whatever the elements).
  if (out.type && out.type->array_len && !is_memory && out.root.kind != FetchRoot::kStatic)
    return ArgError(spec, arg.type_pos,
                    "'" + arg.text.substr(0, arg.text.find(':')) + "' is a register's value, and the kernel reads " +
                        arg.type + " (an array) from memory only",
                    "read what it points to: +0(" + arg.text.substr(0, arg.text.find(':')) + "):" + arg.type);
  KP_TRY_VOID(CheckDepth(spec, arg, out));
  out.name = arg.name.empty() ? DefaultName(e, index + 1) : arg.name;
  if (e.kind == ArgKind::kArg && (ctx.retprobe || ctx.go_return)) {
    std::string written = arg.text.substr(arg.name.empty() ? 0 : arg.name.size() + 1);
    auto kept = ArgumentAtReturn(out, e.number, written, spec, ctx);
    if (!kept) return ArgError(spec, e.pos, kept.error().message, kept.error().hint);
  }
  return out;
}

Result<std::vector<TypedFetch>> RawArgs(const ProbeSpec& spec, const ArgContext& ctx) {
  std::vector<TypedFetch> out;
  std::vector<const ProbeArg*> from;
  for (size_t i = 0; i < spec.args.size(); ++i) {
    out.push_back(KP_TRY(RawArg(spec, i, ctx)));
    from.push_back(&spec.args[i]);
  }
  KP_TRY_VOID(FinishArgs(spec, out, from));
  return out;
}

Result<void> FinishArgs(const ProbeSpec& spec, std::vector<TypedFetch>& out, const std::vector<const ProbeArg*>& from) {
  if (out.size() > kMaxProbeArgs)
    return Fail("'" + DescribePoint(spec.point) + "' has " + std::to_string(out.size()) +
                    " arguments; the kernel takes at most " + std::to_string(kMaxProbeArgs),
                "split them over several probes on the same point (name them with EVENT=)");
  for (size_t i = 0; i < out.size(); ++i) {
    const ProbeArg* arg = from[i];
    bool named = arg && !arg->name.empty();
    if (out[i].name.size() > kMaxArgNameLength) {
      if (named)
        return ArgError(spec, arg->pos,
                        "argument name '" + arg->name + "' is longer than the kernel's " +
                            std::to_string(kMaxArgNameLength) + " characters");
      out[i].name.resize(kMaxArgNameLength);
    }
    for (char& c : out[i].name)
      if (!IsIdentChar(c)) c = '_';
    if (!out[i].name.empty() && !IsIdentStart(out[i].name[0])) out[i].name.insert(0, "_");
  }
  // The kernel refuses two arguments of one name ("This argument name is
  // already used"): number the later ones, as perf does.
  for (size_t i = 0; i < out.size(); ++i) {
    auto taken = [&](const std::string& name) {
      for (size_t j = 0; j < out.size(); ++j)
        if (j != i && out[j].name == name) return true;
      return false;
    };
    bool clash = false;
    for (size_t j = 0; j < i; ++j) clash |= out[j].name == out[i].name;
    if (!clash) continue;
    if (from[i] && !from[i]->name.empty())
      return ArgError(spec, from[i]->pos, "two arguments are named '" + out[i].name + "'");
    // A counted string's bytes and length (NAME, NAME__len) are renamed
    // together: the printer pairs them by name.
    const std::string length_suffix(kCountedLengthSuffix);
    const bool counted = i + 1 < out.size() && out[i + 1].name == out[i].name + length_suffix;
    std::string base = out[i].name.substr(0, kMaxArgNameLength - 3 - (counted ? length_suffix.size() : 0));
    for (int n = 1; taken(out[i].name) || (counted && taken(out[i].name + length_suffix)); ++n)
      out[i].name = base + "_" + std::to_string(n);
    if (counted) out[i + 1].name = out[i].name + length_suffix;
  }
  return {};
}

Result<void> RequireNoDebuginfo(const ProbeSpec& spec) {
  const ProbePoint& p = spec.point;
  if (p.line || p.lazy_pattern || !p.file.empty()) {
    std::string what = p.line ? "a source line" : p.lazy_pattern ? "a lazy pattern" : "a source file";
    return Fail("'" + DescribePoint(p) + "' names " + what + ", which needs debuginfo (DWARF) to resolve",
                "probe FUNC, FUNC+OFFSET, FUNC%return or 0xADDRESS; source-level probe points need "
                "debuginfo support (see kprobectl(8))");
  }
  for (const ProbeArg& arg : spec.args)
    if (NeedsDebuginfo(arg.expr)) return NeedsDwarf(spec, arg.expr);
  return {};
}

}  // namespace kprobectl::resolve
