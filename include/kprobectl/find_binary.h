// SPDX-License-Identifier: GPL-2.0-or-later
//
// What -x names: a path, a program found in PATH ("python3"), or a shared
// library found where the dynamic linker finds it ("libc.so.6"). In: the
// name and the places to search, maybe inside another mount namespace's
// root (--target-ns: /proc/PID/root). Out: the file's real path (symbolic
// links resolved, inside that root when there is one, so the path reaches
// the same file from here: /proc/PID/root/usr/bin/app), or an error that
// says where it looked.
#pragma once

#include <string>
#include <vector>

#include "kprobectl/result.h"

namespace kprobectl {

struct SearchPaths {
  std::vector<std::string> programs;   // PATH
  std::vector<std::string> libraries;  // LD_LIBRARY_PATH, ld.so.conf, then the defaults
  std::string root;                    // every path above is inside it; empty: this process's root
  uint16_t machine = 0;                // a library found by name is of this ELF machine (0: any 64-bit one)
};

// The machine whose programs load the libraries searched for: its ELF
// machine, and its Debian multiarch directory name ("x86_64-linux-gnu").
struct LibraryMachine {
  uint16_t machine = 0;
  std::string multiarch;
};

// `path` and `ld_library_path` are the environment's values (null: unset);
// `ld_so_conf` is read, with its include lines, for the linker's directories.
// With a root, the directories are those of the file system under it
// (its ld.so.conf, its PATH given).
SearchPaths SearchPathsFrom(const char* path, const char* ld_library_path, const LibraryMachine& machine,
                            const std::string& ld_so_conf = "/etc/ld.so.conf", const std::string& root = "");

// `path` inside `root` with every symbolic link followed as a process whose
// root it is would follow it (an absolute link starts again at `root`),
// returned as root + the path it ends at.
Result<std::string> ResolveInRoot(const std::string& root, const std::string& path);

// Where a program's separate debuginfo is, by build-id: under `root` (a
// container's) first, then this machine's /usr/lib/debug.
std::vector<std::string> SeparateDebuginfoCandidates(const std::string& root, std::string_view build_id);

// A library is searched for only among 64-bit ELF files of the search's
// machine: a 32-bit libc.so.6 in /lib32 is not the one a 64-bit program loads.
Result<std::string> FindBinary(const std::string& name, const SearchPaths& search);

}  // namespace kprobectl
