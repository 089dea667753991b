// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/tracefs_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace kprobectl {

namespace {

std::unexpected<Error> SystemError(std::string_view action, const std::string& path, int error) {
  std::string hint;
  if (error == EACCES || error == EPERM) hint = "tracefs needs root (or CAP_SYS_ADMIN and CAP_PERFMON)";
  return std::unexpected(Error{std::string(action) + " " + path + ": " + std::strerror(error), hint});
}

Result<void> WriteOnce(const std::string& path, std::string_view data, int flags) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC | flags);
  if (fd < 0) return SystemError("cannot open", path, errno);
  ssize_t written = write(fd, data.data(), data.size());
  int error = errno;
  close(fd);
  if (written < 0) return SystemError("cannot write to", path, error);
  if (static_cast<size_t>(written) != data.size()) return std::unexpected(Error{"short write to " + path, ""});
  return {};
}

}  // namespace

bool TracefsDir::Exists(std::string_view relative) const {
  struct stat st;
  return stat(PathOf(relative).c_str(), &st) == 0;
}

Result<std::string> TracefsDir::Read(std::string_view relative) const {
  std::string path = PathOf(relative);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return SystemError("cannot open", path, errno);
  std::string out;
  char buf[8192];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int error = errno;
      close(fd);
      return SystemError("cannot read", path, error);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

Result<void> TracefsDir::Append(std::string_view relative, std::string_view data) const {
  return WriteOnce(PathOf(relative), data, O_APPEND);
}

Result<void> TracefsDir::Write(std::string_view relative, std::string_view data) const {
  return WriteOnce(PathOf(relative), data, O_TRUNC);
}

Result<std::vector<std::string>> TracefsDir::List(std::string_view relative) const {
  std::string path = PathOf(relative);
  DIR* dir = opendir(path.c_str());
  if (!dir) return SystemError("cannot list", path, errno);
  std::vector<std::string> names;
  while (dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

Result<void> TracefsDir::MakeDirectory(std::string_view relative) const {
  if (mkdir(PathOf(relative).c_str(), 0755) != 0) return SystemError("cannot create", PathOf(relative), errno);
  return {};
}

Result<void> TracefsDir::RemoveDirectory(std::string_view relative) const {
  if (rmdir(PathOf(relative).c_str()) != 0) return SystemError("cannot remove", PathOf(relative), errno);
  return {};
}

}  // namespace kprobectl
