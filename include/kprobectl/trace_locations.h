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
#include <string>
#include <vector>

#include "kprobectl/elf_image.h"
#include "kprobectl/trace_event_def.h"
#include "kprobectl/trace_printer.h"

namespace kprobectl {

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

 private:
  const ElfImage* Image(const std::string& path);
  std::string NameIn(const std::string& path, uint64_t file_offset);

  std::map<std::string, std::unique_ptr<ElfImage>> images_;  // null: unreadable
  ProcessMaps maps_;
};

}  // namespace kprobectl
