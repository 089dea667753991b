// SPDX-License-Identifier: GPL-2.0-or-later
//
// The kernel image under test and kprobectl run on it, offline (-k).
// KP_VM_KERNEL_INFO names a file of "VERSION VMLINUZ VMLINUX"
// (tests/vm/kernel-info writes the VM's; any Debian -dbg vmlinux will do).
// Its facts (kernel_facts.h) are read once per process. A test whose
// subject this image lacks (no function split in hot and cold parts, say)
// skips saying what is missing: when the run names the cases it runs, as
// ctest runs one per process, with exit status 4, reported as skipped;
// when one process runs them all, as a warning, and the run goes on.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kernel_facts.h"
#include "test_support.h"
#include "vmlinux_expect.h"

namespace kprobectl::test {

std::string Vmlinux();  // the image's path, or skip (fail in CI) when the set-up could not fetch it
const KernelFacts& Facts();
CliResult Run(const std::vector<std::string>& args);

// Ends the test case as skipped, saying why; see above. Call as
// `return SkipCase(...)`, before the case checks anything (a case that
// checked some of its subjects says what it could not check with WARN).
void SkipCase(const std::string& reason);

// A test's subject: the first of `preferred` (the 6.1 kernel's) for which
// `fits` holds, else the first function with a copy `copy_wanted` picks
// (KernelFacts::FindCopies) for which it holds; nothing when none does.
std::optional<std::string> Subject(const std::vector<std::string>& preferred,
                                   const std::function<bool(Dwarf_Die*, Dwarf_Die*)>& copy_wanted,
                                   const std::function<bool(const std::string&)>& fits);

// An expectation the oracle stated (fails the test saying why when not).
std::string Stated(const Expected& expected, const std::string& what);

// The stdout lines that begin with a digit or a space: a `line` listing's
// numbered lines, their numbers.
std::vector<std::string> ListedLineNumbers(const std::string& out);

}  // namespace kprobectl::test
