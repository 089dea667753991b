// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/kernel_features.h"
#include "kprobectl/strings.h"
#include "kprobectl/tracefs_dir.h"

namespace kprobectl {

KernelFeatures ParseFeatures(std::string_view readme, bool has_kprobe_events, bool has_uprobe_events) {
  auto has = [&](std::string_view s) { return readme.find(s) != std::string_view::npos; };
  KernelFeatures f;
  f.kprobe_events = has_kprobe_events;
  f.uprobe_events = has_uprobe_events;
  f.kretprobe_suffix = has("[+<offset>]%return");
  f.kprobe_maxactive = has("r[maxactive]");
  f.arg_n = has("$arg<N>");
  f.retprobe_args = has("kernel return probes support: $retval, $arg<N>");
  f.user_deref = has("+|-[u]<offset>");
  f.immediates = has("\\imm-value");
  f.ustring = has("ustring");
  f.symstr = has("symstr");
  f.bitfields = has("b<bit-width>@<bit-offset>/<container-size>");
  f.arrays = has("<type>\\[<array-size>\\]");
  f.dentry_types = has("%pd/%pD");
  f.comm = has("$comm");
  f.stack_n = has("$stack<index>");
  f.fprobe_events = has("f[:[<group>/][<event>]]") || has("f[maxactive][:[<group>/][<event>]]");
  f.tprobe_events = has("t[:[<group>/][<event>]]");
  f.btf_args = has("<argname>");
  f.ref_ctr_offset = has("ref_ctr_offset");
  // 5.15-6.0 listed "e[:[<group>/]<event>] <attached-group>.<attached-event>",
  // 6.1 on "e[:[<group>/][<event>]] ..." (the event name made optional).
  f.eprobe_listed = has("<attached-group>.<attached-event>");
  // The README's text on hist triggers is there only with
  // CONFIG_HIST_TRIGGERS, on synthetic events only with CONFIG_SYNTH_EVENTS
  // (kernel/trace/trace.c, readme_msg); .buckets came with Linux 5.19.
  f.hist.hist = has("hist trigger");
  f.hist.buckets = has(".buckets=");
  f.hist.synthetic = has("synthetic_events");
  return f;
}

KernelFeatures ReadFeatures(const TracefsDir& dir) {
  auto readme = dir.Read("README");
  return ParseFeatures(readme ? *readme : std::string(), dir.Exists("kprobe_events"), dir.Exists("uprobe_events"));
}

KernelFeatures AllFeatures() {
  KernelFeatures f;
  for (bool* flag : {&f.kprobe_events, &f.uprobe_events, &f.kretprobe_suffix, &f.kprobe_maxactive,
                     &f.arg_n,         &f.retprobe_args, &f.user_deref,       &f.immediates,
                     &f.ustring,       &f.symstr,        &f.bitfields,        &f.arrays,
                     &f.dentry_types,  &f.comm,          &f.stack_n,          &f.fprobe_events,
                     &f.tprobe_events, &f.btf_args,      &f.ref_ctr_offset,   &f.eprobe_listed,
                     &f.hist.hist,     &f.hist.buckets,  &f.hist.synthetic})
    *flag = true;
  return f;
}

std::optional<EventProbeSupport> EventProbesFromReadme(const KernelFeatures& features) {
  if (features.eprobe_listed) return std::nullopt;
  return EventProbeSupport{false, "its tracefs README lists no e: definitions"};
}

std::optional<EventProbeSupport> EventProbesFromConfig(std::string_view config, std::string_view source) {
  auto value = [&](std::string_view name) -> std::optional<std::string> {
    std::string set = "CONFIG_" + std::string(name) + "=";
    std::string unset = "# CONFIG_" + std::string(name) + " is not set";
    for (const std::string& line : SplitLines(config)) {
      if (line.starts_with(set)) return line;
      if (Trim(line) == unset) return unset;
    }
    return std::nullopt;
  };
  std::string from(source);
  if (auto own = value("EPROBE_EVENTS")) return EventProbeSupport{own->ends_with("=y"), from + ": " + *own};
  // Before Linux 6.17 they were part of the probe events.
  if (auto probes = value("PROBE_EVENTS"))
    return EventProbeSupport{probes->ends_with("=y"), from + ": " + *probes +
                                                          " (and no CONFIG_EPROBE_EVENTS, "
                                                          "which Linux 6.17 split off: event probes come with it)"};
  return std::nullopt;
}

Result<EventProbeSupport> AskKernelForEventProbes(const TracefsDir& dir) {
  if (!dir.Exists("dynamic_events"))
    return EventProbeSupport{false, "tracefs has no dynamic_events (CONFIG_DYNAMIC_EVENTS)"};
  // Valid names, so that only the attached event is wrong.
  std::string line = "e:kprobectl_feature/probe kprobectl_no_system.kprobectl_no_event";
  auto written = dir.Append("dynamic_events", line + "\n");
  if (written) {  // cannot happen; take it back all the same
    (void)dir.Append("dynamic_events", "-:kprobectl_feature/probe\n");
    return EventProbeSupport{true, "the kernel took an event probe"};
  }
  const std::string& why = written.error().message;
  if (why.find("No such device") != std::string::npos)
    return EventProbeSupport{true, "the kernel looked for the event an event probe named (ENODEV)"};
  if (why.find("Invalid argument") != std::string::npos)
    return EventProbeSupport{false,
                             "the kernel refused an event probe's definition outright (EINVAL: no kind of "
                             "dynamic event took the 'e:' line)"};
  return std::unexpected(written.error());
}

Result<void> RequireEventProbes(const EventProbeSupport& support) {
  if (support.supported) return {};
  return Fail(
      "this kernel has no event probes (e: in dynamic_events, Linux 5.15; CONFIG_EPROBE_EVENTS): " + support.evidence,
      "trace the event itself (kprobectl trace SYSTEM:EVENT), or boot Linux 5.15 or later built with "
      "CONFIG_EPROBE_EVENTS=y (CONFIG_PROBE_EVENTS before 6.17); -D prints the definitions");
}

Result<void> RequireProbeKind(const KernelFeatures& f, ProbeKind kind) {
  if (kind == ProbeKind::kKernel && !f.kprobe_events)
    return Fail("this kernel has no kprobe_events (CONFIG_KPROBE_EVENTS)",
                "probe a user-space program with -x BINARY, or boot a kernel built with "
                "CONFIG_KPROBES=y and CONFIG_KPROBE_EVENTS=y");
  if (kind == ProbeKind::kUser && !f.uprobe_events)
    return Fail("this kernel has no uprobe_events (CONFIG_UPROBE_EVENTS)",
                "boot a kernel built with CONFIG_UPROBES=y and CONFIG_UPROBE_EVENTS=y");
  return {};
}

Result<void> RequireFetchType(const KernelFeatures& f, ProbeKind kind, const FetchType& type,
                              std::string_view type_text) {
  std::string name(type_text);
  auto missing = [&](std::string_view what) {
    return Fail("this kernel does not support the type '" + name + "' (" + std::string(what) + ")",
                "the tracefs README lists the types this kernel knows");
  };
  bool kernel_only = type.base == FetchType::kSymbol || type.base == FetchType::kSymStr ||
                     type.base == FetchType::kDentry || type.base == FetchType::kFile ||
                     type.base == FetchType::kUString;
  if (kernel_only && kind == ProbeKind::kUser)
    return Fail("type '" + name + "' is for kernel probes; user probes cannot use it",
                type.base == FetchType::kUString ? "user probes read user memory already: use :string"
                                                 : "fetch the value as an integer (:x64) instead");
  if (type.base == FetchType::kUString && !f.ustring) return missing("ustring, Linux 5.5");
  if (type.base == FetchType::kSymStr && !f.symstr) return missing("symstr, Linux 6.2");
  if ((type.base == FetchType::kDentry || type.base == FetchType::kFile) && !f.dentry_types)
    return missing("%pd/%pD, Linux 6.10");
  if (type.base == FetchType::kBitfield && !f.bitfields) return missing("bitfields, Linux 4.11");
  if (type.array_len && !f.arrays) return missing("arrays, Linux 4.20");
  return {};
}

}  // namespace kprobectl
