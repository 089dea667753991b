// SPDX-License-Identifier: GPL-2.0-or-later
//
// The process side of tracing: the signals that stop it, and the command it
// runs. In: the command's argv. Out: a signalfd to poll, the command's pid
// (held before exec until its events are filtered in) and exit status.
//
// Cleanup must run to its end however tracing stops. StopSignals blocks the
// stop signals from before anything is set up until after everything is
// taken down: a second Ctrl-C (a terminal and `timeout` signal the whole
// process group, so one Ctrl-C may arrive twice) stays pending instead of
// killing kprobectl halfway through removing its probes, and is discarded
// at the end. SIGPIPE is ignored: a reader that went away is a write error,
// which is one more way to stop.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kprobectl/result.h"

namespace kprobectl {

class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  int fd() const { return fd_; }
  // The next signal that arrived (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD), or 0.
  int Next();
  // Whether a stop signal is waiting, unread (during cleanup).
  bool StopPending() const;
  // The mask from before, for the command.
  const sigset_t& saved() const { return saved_; }

 private:
  sigset_t mask_, saved_;
  int fd_ = -1;
  struct sigaction old_pipe_ {};
};

// A command started for tracing. Start() forks it and holds it before
// exec, so that its pid can be filtered in before it runs a single
// instruction of its own; Release() lets it exec. Its standard output is
// ours, or `stdout_fd` when that is not -1 (ours of errors, when the
// events go to our standard output: a pipe then carries events only).
class TracedCommand {
 public:
  // `stop_at_exec`: the kernel stops it at its exec (it is traced by us
  // until AtExec), so that what it maps there can be read however short
  // its run.
  static Result<TracedCommand> Start(const std::vector<std::string>& argv, const sigset_t& mask, int stdout_fd = -1,
                                     bool stop_at_exec = false);
  TracedCommand(TracedCommand&& other) noexcept;
  TracedCommand& operator=(TracedCommand&&) = delete;
  // A command still running is sent SIGTERM and waited for.
  ~TracedCommand();

  pid_t pid() const { return pid_; }
  // Lets it exec; the error when it cannot (the command does not exist...).
  Result<void> Release();
  // Calls `look` with its pid once it has exec'd (the program and its
  // interpreter mapped), then lets it run: stopped there when Start was
  // asked to and could, else as soon as its /proc/PID/exe is no longer ours.
  void AtExec(const std::function<void(pid_t)>& look);
  // Its exit status (or 128 + the signal that ended it) once it ended.
  std::optional<int> Poll();
  // Its exit status, once it ended: given `grace_ms` to end on its own
  // (after a signal passed on to it), then sent `sig`, then SIGKILL if it
  // still runs 5 s later.
  int Stop(int sig, int grace_ms = 0);

 private:
  bool WaitFor(int ms);
  TracedCommand(pid_t pid, int go, int report, std::string name)
      : pid_(pid), go_(go), report_(report), name_(std::move(name)) {}
  pid_t pid_ = -1;
  int go_ = -1, report_ = -1;
  std::string name_;
  std::optional<int> status_;
  bool stops_at_exec_ = false;
};

}  // namespace kprobectl
