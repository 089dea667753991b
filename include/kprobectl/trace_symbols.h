// SPDX-License-Identifier: GPL-2.0-or-later
//
// Names for what the ring buffer holds as numbers: kernel addresses (from
// /proc/kallsyms) and process names (tracefs saved_cmdlines, then /proc).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kprobectl/tracefs_dir.h"

namespace kprobectl {

class KernelSymbols {
 public:
  // From the text of /proc/kallsyms; empty when addresses are hidden (zero).
  static KernelSymbols Parse(const std::string& kallsyms);
  // From that file (empty path or unreadable: empty).
  static KernelSymbols FromFile(const std::string& path);
  // "do_sys_openat2+0x1c" ("ext4_read+0x1c [ext4]" in a module), or empty
  // when the address is in no symbol.
  std::string Lookup(uint64_t address) const;
  bool empty() const { return symbols_.empty(); }

 private:
  std::vector<std::pair<uint64_t, std::string>> symbols_;  // sorted by address
};

class CommCache {
 public:
  explicit CommCache(const TracefsDir& root, std::string proc = "/proc") : root_(root), proc_(std::move(proc)) {}
  const std::string& Lookup(int pid);
  // Forgets what it knew, before the next batch of events: a pid is
  // reused (pid_max wraps, 32768 by default), and saved_cmdlines holds a
  // pid's last comm the kernel saw, so a name read before this batch may
  // be another process's; the next miss reads saved_cmdlines again.
  void Refresh() {
    loaded_cmdlines_ = false;
    comms_.clear();
    last_comm_ = nullptr;
  }

 private:
  const std::string& Find(int pid);

  const TracefsDir& root_;
  std::string proc_;
  std::map<int, std::string> comms_;
  // The last answer: events come in runs of one task's (a map lookup per
  // event was 16% of kprobectl's time tracing a flood).
  int last_pid_ = 0;
  const std::string* last_comm_ = nullptr;
  bool loaded_cmdlines_ = false;
};

}  // namespace kprobectl
