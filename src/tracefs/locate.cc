// SPDX-License-Identifier: GPL-2.0-or-later
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "kprobectl/strings.h"
#include "kprobectl/tracefs_dir.h"

namespace kprobectl {

namespace {

constexpr const char* kDefaultMountPoint = "/sys/kernel/tracing";

// mountinfo escapes blanks in paths as octal (\040).
std::string UnescapeMountPath(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      std::string code(s.substr(i + 1, 3));
      if (code.find_first_not_of("01234567") == std::string::npos) {
        out += static_cast<char>(std::stoi(code, nullptr, 8));
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

std::string TracefsFromMountinfo(std::string_view mountinfo) {
  std::string debugfs;
  for (const std::string& line : SplitLines(mountinfo)) {
    // "36 35 0:12 / /sys/kernel/tracing rw,nosuid - tracefs nodev rw"
    auto fields = SplitWords(line);
    auto dash = std::find(fields.begin(), fields.end(), "-");
    if (fields.size() < 5 || dash == fields.end() || dash + 1 == fields.end()) continue;
    const std::string& type = *(dash + 1);
    std::string mount_point = UnescapeMountPath(fields[4]);
    if (type == "tracefs") return mount_point;
    if (type == "debugfs" && debugfs.empty()) debugfs = mount_point + "/tracing";
  }
  return debugfs;
}

Result<std::string> LocateTracefs(const LocateOptions& options) {
  if (!options.override_dir.empty()) {
    if (!IsDirectory(options.override_dir)) return Fail("--tracefs '" + options.override_dir + "' is not a directory");
    return options.override_dir;
  }
  std::ifstream in(options.mountinfo_path);
  std::stringstream text;
  text << in.rdbuf();
  std::string found = TracefsFromMountinfo(text.str());
  if (!found.empty() && IsDirectory(found)) return found;
  if (options.may_mount && geteuid() == 0 && IsDirectory(kDefaultMountPoint)) {
    if (mount("nodev", kDefaultMountPoint, "tracefs", 0, nullptr) == 0) return std::string(kDefaultMountPoint);
    return Fail(std::string("tracefs is not mounted and mounting it at ") + kDefaultMountPoint +
                    " failed: " + std::strerror(errno),
                "is this kernel built with CONFIG_TRACING? Mount it by hand: mount -t tracefs nodev " +
                    std::string(kDefaultMountPoint));
  }
  return Fail("tracefs is not mounted", std::string("as root, run: mount -t tracefs nodev ") + kDefaultMountPoint +
                                            " (or give its place with --tracefs DIR)");
}

}  // namespace kprobectl
