// SPDX-License-Identifier: GPL-2.0-or-later
//
// Access to one tracefs root: the seam between kprobectl and the kernel's
// tracing files. Every path is relative to the root. Tests point it at a
// temporary directory, or derive from it to fake what the kernel does.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kprobectl/result.h"

namespace kprobectl {

class TracefsDir {
 public:
  explicit TracefsDir(std::string root) : root_(std::move(root)) {}
  virtual ~TracefsDir() = default;
  TracefsDir(const TracefsDir&) = delete;
  TracefsDir& operator=(const TracefsDir&) = delete;

  const std::string& root() const { return root_; }
  std::string PathOf(std::string_view relative) const { return root_ + "/" + std::string(relative); }

  virtual bool Exists(std::string_view relative) const;
  virtual Result<std::string> Read(std::string_view relative) const;
  // One write(2) on a descriptor opened with O_APPEND: the kernel parses one
  // probe definition per write and never truncates the file for us.
  virtual Result<void> Append(std::string_view relative, std::string_view data) const;
  // O_TRUNC write, for control files such as "enable".
  virtual Result<void> Write(std::string_view relative, std::string_view data) const;
  virtual Result<std::vector<std::string>> List(std::string_view relative) const;
  virtual Result<void> MakeDirectory(std::string_view relative) const;
  virtual Result<void> RemoveDirectory(std::string_view relative) const;

 private:
  std::string root_;
};

// Where tracefs is, from the text of /proc/self/mountinfo: a tracefs mount,
// else "tracing" under a debugfs mount. Empty if neither.
std::string TracefsFromMountinfo(std::string_view mountinfo);

struct LocateOptions {
  std::string override_dir;  // --tracefs DIR
  std::string mountinfo_path = "/proc/self/mountinfo";
  bool may_mount = true;  // mount tracefs at /sys/kernel/tracing if missing and root
};

// Finds tracefs, mounting it when it is missing and we are root.
Result<std::string> LocateTracefs(const LocateOptions& options);

}  // namespace kprobectl
