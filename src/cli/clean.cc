// SPDX-License-Identifier: GPL-2.0-or-later
//
// clean, and the same done quietly by every command that writes to tracefs:
// removes what a kprobectl trace that was killed left behind (leftovers.h).
#include <unistd.h>

#include "commands.h"
#include "kprobectl/kernel_image.h"
#include "kprobectl/leftovers.h"

namespace kprobectl::cli {

namespace {

Result<size_t> RemoveLeftovers(const TracefsDir& dir, const Options& options, Streams io) {
  std::string proc = options.env.proc;
  auto alive = [&](const TraceRun& run) {
    if (run.pid == getpid()) return true;
    auto now = ProcessRun(proc, run.pid);
    return now && (!run.start_time || !now->start_time || *now->start_time == *run.start_time);
  };
  auto log = [&](std::string_view line) {
    if (options.verbose) io.err << line << "\n";
  };
  auto leftovers = KP_TRY(FindLeftovers(dir, options.runtime_dir, alive));
  for (const Leftover& leftover : leftovers) {
    std::string account = KP_TRY(RemoveLeftover(dir, leftover, log));
    if (!options.quiet) io.err << "kprobectl: " << account << "\n";
  }
  return leftovers.size();
}

}  // namespace

Result<void> CleanLeftovers(const TracefsDir& dir, const Options& options, Streams io) {
  (void)KP_TRY(RemoveLeftovers(dir, options, io));
  return {};
}

Result<void> RunClean(const Options& options, Streams io) {
  auto dir = KP_TRY(OpenTracefs(options));
  size_t n = KP_TRY(RemoveLeftovers(*dir, options, io));
  if (n == 0 && !options.quiet) io.err << "Nothing to clean: no kprobectl trace left anything behind.\n";
  return {};
}

}  // namespace kprobectl::cli
