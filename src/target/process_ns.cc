// SPDX-License-Identifier: GPL-2.0-or-later
//
// Binaries another process sees (--target-ns PID, as perf names it): a
// container's file system is this machine's /proc/PID/root, so -x is found
// under it (symbolic links followed as inside it) and the uprobe names the
// file through it, which the kernel resolves to the container's inode. The
// file found must be the one the process runs: one deleted or replaced
// since it started is refused, saying so.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "kprobectl/strings.h"
#include "kprobectl/target.h"

namespace kprobectl {

namespace {

// PATH from a NUL-separated environment; nullopt when it has none.
std::optional<std::string> PathOf(const std::string& environ) {
  for (size_t at = 0; at < environ.size();) {
    size_t end = environ.find('\0', at);
    if (end == std::string::npos) end = environ.size();
    std::string_view entry(environ.data() + at, end - at);
    if (entry.starts_with("PATH=")) return std::string(entry.substr(5));
    at = end + 1;
  }
  return std::nullopt;
}

}  // namespace

Result<SearchPaths> SearchPathsOfProcess(const KernelEnv& env, int pid) {
  if (pid <= 0) return Fail("--target-ns takes a process id, not " + std::to_string(pid));
  std::string proc = env.root + env.proc + "/" + std::to_string(pid);
  struct stat st;
  if (stat((proc + "/root").c_str(), &st) != 0)
    return Fail("cannot see the file system of process " + std::to_string(pid) + " (" + proc +
                    "/root): " + std::strerror(errno),
                errno == ENOENT ? "is it running? --target-ns takes its PID as this machine numbers it"
                                : "run kprobectl as root");
  std::ifstream in(proc + "/environ", std::ios::binary);
  std::stringstream environ;
  environ << in.rdbuf();
  std::string path = PathOf(environ.str()).value_or("/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  return SearchPathsFrom(path.c_str(), nullptr, LibraryMachineOf(env), "/etc/ld.so.conf", proc + "/root");
}

Result<void> CheckMappedFile(const std::string& path, const std::string& path_inside, std::string_view maps, int pid) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return Fail("cannot stat " + path + ": " + std::strerror(errno));
  bool deleted = false;
  for (const std::string& line : SplitLines(maps)) {
    // START-END PERMS OFFSET MAJOR:MINOR INODE [PATH]; the path may hold blanks.
    std::istringstream in(line);
    std::string range, perms, offset, device, inode, mapped;
    if (!(in >> range >> perms >> offset >> device >> inode)) continue;
    std::getline(in >> std::ws, mapped);
    // The same inode is the same file. (An overlayfs file's mapping shows
    // the layer's device, so the device is not compared.)
    if (ParseUnsigned(inode) == st.st_ino && mapped == path_inside) return {};
    if (mapped == path_inside + " (deleted)") deleted = true;
  }
  if (deleted)
    return Fail("process " + std::to_string(pid) + " runs a copy of " + path_inside +
                    " that was deleted or replaced on disk since it started",
                "a probe on the file there now would never fire in it: restart the process, then probe it");
  return {};
}

}  // namespace kprobectl
