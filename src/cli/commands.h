// SPDX-License-Identifier: GPL-2.0-or-later
//
// The commands behind the CLI. Each takes the parsed options and the output
// stream and returns a Result; only RunCli prints errors.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "kprobectl/elf_image.h"
#include "kprobectl/result.h"
#include "kprobectl/trace_event_def.h"
#include "kprobectl/tracefs_dir.h"

namespace kprobectl::cli {

struct Options {
  std::string exec;       // -x BINARY
  std::string tracefs;    // --tracefs DIR
  bool force = false;     // -f
  bool quiet = false;     // -q
  bool verbose = false;   // -v
  bool dry_run = false;   // -D / --dry-run
  unsigned maxactive = 0; // --maxactive N
};

struct Streams {
  std::ostream& out;
  std::ostream& err;
};

Result<void> RunAdd(const Options& options, const std::vector<std::string>& specs, Streams io);
Result<void> RunDel(const Options& options, const std::vector<std::string>& patterns, Streams io);
Result<void> RunList(const Options& options, const std::vector<std::string>& patterns, Streams io);
Result<void> RunFuncs(const Options& options, const std::string& filter, Streams io);

// Shared by the commands.
Result<std::unique_ptr<TracefsDir>> OpenTracefs(const Options& options, bool may_mount = true);
// -x BINARY: a path, or a command name looked up in PATH.
Result<std::string> FindBinary(const std::string& name);
// "(on compute+4 in /path/demo with a b)" as perf prints it.
std::string DescribeDefinition(const TraceEventDef& def, const ElfImage* image);

}  // namespace kprobectl::cli
