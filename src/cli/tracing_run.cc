// SPDX-License-Identifier: GPL-2.0-or-later
#include "tracing_run.h"

#include <unistd.h>

#include "kprobectl/leftovers.h"

namespace kprobectl::cli {

Result<std::unique_ptr<TracingRun>> TracingRun::Open(const Options& options, Streams io) {
  std::unique_ptr<TracingRun> run(new TracingRun(options, io));
  run->dir_ = KP_TRY(OpenTracefs(options));
  run->features_ = ReadFeatures(*run->dir_);
  run->events_.emplace(*run->dir_, [r = run.get()](std::string_view line) { r->Log(line); });
  return run;
}

void TracingRun::Log(std::string_view line) const {
  if (options_.verbose) io_.err << line << "\n";
}

Result<void> TracingRun::AddProbes(const std::vector<TraceEventDef>& defs) {
  probes_.emplace(*events_, KP_TRY(TemporaryRecord::Create(options_.runtime_dir, dir_->root(), Self(options_.env))),
                  signals_, io_);
  return probes_->Add(defs);
}

Result<void> TracingRun::CreateSession(unsigned buffer_kb, int pid) {
  session_ = KP_TRY(TraceSession::Create(*dir_, InstanceName(getpid()), [this](std::string_view line) { Log(line); }));
  if (buffer_kb) KP_TRY_VOID(session_->SetBufferSizeKb(buffer_kb));
  if (pid) KP_TRY_VOID(session_->SetPid(pid));
  session_->ExcludePid(getpid());  // not our own reads of tracefs and /proc
  return {};
}

Result<void> TracingRun::StartCommand(const std::vector<std::string>& argv, int stdout_fd, bool stop_at_exec) {
  command_.emplace(KP_TRY(TracedCommand::Start(argv, signals_.saved(), stdout_fd, stop_at_exec)));
  return {};
}

Result<void> TracingRun::OpenReader() {
  reader_ = KP_TRY(RingReader::Open(dir_->root(), session_->name()));
  return {};
}

Result<void> TracingRun::Close() {
  reader_.reset();
  return session_ ? session_->Close() : Result<void>{};
}

}  // namespace kprobectl::cli
