// SPDX-License-Identifier: GPL-2.0-or-later
//
// Probes resolved through DWARF: ProbeSpec -> DwarfAddress (from the
// debuginfo stage) -> TraceEventDef, with variables mapped to fetchargs by
// the x86-64 table. Kernel targets are KASLR-safe: SYMBOL+OFF when the
// symbol's name is unique in the image, _text+OFF when several functions
// share it (the kernel resolves a name to its first match).
#include <map>

#include "kprobectl/debuginfo.h"
#include "kprobectl/fetch_type.h"
#include "kprobectl/glob.h"
#include "kprobectl/resolve.h"
#include "kprobectl/strings.h"
#include "kprobectl/x86_64_abi.h"

namespace kprobectl {

namespace {

Result<std::string> VariableFetchArg(const VariableFetch& f, ProbeKind kind, const ElfImage& image,
                                     const KernelFeatures& features, uint64_t probe_address) {
  std::string out;
  size_t first_deref = 0;
  switch (f.root) {
    case VariableFetch::kRegister: {
      auto reg = x86_64::DwarfRegisterName(f.dwarf_register);
      if (!reg)
        return Fail("'" + f.name + "' is in DWARF register " + std::to_string(f.dwarf_register) +
                    " (a vector or floating-point register), which the kernel cannot fetch");
      out = "%" + std::string(*reg);
      break;
    }
    case VariableFetch::kStatic: {
      if (f.derefs.empty()) return Fail("'" + f.name + "' is an address, not a value the kernel can fetch");
      uint64_t target = f.address + static_cast<uint64_t>(f.derefs[0]);
      out = kind == ProbeKind::kUser ? UprobeMemoryRef(image, probe_address, target) : KernelMemoryRef(image, target);
      first_deref = 1;
      break;
    }
    case VariableFetch::kConstant:
      if (!features.immediates)
        return Fail("'" + f.name + "' is the constant " + std::to_string(f.constant) +
                    " here, and this kernel has no immediate values (\\IMM, Linux 6.1)");
      return "\\" + std::to_string(f.constant);
  }
  for (size_t i = first_deref; i < f.derefs.size(); ++i) {
    int64_t d = f.derefs[i];
    out = Dereference(d, false, out);
  }
  return out;
}

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

std::string EventBaseFor(const ProbeSpec& spec, const DwarfAddress& at) {
  if (!spec.event.empty()) return spec.event;
  const ProbePoint& p = spec.point;
  std::string base = EventBaseFromSymbol(at.function.empty() ? p.function : at.function);
  if (p.address && at.function.empty()) return EventBase(p, "");
  if (p.line && !p.function.empty()) return base + "_L" + std::to_string(*p.line);
  if (p.line || p.lazy_pattern)
    return base + "_L" + std::to_string(at.at.line >= at.decl.line ? at.at.line - at.decl.line : at.at.line);
  return base;
}

Result<ProbeTarget> Target(ProbeKind kind, const ElfImage& image, uint64_t address) {
  if (kind == ProbeKind::kUser) {
    ProbeTarget t;
    t.kind = ProbeTarget::kFile;
    t.path = image.path();
    t.offset = KP_TRY(image.CodeFileOffset(address));
    return t;
  }
  return KernelTarget(image, address);
}

}  // namespace

Result<ProbeTarget> KernelTarget(const ElfImage& image, uint64_t address) {
  ProbeTarget t;
  if (!image.module().empty()) {
    // MOD:SYMBOL+OFF: the kernel looks the name up in that module only.
    const ElfSymbol* f = image.FunctionAt(address);
    if (!f) return Fail("no function of module " + image.module() + " holds " + Hex(address));
    if (image.CountNamed(f->name, ElfSymbol::kFunction) > 1)
      return Fail("module " + image.module() + " has " + std::to_string(image.CountNamed(f->name, ElfSymbol::kFunction)) +
                  " functions named '" + f->name + "'; the kernel would probe the first");
    t.module = image.module();
    t.symbol = f->name;
    t.offset = address - f->value;
    return t;
  }
  const ElfSymbol* sym = image.FunctionAt(address);
  if (sym && image.CountNamed(sym->name, ElfSymbol::kFunction) == 1) {
    t.symbol = sym->name;
    t.offset = address - sym->value;
    return t;
  }
  const ElfSymbol* text = image.Find("_text");
  if (!text || address < text->value)
    return Fail("no unique symbol holds " + Hex(address) + ", and the image has no _text to count from");
  t.symbol = "_text";
  t.offset = address - text->value;
  return t;
}

Result<std::vector<TraceEventDef>> BuildDwarfDefinitions(const std::vector<ProbeSpec>& specs, Debuginfo& debuginfo,
                                                         const ElfImage& image, ProbeKind kind,
                                                         const KernelFeatures& features,
                                                         const DefinitionOptions& options,
                                                         const FindOptions& find, EventNamer& namer,
                                                         std::vector<std::string>* notes) {
  if (kind == ProbeKind::kUser && image.path().find_first_of(" \t\n") != std::string::npos)
    return Fail("the path '" + image.path() + "' has a blank, which uprobe_events cannot take",
                "probe it through a symbolic link whose path has no blanks");
  std::vector<TraceEventDef> defs;
  std::string default_group = kind == ProbeKind::kUser ? UserGroupName(image.path()) : std::string(kKernelGroup);
  for (const ProbeSpec& spec : specs) {
    const ProbePoint& p = spec.point;
    if (!p.version.empty()) return Fail("'" + DescribePoint(p) + "': symbol versions need the ELF path, not DWARF");
    std::vector<DwarfAddress> addresses;
    if (p.address) {
      addresses.push_back(KP_TRY(debuginfo.AtAddress(*p.address + p.offset.value_or(0))));
    } else if (!p.function.empty() && p.function.find('.') != std::string::npos && !IsGlob(p.function)) {
      addresses = KP_TRY(ResolveClone(p, debuginfo, image, find));
      if (addresses.empty())
        return Fail("no function '" + p.function + "' in " + image.path(),
                    "list functions with 'kprobectl funcs'");
    } else {
      addresses = KP_TRY(debuginfo.Resolve(p, find));
    }
    // Unoptimized code fills its variables' stack slots in the prologue.
    bool has_variables = false;
    for (const ProbeArg& arg : spec.args) has_variables |= NeedsDebuginfo(arg.expr);
    if (has_variables && !p.line && !p.lazy_pattern && !p.offset && !p.retprobe && !p.address)
      for (DwarfAddress& at : addresses) at = debuginfo.AfterPrologue(at);
    std::map<std::string, int> seen_bases;
    for (const DwarfAddress& at : addresses) {
      TraceEventDef def;
      def.kind = kind;
      def.retprobe = p.retprobe;
      def.maxactive = p.retprobe && kind == ProbeKind::kKernel ? options.maxactive : 0;
      def.group = spec.group.empty() ? default_group : spec.group;
      std::string base = EventBaseFor(spec, at);
      def.event = KP_TRY(namer.Take(def.group, base, def.retprobe, seen_bases[base]++ > 0));
      def.target = KP_TRY(Target(kind, image, at.address));

      FetchContext ctx{kind, p.retprobe, at.entry && !at.inlined, &features, &image, at.address};
      std::vector<FetchArg> args;
      std::vector<const ProbeArg*> from;
      for (size_t i = 0; i < spec.args.size(); ++i) {
        const ProbeArg& arg = spec.args[i];
        const ArgExpr& e = arg.expr;
        if (e.kind == ArgKind::kVars || e.kind == ArgKind::kParams) {
          std::vector<std::string> skipped;
          auto all = KP_TRY(debuginfo.FetchAll(at, e.kind == ArgKind::kParams, &skipped));
          for (const VariableFetch& f : all) {
            auto fetch = VariableFetchArg(f, kind, image, features, at.address);
            if (!fetch) {
              skipped.push_back(f.name + ": " + fetch.error().message);
              continue;
            }
            args.push_back({f.name, *fetch, FormatFetchType(f.type)});
            from.push_back(nullptr);
          }
          if (notes)
            for (const std::string& s : skipped) notes->push_back(def.FullName() + ": skipped " + s);
          continue;
        }
        if (e.kind != ArgKind::kVariable) {
          FetchArg fa = KP_TRY(ConvertRawArg(spec, i, ctx));
          if (e.kind == ArgKind::kRetval && arg.type.empty() && e.derefs.empty()) fa.type = debuginfo.ReturnType(at);
          args.push_back(std::move(fa));
          from.push_back(&arg);
          continue;
        }
        std::optional<FetchType> type;
        if (!arg.type.empty()) type = KP_TRY(CheckArgType(spec, arg, ctx));
        bool want_string = type && type->IsString() && e.derefs.empty();
        auto variable = debuginfo.Fetch(at, e, want_string);
        if (!variable)
          return ArgError(spec, e.pos, variable.error().message, variable.error().hint);
        auto fetch = VariableFetchArg(*variable, kind, image, features, at.address);
        if (!fetch) return ArgError(spec, e.pos, fetch.error().message, fetch.error().hint);
        std::string text = *fetch;
        // An array type on a pointer reads what it points to.
        bool pointee = type && type->array_len && variable->c_type.ends_with("*");
        if (pointee) text = "+0(" + text + ")";
        size_t steps = variable->derefs.size() + e.derefs.size() + (pointee ? 1 : 0) +
                       (variable->type.IsString() || variable->type.base == FetchType::kBitfield ? 1 : 0);
        for (const ArgDeref& d : e.derefs)
          text = Dereference(d.offset, d.user, text);
        if (steps + 2 > kMaxFetchInstructions)
          return ArgError(spec, arg.pos, "'" + arg.text + "' dereferences too deeply for the kernel (at most " +
                                             std::to_string(kMaxFetchInstructions - 2) + " steps)");
        FetchArg fa;
        fa.name = arg.name.empty() ? variable->name : arg.name;
        fa.fetch = text;
        fa.type = arg.type.empty() ? FormatFetchType(variable->type) : arg.type;
        args.push_back(std::move(fa));
        from.push_back(&arg);
      }
      KP_TRY_VOID(FinishArgs(spec, args, from));
      def.args = std::move(args);
      defs.push_back(std::move(def));
    }
  }
  return defs;
}

}  // namespace kprobectl
