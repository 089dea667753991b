// SPDX-License-Identifier: GPL-2.0-or-later
//
// What a `kprobectl trace` that could not clean up (SIGKILL, the OOM killer,
// a crash) leaves in tracefs, found and removed by a later command. In: a
// tracefs root, a registry directory, and a way to tell whether a process
// still runs. Out: the leftovers, and their removal.
//
// A trace marks what is its own: its private instance is named after it
// (instances/kprobectl-PID), and before it writes a temporary probe it
// records the definition in REGISTRY/trace-PID (with the tracefs root and
// the process's start time, so a reused PID is not mistaken for it). The
// probes keep ordinary names, so perf's tools see them as usual; only the
// registry tells them from probes made with `add`, which are never removed.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kprobectl/result.h"
#include "kprobectl/trace_event_def.h"
#include "kprobectl/tracefs_dir.h"

namespace kprobectl {

// One run, as the registry and the instance name identify it.
struct TraceRun {
  int pid = 0;
  std::optional<uint64_t> start_time;  // clock ticks after boot (/proc/PID/stat field 22)
};
// Whether `run` is still running: the process exists and, when the start
// time is known, started then.
using RunAlive = std::function<bool(const TraceRun& run)>;

// This process's record of its temporary probes; the file goes when the
// record does (after the probes are removed).
class TemporaryRecord {
 public:
  // No file (and no error) when `registry_dir` is empty.
  static Result<TemporaryRecord> Create(const std::string& registry_dir, const std::string& tracefs_root,
                                        const TraceRun& self);
  TemporaryRecord(TemporaryRecord&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TemporaryRecord& operator=(TemporaryRecord&&) = delete;
  ~TemporaryRecord();
  // Records `defs` before they are written to the kernel.
  Result<void> Add(const std::vector<TraceEventDef>& defs);
  const std::string& path() const { return path_; }
  // Leaves the file for a later command to act on (a probe could not be removed).
  void Keep() { path_.clear(); }

 private:
  explicit TemporaryRecord(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

struct Leftover {
  TraceRun run;
  std::vector<std::string> instances;  // "instances/kprobectl-PID", "instances/kprobectl-PID-N", those that exist
  std::vector<TraceEventDef> probes;   // recorded and still defined in the kernel
  std::string record;                  // the registry file, when there is one
  std::vector<std::string> synthetic;  // synthetic events kplatN_PID (hist --latency)
};

// Leftovers of runs that no longer live, for this tracefs root.
Result<std::vector<Leftover>> FindLeftovers(const TracefsDir& tracefs, const std::string& registry_dir,
                                            const RunAlive& alive);
// Removes the instance, then the probes, then the record. The one-line
// account of what was removed; an error names what could not be.
Result<std::string> RemoveLeftover(const TracefsDir& tracefs, const Leftover& leftover,
                                   const std::function<void(std::string_view)>& log = {});

// The run of `pid` as /proc (at `proc_root`) shows it, if it exists.
std::optional<TraceRun> ProcessRun(const std::string& proc_root, int pid);

// The private tracefs instance of kprobectl process `pid` (trace, hist,
// serve): "kprobectl-PID", the name FindLeftovers knows a dead run's by;
// with `part`, the process's further instances: "kprobectl-PID-PART"
// (serve's, one for each event it counts itself).
std::string InstanceName(int pid, unsigned part = 0);

}  // namespace kprobectl
