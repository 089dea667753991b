// SPDX-License-Identifier: GPL-2.0-or-later
//
// The order of sources, for each spec. DWARF first where the target has it:
// it knows inlined copies, clones and variables. A plain symbol the DWARF
// lacks (assembly, another language) or a versioned one falls back to the
// symbol table; a spec that needs what only DWARF knows gets the DWARF's
// error, or, without DWARF, the reason there is none. The running kernel
// whose image was not found is asked by name.
#include <algorithm>
#include <map>
#include <optional>

#include "kprobectl/cxx_names.h"
#include "kprobectl/strings.h"
#include "resolve_internal.h"

namespace kprobectl {

namespace {

using resolve::LocateByName;
using resolve::LocateWithDwarf;
using resolve::LocateWithSymbols;

// "clamp.constprop.0:3" reads as SRC:ALN (a '.' before the ':'); when no
// path is given and the name is a function of the image, it is FUNC:RLN.
ProbeSpec AsWritten(const ProbeSpec& spec, const Target& target) {
  const ProbePoint& p = spec.point;
  if (p.file.empty() || !p.function.empty() || p.file.find('/') != std::string::npos || !target.image) return spec;
  const ElfSymbol* s = target.image->Find(p.file);
  if (!s || s->type != ElfSymbol::kFunction) return spec;
  ProbeSpec out = spec;
  out.point.function = p.file;
  out.point.file.clear();
  return out;
}

// tp:NAME in a user binary with a marker of provider "tp" by that name
// is that marker; else it is a tracepoint, the kernel's.
std::optional<ProbeSpec> MarkerOfProviderTp(const ProbeSpec& spec, const Target& target) {
  if (target.kernel() || !target.image) return std::nullopt;
  for (const SdtNote& note : target.image->sdt_notes())
    if (note.provider == "tp" && note.name == spec.point.tracepoint) {
      ProbeSpec out = spec;
      out.point.sdt_provider = "tp";
      out.point.sdt_name = spec.point.tracepoint;
      out.point.tracepoint.clear();
      return out;
    }
  return std::nullopt;
}

// gcc's partial inlining splits a function in two: a head, inlined into
// callers or kept as FUNC, and the rest, FUNC.part.N, entered from the
// head only. A call of FUNC begins at the head; FUNC.part.N is no copy of
// it (an entry probe there fires a second time for one call, a return
// probe a second time for one return), unless no head of that function is
// probed (then the part is all there is of it). Lines in it are FUNC's.
bool IsSplitPart(const ResolvedLocation& loc) {
  const ProbeOrigin& o = loc.origin;
  size_t part = o.symbol.find(".part.");
  if (o.inlined || part == std::string::npos || o.function.empty()) return false;
  std::string base = o.symbol.substr(0, part);
  return base == o.function || LastScope(SymbolCxxName(base).qualified) == LastScope(o.function);
}

bool SameFunction(const ResolvedLocation& a, const ResolvedLocation& b) {
  return a.origin.function == b.origin.function && a.origin.decl.file == b.origin.decl.file &&
         a.origin.decl.line == b.origin.decl.line;
}

void LeaveOutSplitParts(const ProbeSpec& spec, std::vector<ResolvedLocation>& locations,
                        std::vector<std::string>* left_out) {
  const ProbePoint& p = spec.point;
  if (p.line || p.lazy_pattern || p.address || p.function.find(".part.") != std::string::npos) return;
  std::vector<bool> drop(locations.size(), false);
  for (size_t i = 0; i < locations.size(); ++i) {
    if (!IsSplitPart(locations[i])) continue;
    drop[i] = std::any_of(locations.begin(), locations.end(), [&](const ResolvedLocation& other) {
      return !IsSplitPart(other) && SameFunction(other, locations[i]);
    });
    if (drop[i])
      left_out->push_back("left out " + DisplaySymbol(locations[i].origin.symbol) + ": the rest of " +
                          locations[i].origin.function +
                          "'s code, split off by gcc and entered from its head only; a call of " +
                          locations[i].origin.function + " begins, and is probed, at the head");
  }
  std::vector<ResolvedLocation> kept;
  for (size_t i = 0; i < locations.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(locations[i]));
  locations = std::move(kept);
}

// A point that needs the DWARF the target has not: why there is none, and
// for a kernel, why no BTF stands in (a module's built for another kernel
// than the one probed) when that was looked for.
Error NeedsDebuginfo(const ProbePoint& point, const Target& target, const std::string& hint) {
  Error error{"'" + DescribePoint(point) + "' needs debuginfo: " + target.debuginfo_error.message, hint};
  if (!target.kernel() || target.btf_error.message.empty()) return error;
  error.message += ", and no BTF stands in: " + target.btf_error.message;
  if (!target.btf_error.hint.empty()) error.hint += (error.hint.empty() ? "" : "; or ") + target.btf_error.hint;
  return error;
}

// Resolution's sources (docs/architecture.md, "How to add a probe
// source"), one signature each: asked in kSources' order, each answers the
// spec (its places, or why it cannot have any) or passes it to the next
// (nullopt: not its kind of spec, or not its kind of target). The symbol
// table answers what none of them took.
struct LocateAsk {
  const ProbeSpec& written;  // as the user wrote it
  ProbeSpec spec;            // as the target spells it (AsWritten)
  Target& target;
  const SystemView& system;
  const ResolveOptions& options;
  Resolution& out;  // what is left out, and notes
};
using Located = Result<std::vector<ResolvedLocation>>;
using Source = std::optional<Located> (*)(const LocateAsk&);

Located Locate(const ProbeSpec& written, Target& target, const SystemView& system, const ResolveOptions& options,
               Resolution& out);

// tp:NAME in a user binary with a USDT marker tp:NAME.
std::optional<Located> FromProviderTpMarker(const LocateAsk& a) {
  if (a.written.point.tracepoint.empty()) return std::nullopt;
  auto marker = MarkerOfProviderTp(a.written, a.target);
  if (!marker) return std::nullopt;
  return resolve::LocateSdt(*marker, a.target, a.system, &a.out.left_out);
}

// tp:NAME: the kernel's tracepoint.
std::optional<Located> FromTracepoint(const LocateAsk& a) {
  if (a.written.point.tracepoint.empty()) return std::nullopt;
  return resolve::LocateTracepoint(a.written, a.target, a.system);
}

// ev:SYSTEM:EVENT.
std::optional<Located> FromEventProbe(const LocateAsk& a) {
  if (a.written.point.event_name.empty()) return std::nullopt;
  return resolve::LocateEventProbe(a.written, a.target, a.system);
}

// %PROVIDER:NAME, sdt_PROVIDER:NAME: a USDT marker's sites.
std::optional<Located> FromSdt(const LocateAsk& a) {
  if (a.written.point.sdt_name.empty()) return std::nullopt;
  return resolve::LocateSdt(a.written, a.target, a.system, &a.out.left_out);
}

// Variables, lines, files: only the DWARF knows them.
bool NeedsDwarf(const LocateAsk& a) { return NeedsDebuginfo(a.spec) || a.options.for_variables; }

// What needs the DWARF the target has not: why there is none. (Go writes
// DWARF unless told not to: -ldflags=-w or -s.)
std::optional<Error> WithoutDwarf(const LocateAsk& a) {
  if (!NeedsDwarf(a) || a.target.debuginfo_error.message.empty()) return std::nullopt;
  return NeedsDebuginfo(a.spec.point, a.target,
                        !a.target.go() ? a.target.debuginfo_error.hint
                                       : "build it without -ldflags=-w or -s (Go writes DWARF by default), or "
                                         "fetch $argN and $retval, which follow Go's ABI without it");
}

// Never a uretprobe on Go code (go_returns.cc says why): a probe on each
// of the function's return instructions instead, each resolved as a point.
std::optional<Located> FromGoReturns(const LocateAsk& a) {
  if (!a.spec.point.retprobe || !a.target.go()) return std::nullopt;
  // Said of the point written, not of the return instructions it becomes.
  if (!a.target.debuginfo)
    if (auto why = WithoutDwarf(a)) return std::unexpected(*why);
  return resolve::LocateGoReturns(a.spec, a.target, a.target.image->go_register_abi(), [&a](const ProbeSpec& at) {
    ResolveOptions at_return = a.options;
    at_return.go_return_sites = at.point.offset.has_value();
    return Locate(at, a.target, a.system, at_return, a.out);
  });
}

// A kernel without DWARF: its BTF knows parameters and types.
std::optional<Located> FromBtf(const LocateAsk& a) {
  if (a.target.debuginfo || !a.target.btf || !a.spec.point.version.empty()) return std::nullopt;
  return resolve::LocateWithBtf(a.spec, a.target, a.system, a.options, &a.out.notes);
}

// No image (the running kernel's not found): places by name, from kallsyms.
std::optional<Located> FromNames(const LocateAsk& a) {
  if (a.target.image) return std::nullopt;
  bool needs_dwarf = NeedsDwarf(a);
  if (needs_dwarf) KP_TRY_VOID(CheckKernelFunction(a.spec.point.function, a.target, a.system));
  if (needs_dwarf && !a.target.debuginfo_error.message.empty())
    return std::unexpected(NeedsDebuginfo(a.spec.point, a.target, a.target.debuginfo_error.hint));
  return LocateByName(a.spec, a.target, a.system, a.options);
}

// The DWARF; the symbol table stands in where the DWARF has no such
// function, not where it knows an argument cannot be fetched ($retval of a
// double), nor for what only the DWARF knows.
std::optional<Located> FromDwarf(const LocateAsk& a) {
  if (!a.target.debuginfo || !a.spec.point.version.empty()) return std::nullopt;
  auto dwarf = LocateWithDwarf(a.spec, a.target, a.system, a.options);
  if (dwarf) LeaveOutSplitParts(a.spec, *dwarf, &a.out.left_out);
  if (dwarf || NeedsDwarf(a) || dwarf.error().message.starts_with("invalid argument: ")) return dwarf;
  auto symbols = LocateWithSymbols(a.spec, a.target, a.system, a.options);
  if (!symbols) return std::unexpected(dwarf.error());
  a.out.notes.push_back("'" + DescribePoint(a.spec.point) + "' from the symbol table: " + dwarf.error().message);
  return symbols;
}

constexpr Source kSources[] = {FromProviderTpMarker, FromTracepoint, FromEventProbe, FromSdt,
                               FromGoReturns,        FromBtf,        FromNames,      FromDwarf};

// What no source took: the symbol table's places. Without DWARF, the
// reason there is none; when nobody said (a target made without looking),
// the symbol table's own explanation.
Located FromSymbols(const LocateAsk& a) {
  if (auto why = WithoutDwarf(a)) return std::unexpected(*why);
  return LocateWithSymbols(a.spec, a.target, a.system, a.options);
}

Located Locate(const ProbeSpec& written, Target& target, const SystemView& system, const ResolveOptions& options,
               Resolution& out) {
  LocateAsk ask{written, AsWritten(written, target), target, system, options, out};
  for (Source source : kSources)
    if (auto located = source(ask)) return std::move(*located);
  return FromSymbols(ask);
}

Result<void> CheckMaxactive(const Target& target, const SystemView& system, const ResolveOptions& options) {
  if (!options.maxactive) return {};
  if (!target.kernel()) return Fail("--maxactive is for kernel return probes", "user return probes have no such limit");
  if (!system.features.kprobe_maxactive) return Fail("this kernel does not take --maxactive for return probes");
  return {};
}

// The second and later places with one name base are EV_1, EV_2... as perf
// numbers them; counted after the kernel's policy left some out.
void MarkExtras(ResolvedProbe& probe) {
  std::map<std::string, int> seen;
  for (ResolvedLocation& loc : probe.locations) loc.extra = seen[loc.event_base]++ > 0;
}

}  // namespace

Result<Resolution> Resolve(const std::vector<ProbeSpec>& specs, Target& target, const SystemView& system,
                           const ResolveOptions& options) {
  KP_TRY_VOID(CheckMaxactive(target, system, options));
  Resolution out;
  for (const ProbeSpec& spec : specs) {
    ResolvedProbe probe;
    probe.spec = spec;
    probe.kind = target.probe_kind();
    // Go's returns are probed at their instructions, as plain probes.
    probe.retprobe = spec.point.retprobe && !target.go();
    probe.maxactive = spec.point.retprobe && target.kernel() ? options.maxactive : 0;
    bool event_probe = !spec.point.event_name.empty();
    // An event probe's group is the kernel's own default for them.
    probe.group = !spec.group.empty() ? spec.group
                  : event_probe       ? std::string(kEventProbeGroup)
                  : target.kernel()   ? std::string(kKernelGroup)
                                      : UserGroupName(target.path);
    auto located = Locate(spec, target, system, options, out);
    if (!located) return std::unexpected(resolve::RefusedByName(spec, target, system).value_or(located.error()));
    probe.locations = std::move(*located);
    if (target.go()) KP_TRY_VOID(resolve::PastGoStackChecks(probe.locations, target));
    if (!spec.point.tracepoint.empty() && target.kernel()) probe.type = ProbeType::kTracepoint;
    if (event_probe) probe.type = ProbeType::kEventProbe;
    // A marker's events are perf's: group sdt_PROVIDER.
    if (spec.group.empty() && !probe.locations.empty() && !probe.locations[0].origin.marker.empty()) {
      const std::string& marker = probe.locations[0].origin.marker;
      probe.group = marker.substr(0, marker.find(':'));
    }
    out.probes.push_back(std::move(probe));
  }
  if (options.fprobe && !target.kernel())
    return Fail("--fprobe is for kernel functions", "user-space probes are uprobes");
  if (target.kernel()) KP_TRY_VOID(resolve::ApplyKernelPolicy(out.probes, target, system, options, &out.left_out));
  if (options.fprobe) KP_TRY_VOID(resolve::MakeFprobes(out.probes, *target.arch, system, &out.notes));
  for (const ResolvedProbe& probe : out.probes)
    if (options.max_probes && probe.locations.size() > options.max_probes)
      return Fail("'" + probe.spec.text + "' makes " + std::to_string(probe.locations.size()) +
                      " probes, more than the limit of " + std::to_string(options.max_probes),
                  "raise the limit with --max-probes " + std::to_string(probe.locations.size()) +
                      " (as perf's), or narrow the probe point");
  for (ResolvedProbe& probe : out.probes) MarkExtras(probe);
  return out;
}

}  // namespace kprobectl
