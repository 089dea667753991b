// SPDX-License-Identifier: GPL-2.0-or-later
//
// tp:NAME: a probe on a kernel tracepoint (t: in dynamic_events, Linux
// 6.5), with the tracepoint's arguments by name and their members with
// -> and . (Linux 6.6): the kernel itself reads them through its BTF, so
// kprobectl passes them as written, checked for what the kernel takes.
// A tracepoint is not a function: the kprobe blacklist and notrace do not
// apply, and it has no return.
#include "kprobectl/strings.h"
#include "resolve_internal.h"

namespace kprobectl::resolve {

namespace {

constexpr std::string_view kArgsHint =
    "a tracepoint probe's arguments are the tracepoint's parameters by name, with ->member and .member, or $comm";

Result<TypedFetch> TracepointArg(const ProbeSpec& spec, const ProbeArg& arg, const KernelFeatures& features) {
  const ArgExpr& e = arg.expr;
  TypedFetch out;
  if (e.kind == ArgKind::kComm && e.derefs.empty()) {
    out.root = FetchRoot::Of(FetchRoot::kComm);
    out.name = arg.name.empty() ? "comm" : arg.name;
  } else if (e.kind == ArgKind::kVariable && e.derefs.empty()) {
    std::string path = e.name;
    for (const ArgAccessor& a : e.accessors) {
      if (a.kind == ArgAccessor::kIndex)
        return ArgError(spec, a.pos, "the kernel reads a tracepoint's arguments by name, without [index]",
                        std::string(kArgsHint));
      path += (a.kind == ArgAccessor::kArrow ? "->" : ".") + a.member;
    }
    out.root = FetchRoot::Named(FetchRoot::kKernelName, path);
    out.name = !arg.name.empty() ? arg.name : e.accessors.empty() ? e.name : e.accessors.back().member;
  } else {
    return ArgError(spec, e.pos, "'" + arg.text + "' is not something a tracepoint probe can read",
                    std::string(kArgsHint));
  }
  if (!arg.type.empty()) {
    auto type = ParseFetchType(arg.type);
    if (!type) return std::unexpected(type.error());
    auto supported = RequireFetchType(features, ProbeKind::kKernel, *type, arg.type);
    if (!supported) return ArgError(spec, arg.type_pos, supported.error().message, supported.error().hint);
    out.type = *type;
  }
  return out;
}

}  // namespace

Result<std::vector<ResolvedLocation>> LocateTracepoint(const ProbeSpec& spec, const Target& target,
                                                       const SystemView& system) {
  const std::string& name = spec.point.tracepoint;
  if (!target.kernel())
    return Fail("'tp:" + name + "' is a kernel tracepoint; -x probes user space", "leave -x out for tracepoints");
  if (!system.features.tprobe_events)
    return Fail("this kernel has no tracepoint probes (t: in dynamic_events, CONFIG_PROBE_EVENTS_BTF_ARGS, Linux 6.5)",
                "use the tracepoint's own event (kprobectl trace SYSTEM:NAME), or probe the function that fires it");
  if (!spec.args.empty() && !system.features.btf_args)
    return Fail("this kernel cannot read a tracepoint probe's arguments by name (BTF arguments, Linux 6.5)");
  ResolvedLocation loc;
  loc.target.kind = ProbeTarget::kSymbol;
  loc.target.symbol = name;
  loc.origin.function = name;
  loc.origin.source = "the tracepoint";
  loc.event_base = spec.event.empty() ? name : spec.event;
  std::vector<const ProbeArg*> from;
  for (const ProbeArg& arg : spec.args) {
    loc.args.push_back(KP_TRY(TracepointArg(spec, arg, system.features)));
    from.push_back(&arg);
  }
  KP_TRY_VOID(FinishArgs(spec, loc.args, from));
  return std::vector<ResolvedLocation>{std::move(loc)};
}

}  // namespace kprobectl::resolve
