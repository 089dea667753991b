// SPDX-License-Identifier: GPL-2.0-or-later
//
// The command line: parses argv (CLI11 stays in cli.cc), runs one command,
// prints its one error as "kprobectl: error: ..." / "  hint: ...", and returns
// the exit status. Streams are passed in so tests run the whole CLI in-process.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "kprobectl/kernel_image.h"

namespace kprobectl {

// `env` is the running system every command reads (KernelEnv::Running() for
// this machine's; tests pass a prepared tree).
int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, const KernelEnv& env);
// This machine's.
int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace kprobectl
