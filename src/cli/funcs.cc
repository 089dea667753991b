// SPDX-License-Identifier: GPL-2.0-or-later
//
// funcs: the functions of a binary or kernel image that can be probed.
#include <optional>

#include "commands.h"
#include "kprobectl/glob.h"

namespace kprobectl::cli {

Result<void> RunFuncs(const Options& options, const std::string& filter_text, Streams io) {
  // -x, -k, -m, or else the running kernel's image, found as for add.
  Target target = KP_TRY(OpenTargetOf(options, io.err));
  // perf's default filter hides compiler-internal names.
  auto filter = KP_TRY(GlobFilter::Parse(filter_text.empty() ? "!_*" : filter_text));
  // BTF alone has no addresses: the running kernel's own lists say what
  // ftrace traces and what kprobes refuse.
  std::optional<SystemView> running;
  if (!target.image && target.btf && target.kind == Target::kRunningKernel) {
    auto dir = OpenTracefs(options, false);
    running = ReadSystemView(dir ? dir->get() : nullptr, KernelEnv::Running(), target, dir.has_value());
    if (!running->available_functions && !options.quiet)
      io.err << "kprobectl: note: no available_filter_functions to read: the list has every function of the BTF, "
                "also those ftrace cannot trace\n";
  }
  for (const std::string& name : KP_TRY(ProbeableFunctions(target, filter, running ? &*running : nullptr)))
    io.out << name << "\n";
  return {};
}

}  // namespace kprobectl::cli
