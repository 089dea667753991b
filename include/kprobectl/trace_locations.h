// SPDX-License-Identifier: GPL-2.0-or-later
//
// Where each traced event is, in words: "compute+0x4" for a probe, and for a
// user return probe the caller, "main+0x59", from the caller's runtime
// address. In: the event's definition; the ELF files it names (opened once
// each); for callers in another file than the probed one (a probe on libc's
// read, called from cat), the process's memory map while it lives.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kprobectl/elf_image.h"
#include "kprobectl/trace_event_def.h"
#include "kprobectl/trace_printer.h"

namespace kprobectl {

// The mapping of uprobes' out-of-line page in /proc/PID/maps: a return
// probe's trampoline, where a pending return probe sends its function.
inline constexpr std::string_view kUprobesPage = "[uprobes]";

// A process's mapped files, from PROC/PID/maps, kept per process.
class ProcessMaps {
 public:
  explicit ProcessMaps(std::string proc_root = "/proc") : proc_(std::move(proc_root)) {}
  struct Place {
    std::string path;
    uint64_t file_offset = 0;
  };
  // The file and offset mapped at `address` in `pid`, if it (still) lives.
  std::optional<Place> Find(int pid, uint64_t address);
  // Reads the map of `pid` and of the processes it started, now, while
  // they live: a process that exits before its events are read keeps the
  // map it had (user stacks of short-lived commands are named from it).
  void RememberTree(int pid, int depth = 0);
  // Parses the text of a maps file (exposed for tests).
  struct Mapping {
    uint64_t start = 0, end = 0, offset = 0;
    std::string path;
  };
  static std::vector<Mapping> Parse(std::string_view text);

 private:
  std::string proc_;
  std::map<int, std::vector<Mapping>> maps_;
};

class EventLocations {
 public:
  explicit EventLocations(std::string proc_root = "/proc") : maps_(std::move(proc_root)) {}
  EventLocations(const EventLocations&) = delete;
  EventLocations& operator=(const EventLocations&) = delete;
  // Sets plan.location and, for user return probes, plan.caller. The plan
  // refers to this object: it must outlive the plans.
  void Locate(const TraceEventDef& def, EventPlan& plan);
  // A user-space address of process `pid`, as a stack shows it:
  // "inet_pton+0x0 (/usr/lib/x86_64-linux-gnu/libc.so.6)", or the offset in
  // the file without a symbol there; empty when the process (or its map of
  // that address) is gone.
  std::string UserFrame(int pid, uint64_t address);
  // The file that holds `address` in process `pid` and its load bias (the
  // file's address is the runtime one minus the bias): from the process's
  // map while it lives, else the event's own file where the probe fired
  // (`probe_ip`, its runtime address) tells its bias.
  struct Loaded {
    std::string path;
    uint64_t bias = 0;
  };
  std::optional<Loaded> FileAt(int pid, uint64_t address, const EventPlan* plan = nullptr, uint64_t probe_ip = 0);
  // "FUNC+0xOFF (PATH)" for an address of a file loaded with `bias`, or
  // the offset in the file when no symbol holds it.
  std::string FrameName(const Loaded& loaded, uint64_t address);
  // Whether `address` (of a file loaded so) is in a function this trace
  // has a return probe on: while it runs, its return address is uprobes'
  // trampoline, and the frame above it cannot be found.
  bool UnderReturnProbe(const Loaded& loaded, uint64_t address);
  // See ProcessMaps::RememberTree.
  void RememberTree(int pid) { maps_.RememberTree(pid); }

 private:
  const ElfImage* Image(const std::string& path);
  // The function at `vaddr` of the file, from its symbols or else its
  // separate debuginfo's (a distribution's stripped library: libc's static
  // functions are in libc6-dbg's .symtab only).
  const ElfSymbol* FunctionAt(const std::string& path, uint64_t vaddr);
  std::string NameIn(const std::string& path, uint64_t file_offset);

  std::map<std::string, std::unique_ptr<ElfImage>> images_;        // null: unreadable
  std::map<std::string, std::unique_ptr<ElfImage>> debug_images_;  // by the file's path; null: none
  std::set<std::pair<std::string, uint64_t>> return_probed_;       // (file, function's address)
  ProcessMaps maps_;
};

}  // namespace kprobectl
