// SPDX-License-Identifier: GPL-2.0-or-later
//
// Raw arguments to fetchargs. Most pass through after checks the kernel would
// make less clearly; a few are rewritten:
//  - $argN becomes the ABI register or stack slot at the function's entry:
//    uprobes have no $argN at all ("$arg* can be used only on function entry
//    or exit"), and kprobes only at ftrace-based entries.
//  - :string on a register-like value becomes +0(value):string, since the
//    kernel wants a memory reference for strings.
//  - @SYMBOL on a user probe becomes @+OFFSET, the uprobe form that is
//    relative to where the probed file is mapped and so survives PIE and
//    ASLR. The kernel computes the address as (the probe's runtime address -
//    the probe's file offset) + OFFSET (translate_user_vaddr() in
//    kernel/trace/trace_uprobe.c). Despite the documentation's "offset from
//    the file", OFFSET is therefore not the symbol's file offset: it is its
//    virtual address less (vaddr - offset) of the segment holding the probe.
//    Measured: the file offset reads the wrong bytes when .data's
//    vaddr-offset delta differs from .text's, as it does in every gcc binary.
#include "kprobectl/fetch_type.h"
#include "kprobectl/resolve.h"
#include "kprobectl/strings.h"
#include "kprobectl/x86_64_abi.h"

namespace kprobectl {

std::string Dereference(int64_t offset, bool user, const std::string& inner) {
  return (offset < 0 ? "-" : "+") + std::string(user ? "u" : "") + std::to_string(offset < 0 ? -offset : offset) + "(" +
         inner + ")";
}

std::string UprobeMemoryRef(const ElfImage& image, uint64_t probe_address, uint64_t target) {
  for (const LoadSegment& seg : image.segments())
    if (probe_address >= seg.vaddr && probe_address < seg.vaddr + seg.filesz)
      return "@+" + Hex(target - (seg.vaddr - seg.offset));
  return "@+" + Hex(target);  // unreachable for a resolved probe: its address is in code
}

std::string KernelMemoryRef(const ElfImage& image, uint64_t target) {
  const ElfSymbol* sym = image.ObjectAt(target);
  if (!sym) sym = image.FunctionAt(target);
  if (sym && image.CountNamed(sym->name, sym->type) == 1) {
    uint64_t off = target - sym->value;
    return "@" + sym->name + (off ? "+" + std::to_string(off) : "");
  }
  // A static whose name several symbols share: kallsyms would find the
  // first, so count from _text, which KASLR moves with everything else.
  if (const ElfSymbol* text = image.Find("_text"); text && target >= text->value)
    return "@_text+" + std::to_string(target - text->value);
  return "@" + Hex(target);
}

std::unexpected<Error> ArgError(const ProbeSpec& spec, size_t pos, std::string what, std::string hint) {
  return std::unexpected(Error{CaretMessage("invalid argument: " + what, spec.text, pos), std::move(hint)});
}

namespace {

std::string DefaultName(const ArgExpr& e, size_t position) {
  bool plain = e.derefs.empty();
  switch (e.kind) {
    case ArgKind::kArg: return "arg" + std::to_string(e.number);
    case ArgKind::kRetval: return plain ? "retval" : "arg" + std::to_string(position);
    case ArgKind::kComm: return "comm";
    case ArgKind::kStackN: return plain ? "stack" + std::to_string(e.number) : "arg" + std::to_string(position);
    case ArgKind::kStack: return "stack";
    case ArgKind::kRegister: return plain ? e.name : "arg" + std::to_string(position);
    case ArgKind::kSymbol: {
      std::string name;
      for (char c : e.name) name += IsIdentChar(c) ? c : '_';
      return name;
    }
    default: return "arg" + std::to_string(position);
  }
}

// The base fetcharg before any dereference. `wants_memory` is set when the
// value is not already a memory reference (a string type must then add one).
Result<std::string> BaseFetch(const ProbeSpec& spec, const ArgExpr& e, const FetchContext& ctx, bool& is_memory) {
  is_memory = false;
  switch (e.kind) {
    case ArgKind::kVariable:
    case ArgKind::kVars:
    case ArgKind::kParams:
      return ArgError(spec, e.pos,
                      (e.kind == ArgKind::kVariable ? "variable '" + e.name + "'"
                       : e.kind == ArgKind::kVars   ? std::string("$vars")
                                                    : std::string("$params")) +
                          " needs debuginfo (DWARF) to be found",
                      "fetch registers instead ($argN, %REG, $retval, +OFFSET(%REG))");
    case ArgKind::kArg:
      if (ctx.retprobe) {
        if (ctx.kind == ProbeKind::kKernel && ctx.features->retprobe_args) return "$arg" + std::to_string(e.number);
        return ArgError(spec, e.pos, "$arg" + std::to_string(e.number) + " is not known when the function returns",
                        ctx.kind == ProbeKind::kUser
                            ? "add a second probe on the function's entry to record its arguments"
                            : "this kernel cannot keep arguments for return probes; probe the entry too");
      }
      if (!ctx.at_entry)
        return ArgError(spec, e.pos,
                        "$arg" + std::to_string(e.number) + " is only known at a function's entry; at " +
                            DescribePoint(spec.point) + " the registers may hold other values",
                        "probe the function itself (FUNC), or fetch the register that holds the value (%REG)");
      return x86_64::ArgumentAtEntry(static_cast<unsigned>(e.number));
    case ArgKind::kRetval:
      if (!ctx.retprobe)
        return ArgError(spec, e.pos, "$retval is only available in return probes",
                        "add %return to the probe point: " + DescribePoint(spec.point) + "%return");
      return std::string("$retval");
    case ArgKind::kComm:
      is_memory = true;  // strings already
      return std::string("$comm");
    case ArgKind::kStackN: return "$stack" + std::to_string(e.number);
    case ArgKind::kStack: return std::string("$stack");
    case ArgKind::kRegister:
      if (!x86_64::IsRegister(e.name)) {
        auto suggestion = x86_64::SuggestRegister(e.name);
        return ArgError(spec, e.pos, "unknown register '%" + e.name + "'",
                        suggestion ? "the kernel names it %" + std::string(*suggestion)
                                   : "x86-64 registers: %ax %bx %cx %dx %si %di %bp %sp %r8..%r15 %ip %flags");
      }
      return "%" + e.name;
    case ArgKind::kSymbol: {
      is_memory = true;
      if (ctx.kind == ProbeKind::kKernel)
        return "@" + e.name + (e.offset > 0 ? "+" + std::to_string(e.offset)
                               : e.offset < 0 ? std::to_string(e.offset) : "");
      const ElfSymbol* found = nullptr;
      for (const ElfSymbol& s : ctx.image->symbols())
        if (s.name == e.name && s.type != ElfSymbol::kOther && (!found || s.global)) found = &s;
      if (!found)
        return ArgError(spec, e.pos, "no symbol '" + e.name + "' in " + ctx.image->path(),
                        "list the binary's data symbols with 'nm " + ctx.image->path() + "'");
      uint64_t target = found->value + static_cast<uint64_t>(e.offset);
      return UprobeMemoryRef(*ctx.image, ctx.address, target);
    }
    case ArgKind::kAddress:
      is_memory = true;
      if (e.file_relative) {
        if (ctx.kind == ProbeKind::kKernel)
          return ArgError(spec, e.pos, "@+OFFSET (file-relative) is for user probes",
                          "give a kernel address as @0xADDRESS or @SYMBOL");
        return "@+" + Hex(e.number);
      }
      return "@" + Hex(e.number);
    case ArgKind::kImmediate:
      is_memory = true;
      if (!ctx.features->immediates)
        return ArgError(spec, e.pos, "this kernel does not support immediate values (\\IMM, Linux 6.1)");
      return "\\" + e.name;
  }
  return ArgError(spec, e.pos, "unsupported argument");
}

}  // namespace

Result<FetchArg> ConvertRawArg(const ProbeSpec& spec, size_t index, const FetchContext& ctx) {
  const ProbeArg& arg = spec.args[index];
  const ArgExpr& e = arg.expr;
  bool is_memory = false;
  std::string fetch = KP_TRY(BaseFetch(spec, e, ctx, is_memory));
  std::optional<FetchType> type;
  if (!arg.type.empty()) type = KP_TRY(CheckArgType(spec, arg, ctx));
  size_t instructions = 2;  // the base fetch and the store
  for (const ArgDeref& d : e.derefs) {
    if (d.user && ctx.kind == ProbeKind::kKernel && !ctx.features->user_deref)
      return ArgError(spec, arg.pos, "this kernel cannot dereference user memory (+uOFFSET, Linux 5.5)");
    fetch = Dereference(d.offset, d.user, fetch);
    is_memory = true;
    ++instructions;
  }
  if (type && type->IsString() && !is_memory && e.kind != ArgKind::kComm) {
    fetch = "+0(" + fetch + ")";
    ++instructions;
  }
  if (type && (type->IsString() || type->base == FetchType::kBitfield)) ++instructions;
  if (instructions > kMaxFetchInstructions)
    return ArgError(spec, arg.pos, "'" + arg.text + "' dereferences too deeply for the kernel (at most " +
                                       std::to_string(kMaxFetchInstructions - 2) + " steps)");
  FetchArg fa;
  fa.name = arg.name.empty() ? DefaultName(e, index + 1) : arg.name;
  fa.fetch = fetch;
  fa.type = arg.type;
  return fa;
}

Result<FetchType> CheckArgType(const ProbeSpec& spec, const ProbeArg& arg, const FetchContext& ctx) {
  auto parsed = ParseFetchType(arg.type);
  if (!parsed) return std::unexpected(parsed.error());
  auto supported = RequireFetchType(*ctx.features, ctx.kind, *parsed, arg.type);
  if (!supported) return ArgError(spec, arg.type_pos, supported.error().message, supported.error().hint);
  return *parsed;
}

Result<void> FinishArgs(const ProbeSpec& spec, std::vector<FetchArg>& out, const std::vector<const ProbeArg*>& from) {
  if (out.size() > kMaxProbeArgs)
    return Fail("'" + DescribePoint(spec.point) + "' has " + std::to_string(out.size()) +
                    " arguments; the kernel takes at most " + std::to_string(kMaxProbeArgs),
                "split them over several probes on the same point (name them with EVENT=)");
  for (size_t i = 0; i < out.size(); ++i) {
    const ProbeArg* arg = from[i];
    bool named = arg && !arg->name.empty();
    if (out[i].name.size() > kMaxArgNameLength) {
      if (named)
        return ArgError(spec, arg->pos, "argument name '" + arg->name + "' is longer than the kernel's " +
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
    std::string base = out[i].name.substr(0, kMaxArgNameLength - 3);
    for (int n = 1; taken(out[i].name); ++n) out[i].name = base + "_" + std::to_string(n);
  }
  return {};
}

Result<std::vector<FetchArg>> ConvertArgs(const ProbeSpec& spec, const FetchContext& ctx) {
  std::vector<FetchArg> out;
  std::vector<const ProbeArg*> from;
  for (size_t i = 0; i < spec.args.size(); ++i) {
    out.push_back(KP_TRY(ConvertRawArg(spec, i, ctx)));
    from.push_back(&spec.args[i]);
  }
  KP_TRY_VOID(FinishArgs(spec, out, from));
  return out;
}

Result<void> RequireNoDebuginfo(const ProbeSpec& spec) {
  const ProbePoint& p = spec.point;
  if (p.line || p.lazy_pattern || !p.file.empty()) {
    std::string what = p.line ? "a source line" : p.lazy_pattern ? "a lazy pattern" : "a source file";
    return Fail("'" + DescribePoint(p) + "' names " + what + ", which needs debuginfo (DWARF) to resolve",
                "probe FUNC, FUNC+OFFSET, FUNC%return or 0xADDRESS; source-level probe points need "
                "debuginfo support (see kprobectl(8))");
  }
  FetchContext no_context;
  for (const ProbeArg& arg : spec.args) {
    bool is_memory = false;
    if (NeedsDebuginfo(arg.expr)) return std::unexpected(BaseFetch(spec, arg.expr, no_context, is_memory).error());
  }
  return {};
}

}  // namespace kprobectl
