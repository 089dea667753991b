// SPDX-License-Identifier: GPL-2.0-or-later
//
// Kernel probes defined at boot, before anything can write to tracefs: the
// two forms the kernel reads. In: definitions (kprobes and kretprobes
// only). Out: the text to put in a bootconfig, as perf probe --bootconfig
// prints it, or the kernel command line's kprobe_event= parameter
// (Documentation/trace/kprobetrace.rst, "Kernel Boot Parameter"), or why a
// definition cannot be written so.
//
//   ftrace.event.kprobes.EVENT.probes = 'vfs_read+0 count=%dx:u64'
//   kprobe_event=p:probe/vfs_read,vfs_read+0,count=%dx:u64;r:probe/...
#pragma once

#include <string>
#include <vector>

#include "kprobectl/result.h"
#include "kprobectl/trace_event_def.h"

namespace kprobectl {

// The kernel's buffer for kprobe_event= is its command line's size
// (COMMAND_LINE_SIZE, 2048 on x86-64 and arm64), the terminating NUL included.
inline constexpr size_t kKernelCommandLineSize = 2048;

// User probes cannot be defined at boot: said before anything is resolved.
Result<void> RequireBootKind(ProbeKind kind);

// Every definition must be a kprobe or kretprobe. In a bootconfig the group
// is always "kprobes" (kernel/trace/trace_boot.c) and a return probe is
// SYMBOL%return; `notes` gets what the form changes (a group dropped).
Result<std::string> FormatBootconfig(const std::vector<TraceEventDef>& defs, std::vector<std::string>* notes);
// "kprobe_event=DEF;DEF...": blanks become commas, so an argument that holds
// a comma, a blank or a ';' cannot be written.
Result<std::string> FormatKprobeEventParameter(const std::vector<TraceEventDef>& defs);

}  // namespace kprobectl
