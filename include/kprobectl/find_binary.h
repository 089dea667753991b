// SPDX-License-Identifier: GPL-2.0-or-later
//
// What -x names: a path, a program found in PATH ("python3"), or a shared
// library found where the dynamic linker finds it ("libc.so.6"). In: the
// name and the places to search. Out: the file's real path (symbolic links
// resolved), or an error that says where it looked.
#pragma once

#include <string>
#include <vector>

#include "kprobectl/result.h"

namespace kprobectl {

struct SearchPaths {
  std::vector<std::string> programs;   // PATH
  std::vector<std::string> libraries;  // LD_LIBRARY_PATH, ld.so.conf, then the defaults
};

// `path` and `ld_library_path` are the environment's values (null: unset);
// `ld_so_conf` is read, with its include lines, for the linker's directories.
SearchPaths SearchPathsFrom(const char* path, const char* ld_library_path,
                            const std::string& ld_so_conf = "/etc/ld.so.conf");

// A library is searched for only among x86-64 ELF files: a 32-bit libc.so.6
// in /lib32 is not the one a 64-bit program loads.
Result<std::string> FindBinary(const std::string& name, const SearchPaths& search);

}  // namespace kprobectl
