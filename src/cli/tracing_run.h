// SPDX-License-Identifier: GPL-2.0-or-later
//
// One run of trace or hist: what it holds in the kernel and around it,
// made step by step as RunTrace's passes go (trace.cc) and taken down
// however the run ends (the command's end, -d, a signal, an error, a
// reader gone). Its members are declared in the order they are made; C++
// destroys members in reverse declaration order, and that is the order
// they must go: the ring buffer's pipes closed before the instance is
// removed (an instance with open pipes cannot be), the command stopped
// before the instance that follows it, the instance before the temporary
// probes its events are, the probes before their record, and the stop
// signals released last, so that nothing interrupts the cleanup.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "kprobectl/kernel_features.h"
#include "kprobectl/probe_events.h"
#include "kprobectl/trace_decoder.h"
#include "kprobectl/trace_process.h"
#include "kprobectl/trace_session.h"
#include "temporary_probes.h"

namespace kprobectl::cli {

class TracingRun {
 public:
  // The stop signals held, tracefs opened, its README read (once: the
  // features every later check reads).
  static Result<std::unique_ptr<TracingRun>> Open(const Options& options, Streams io);
  TracingRun(const TracingRun&) = delete;
  TracingRun& operator=(const TracingRun&) = delete;

  // 3. The temporary probes recorded, then added, all or none.
  Result<void> AddProbes(const std::vector<TraceEventDef>& defs);
  // 4. The private instance, its ring buffer `buffer_kb` per CPU (0: the
  // kernel's default), filtered to `pid` (0: none), our own reads of
  // tracefs and /proc left out.
  Result<void> CreateSession(unsigned buffer_kb, int pid);
  // The command, held before its exec until Release() (trace_process.h).
  Result<void> StartCommand(const std::vector<std::string>& argv, int stdout_fd, bool stop_at_exec);
  // The instance's ring buffers, opened once its events are on.
  Result<void> OpenReader();
  // The end that can fail: the reader closed, then the instance removed
  // (its triggers and events first), the error said. The destructor does
  // the rest.
  Result<void> Close();

  StopSignals& signals() { return signals_; }
  const TracefsDir& dir() const { return *dir_; }
  const KernelFeatures& features() const { return features_; }
  const ProbeEvents& events() const { return *events_; }
  TraceSession& session() { return *session_; }
  TracedCommand* command() { return command_ ? &*command_ : nullptr; }
  RingReader& reader() { return *reader_; }

 private:
  TracingRun(const Options& options, Streams io) : options_(options), io_(io) {}
  void Log(std::string_view line) const;

  const Options& options_;
  Streams io_;
  // Declared in the order made; destroyed in reverse (see above).
  StopSignals signals_;                    // held first, released last
  std::unique_ptr<TracefsDir> dir_;        // outlives everything written through it
  KernelFeatures features_;                // its README, read once
  std::optional<ProbeEvents> events_;      // the probe events' control files
  std::optional<TemporaryProbes> probes_;  // removed after the instance, then their record
  std::unique_ptr<TraceSession> session_;  // the instance, removed before the probes
  std::optional<TracedCommand> command_;   // stopped (SIGTERM, waited for) before the instance goes
  std::unique_ptr<RingReader> reader_;     // its open pipes keep the instance busy: closed first
};

}  // namespace kprobectl::cli
