// SPDX-License-Identifier: GPL-2.0-or-later
//
// A private tracefs instance (instances/NAME) for one tracing session: its
// own ring buffer, so the global buffer and other tracers are untouched.
// Everything it enables it disables again, and it removes the instance, in
// Close() or, whatever happened, in its destructor.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kprobectl/result.h"
#include "kprobectl/tracefs_dir.h"

namespace kprobectl {

class TraceSession {
 public:
  static Result<std::unique_ptr<TraceSession>> Create(const TracefsDir& root, std::string name,
                                                      std::function<void(std::string_view)> log = {});
  ~TraceSession();
  TraceSession(const TraceSession&) = delete;
  TraceSession& operator=(const TraceSession&) = delete;

  const std::string& name() const { return name_; }
  std::string Path(std::string_view file) const { return "instances/" + name_ + "/" + std::string(file); }

  Result<void> SetBufferSizeKb(unsigned kb);
  // The ring buffer's size per CPU, in KB, as the kernel has it now.
  Result<uint64_t> BufferSizeKb() const;
  Result<void> SetPid(int pid);
  // Only `pid` and the processes it forks from now on (set_event_pid with
  // the event-fork option).
  Result<void> FollowPid(int pid);
  // Leaves out the events of `pid` (kprobectl's own), where the kernel
  // can (set_event_notrace_pid, Linux 5.8); a no-op elsewhere.
  void ExcludePid(int pid);
  // A kernel-side filter on one event ("group/event"); the kernel's own
  // complaint when it rejects the expression.
  Result<void> SetFilter(const std::string& event, const std::string& expression);
  Result<void> Enable(const std::string& event);
  // Disables an event Enable() enabled (serve's reload), the filter left.
  Result<void> Disable(const std::string& event);
  // A trigger on one event ("hist:keys=..."), removed ("!" and the same
  // text) in Close() before the events are disabled; the kernel's
  // error_log explains a rejected one.
  Result<void> AddTrigger(const std::string& event, const std::string& trigger);
  // Removes one AddTrigger() added, and its table with it.
  Result<void> RemoveTrigger(const std::string& event, const std::string& trigger);
  // A synthetic event ("NAME u64 ns"; synthetic_events is global, not the
  // instance's), removed in Close() after the triggers that use it. Named
  // with this run's pid last (kplat0_PID), so that a killed run's are
  // found (leftovers.h).
  Result<void> AddSyntheticEvent(const std::string& name, const std::string& fields);
  // Writes a trigger command that adds nothing (a hist trigger's :clear).
  Result<void> TriggerCommand(const std::string& event, const std::string& command);
  // One of the instance's options (options/NAME: "stacktrace",
  // "userstacktrace"); the instance goes with them.
  Result<void> SetOption(const std::string& name, bool on);

  struct CpuStats {
    uint64_t overrun = 0;  // events overwritten before they were read
    uint64_t dropped = 0;  // events the kernel could not write
  };
  std::vector<CpuStats> Stats() const;

  // Disables what was enabled and removes the instance; idempotent.
  Result<void> Close();

 private:
  TraceSession(const TracefsDir& root, std::string name, std::function<void(std::string_view)> log)
      : root_(root), name_(std::move(name)), log_(std::move(log)) {}
  Result<void> Write(const std::string& file, std::string_view value);

  const TracefsDir& root_;
  std::string name_;
  std::function<void(std::string_view)> log_;
  std::vector<std::string> enabled_;
  std::vector<std::pair<std::string, std::string>> triggers_;  // event, trigger
  std::vector<std::string> synthetic_;
  bool closed_ = false;
};

}  // namespace kprobectl
