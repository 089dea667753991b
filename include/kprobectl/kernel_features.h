// SPDX-License-Identifier: GPL-2.0-or-later
//
// What this kernel's dynamic probes support, learned from the tracefs README
// (as perf does: feature detection from the README, never from versions) and
// from which control files exist. In: README text and file presence. Out:
// flags (the probes' and the hist triggers'), and checks that turn a
// missing feature into a clear error. The README is read once a command,
// at the CLI's edge, and the features passed down.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kprobectl/fetch_type.h"
#include "kprobectl/result.h"
#include "kprobectl/trace_event_def.h"

namespace kprobectl {

class TracefsDir;

// Which spellings this kernel's hist triggers take
// (Documentation/trace/histogram.rst).
struct HistSupport {
  bool hist = false;       // CONFIG_HIST_TRIGGERS
  bool buckets = false;    // .buckets=N (Linux 5.19)
  bool synthetic = false;  // CONFIG_SYNTH_EVENTS: hist --latency's pairing in the kernel
};

struct KernelFeatures {
  bool kprobe_events = false;     // CONFIG_KPROBE_EVENTS
  bool uprobe_events = false;     // CONFIG_UPROBE_EVENTS
  bool kretprobe_suffix = false;  // SYM%return
  bool kprobe_maxactive = false;  // r[maxactive]:
  bool arg_n = false;             // $argN (kprobes at function entry)
  bool retprobe_args = false;     // $argN on kernel return probes
  bool user_deref = false;        // +u<offset>(...)
  bool immediates = false;        // \imm-value
  bool ustring = false;
  bool symstr = false;
  bool bitfields = false;
  bool arrays = false;
  bool dentry_types = false;   // %pd/%pD
  bool comm = false;           // $comm
  bool stack_n = false;        // $stack<index>
  bool fprobe_events = false;  // f: function entry/exit on ftrace (Linux 6.5)
  // fprobe exits from a fixed pool of rethooks (2 per CPU unless fN: says
  // otherwise; the rest missed), as before fprobes moved onto the function
  // graph tracer. The README does not tell: the running kernel's symbols
  // do (fprobe_exit_handler, the rethook callback); unknown for another
  // kernel's -D.
  bool fprobe_maxactive = false;
  bool tprobe_events = false;   // t: probes on tracepoints (Linux 6.5)
  bool btf_args = false;        // arguments by name, the kernel reading BTF (Linux 6.5; members 6.6)
  bool ref_ctr_offset = false;  // uprobes raise an SDT semaphore: PATH:OFF(REF_CTR_OFFSET)
  // The README lists e: (event probes), which it does from Linux 5.15
  // (which brought them) wherever CONFIG_PROBE_EVENTS is set; whether the
  // kernel takes them is EventProbeSupport's to say (below).
  bool eprobe_listed = false;
  HistSupport hist;  // hist triggers, read from the same README
};

KernelFeatures ParseFeatures(std::string_view readme, bool has_kprobe_events, bool has_uprobe_events);
KernelFeatures ReadFeatures(const TracefsDir& dir);
// Everything on: for dry runs where no tracefs can be read.
KernelFeatures AllFeatures();

// Whether this kernel takes event probes (e: in dynamic_events), and how
// that is known, asked in this order. A README without e: says no: event
// probes came with Linux 5.15, and with them the README's line (a 5.10
// built with CONFIG_PROBE_EVENTS has neither). A README with e: cannot
// say yes: it lists e: wherever CONFIG_PROBE_EVENTS is set, and since
// Linux 6.17 event probes are an option of their own
// (CONFIG_EPROBE_EVENTS), so a kernel without them (this machine's 6.18)
// lists e: and refuses every definition with EINVAL, writing nothing to
// error_log. The kernel's configuration says it then (CONFIG_EPROBE_EVENTS;
// before 6.17, event probes came with CONFIG_PROBE_EVENTS); where none can
// be read, the kernel is asked.
struct EventProbeSupport {
  bool supported = false;
  std::string evidence;  // "/proc/config.gz: # CONFIG_EPROBE_EVENTS is not set"
};
std::optional<EventProbeSupport> EventProbesFromReadme(const KernelFeatures& features);
std::optional<EventProbeSupport> EventProbesFromConfig(std::string_view config, std::string_view source);
// Asks the kernel: an event probe on an event that cannot exist. A kernel
// with event probes refuses it with ENODEV ("Attached event does not
// exist", in error_log); one without, with EINVAL (no kind of dynamic event
// took the line). Neither creates anything: nothing is left to remove.
Result<EventProbeSupport> AskKernelForEventProbes(const TracefsDir& dir);
// The error for a kernel without them, with the evidence.
Result<void> RequireEventProbes(const EventProbeSupport& support);

// "this kernel has no kprobe_events (CONFIG_KPROBE_EVENTS)" and friends.
Result<void> RequireProbeKind(const KernelFeatures& features, ProbeKind kind);
// Whether `type` can be fetched by this kind of probe on this kernel.
Result<void> RequireFetchType(const KernelFeatures& features, ProbeKind kind, const FetchType& type,
                              std::string_view type_text);

}  // namespace kprobectl
