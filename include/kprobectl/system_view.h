// SPDX-License-Identifier: GPL-2.0-or-later
//
// What the running system says that resolution needs, read once by the
// command's set-up and handed to the resolve stage as plain data, so that
// the stage reads nothing itself and its tests need neither root nor a
// kernel. In: tracefs, the kernel's paths (KernelEnv), the target. Out: the
// features of this kernel's dynamic events, the event names taken, and, when
// the probes are for this machine's kernel, its build-id, kallsyms, kprobe
// blacklist, traceable functions and loaded modules.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>

#include "kprobectl/kernel_features.h"
#include "kprobectl/kernel_image.h"
#include "kprobectl/tracefs_dir.h"

namespace kprobectl {

struct Target;

struct SystemView {
  KernelFeatures features;
  std::set<std::string> existing_events;  // "group/event" the kernel has now
  // Event probes: an event's format file (events/SYSTEM/EVENT/format), the
  // events there are ("system:event", for "did you mean"), and those the
  // kernel attaches no event probe to (kprobe, uprobe and event probe
  // events, "group/event"). Null without tracefs.
  std::function<Result<std::string>(const std::string& system, const std::string& event)> event_format;
  std::function<std::vector<std::string>()> event_names;
  std::set<std::string> unattachable_events;

  // The running kernel's own lists: set when the definitions are for it
  // (not for -k -D, which only prints them for another image).
  bool running = false;
  KernelEnv env;         // its release and paths, for messages
  std::string build_id;  // hex, from its notes; empty if unknown
  KallsymsNames kallsyms;
  std::string blacklist;                           // debugfs kprobes/blacklist, as read ("" if not)
  std::optional<std::string> available_functions;  // tracefs available_filter_functions
  std::string available_functions_error;           // why it was not read: "cannot read ...: Operation not permitted"
  std::set<std::string> loaded_modules;            // /sys/module
  std::string module_build_id;  // the target module's, loaded: its build-id from /sys/module/MOD/notes (hex), or ""
  unsigned possible_cpus = 0;   // sysconf(_SC_NPROCESSORS_CONF); 0 if unknown

  // This machine's kernel's function names (/proc/kallsyms), to check a
  // name written for it when there is no image to check it against, read
  // on first use (it takes tens of milliseconds, and BTF answers most names
  // first). Null when the definitions are not for this machine's kernel;
  // its result is null when kallsyms cannot be read.
  std::function<const KallsymsNames*()> kernel_functions;
};

// Reads the view for `target` (see above). `tracefs` may be null (a dry run
// without tracefs: every feature assumed); `running` says whether the
// definitions are for this machine's kernel (they are not when it has no
// kprobe_events). Mounts debugfs when the blacklist is missing and we are
// root (best effort).
SystemView ReadSystemView(const TracefsDir* tracefs, const KernelEnv& env, const Target& target, bool running);
// The same, with the features the caller read from `tracefs` already (a
// command that reads them once for its other checks too).
SystemView ReadSystemView(const TracefsDir* tracefs, const KernelFeatures& features, const KernelEnv& env,
                          const Target& target, bool running);

}  // namespace kprobectl
