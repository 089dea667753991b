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

Result<std::vector<ResolvedLocation>> Locate(const ProbeSpec& written, Target& target, const SystemView& system,
                                             const ResolveOptions& options, Resolution& out) {
  std::vector<std::string>* notes = &out.notes;
  if (!written.point.tracepoint.empty())
    if (auto marker = MarkerOfProviderTp(written, target))
      return resolve::LocateSdt(*marker, target, system, &out.left_out);
  if (!written.point.tracepoint.empty()) return resolve::LocateTracepoint(written, target, system);
  if (!written.point.event_name.empty()) return resolve::LocateEventProbe(written, target, system);
  if (!written.point.sdt_name.empty()) return resolve::LocateSdt(written, target, system, &out.left_out);
  ProbeSpec spec = AsWritten(written, target);
  // Never a uretprobe on Go code (go_returns.cc says why): a probe on
  // each of the function's return instructions instead.
  if (spec.point.retprobe && target.go())
    return resolve::LocateGoReturns(spec, target, target.image->go_register_abi(), [&](const ProbeSpec& at) {
      ResolveOptions at_return = options;
      at_return.go_return_sites = at.point.offset.has_value();
      return Locate(at, target, system, at_return, out);
    });
  // A kernel without DWARF: its BTF knows parameters and types.
  if (!target.debuginfo && target.btf && spec.point.version.empty())
    return resolve::LocateWithBtf(spec, target, system, options, notes);
  // Variables, lines, files: only the DWARF knows them.
  bool needs_dwarf = NeedsDebuginfo(spec) || options.for_variables;
  if (!target.image) {
    if (needs_dwarf) KP_TRY_VOID(CheckKernelFunction(spec.point.function, target, system));
    if (needs_dwarf && !target.debuginfo_error.message.empty())
      return std::unexpected(NeedsDebuginfo(spec.point, target, target.debuginfo_error.hint));
    return LocateByName(spec, target, system, options);
  }
  if (target.debuginfo && spec.point.version.empty()) {
    auto dwarf = LocateWithDwarf(spec, target, system, options);
    if (dwarf) LeaveOutSplitParts(spec, *dwarf, &out.left_out);
    // The symbol table stands in where the DWARF has no such function, not
    // where it knows an argument cannot be fetched ($retval of a double).
    if (dwarf || needs_dwarf || dwarf.error().message.starts_with("invalid argument: ")) return dwarf;
    auto symbols = LocateWithSymbols(spec, target, system, options);
    if (!symbols) return std::unexpected(dwarf.error());
    if (notes) notes->push_back("'" + DescribePoint(spec.point) + "' from the symbol table: " + dwarf.error().message);
    return symbols;
  }
  // Without DWARF, the reason there is none; when nobody said (a target
  // made without looking), the symbol table's own explanation.
  // (Go writes DWARF unless told not to: -ldflags=-w or -s.)
  if (needs_dwarf && !target.debuginfo_error.message.empty())
    return std::unexpected(NeedsDebuginfo(spec.point, target,
                                          !target.go()
                                              ? target.debuginfo_error.hint
                                              : "build it without -ldflags=-w or -s (Go writes DWARF by default), or "
                                                "fetch $argN and $retval, which follow Go's ABI without it"));
  return LocateWithSymbols(spec, target, system, options);
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
