// SPDX-License-Identifier: GPL-2.0-or-later
//
// funcs: the functions of a binary or kernel image that can be probed.
#include "commands.h"
#include "kprobectl/glob.h"

namespace kprobectl::cli {

Result<void> RunFuncs(const Options& options, const std::string& filter_text, Streams io) {
  // -x, -k, -m, or else the running kernel's image, found as for add.
  Target target = KP_TRY(OpenTargetOf(options, io.err));
  // perf's default filter hides compiler-internal names.
  auto filter = KP_TRY(GlobFilter::Parse(filter_text.empty() ? "!_*" : filter_text));
  for (const std::string& name : KP_TRY(ProbeableFunctions(target, filter))) io.out << name << "\n";
  return {};
}

}  // namespace kprobectl::cli
