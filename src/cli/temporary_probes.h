// SPDX-License-Identifier: GPL-2.0-or-later
//
// What trace, hist and serve share of trace's passes: the temporary probes
// (--probe, a config file's probes), resolved, recorded before they are
// written, removed however the run ends; and this run, as the records of
// temporary probes name it (src/tracefs/leftovers.cc).
#pragma once

#include <algorithm>
#include <vector>

#include "commands.h"
#include "kprobectl/leftovers.h"
#include "kprobectl/probe_events.h"
#include "kprobectl/trace_process.h"

namespace kprobectl::cli {

// The temporary probes: recorded before they are written, removed (and the
// record with them) when tracing ends, however it ends.
class TemporaryProbes {
 public:
  TemporaryProbes(const ProbeEvents& events, TemporaryRecord record, const StopSignals& signals, Streams io)
      : events_(events), record_(std::move(record)), signals_(signals), io_(io) {}
  ~TemporaryProbes() {
    bool said = false;
    for (auto it = defs_.rbegin(); it != defs_.rend(); ++it) {
      if (!said && signals_.StopPending()) {
        io_.err << "kprobectl: still cleaning up: removing " << defs_.size() << " temporary probes\n";
        said = true;
      }
      auto removed = events_.Remove(*it);
      if (!removed) {
        io_.err << "kprobectl: error: " << removed.error().message << "\n";
        keep_record_ = true;
      }
    }
    if (keep_record_) record_.Keep();
  }
  TemporaryProbes(const TemporaryProbes&) = delete;
  TemporaryProbes& operator=(const TemporaryProbes&) = delete;
  Result<void> Add(const std::vector<TraceEventDef>& defs) {
    KP_TRY_VOID(record_.Add(defs));
    auto added = events_.Add(defs);
    if (added) defs_.insert(defs_.end(), defs.begin(), defs.end());
    return added;
  }
  // Some of them removed before the run ends (serve's reload), newest first.
  Result<void> Remove(const std::vector<TraceEventDef>& defs) {
    for (auto def = defs.rbegin(); def != defs.rend(); ++def) {
      auto it =
          std::find_if(defs_.begin(), defs_.end(), [&](const TraceEventDef& d) { return d.Path() == def->Path(); });
      if (it == defs_.end()) continue;
      KP_TRY_VOID(events_.Remove(*it));
      defs_.erase(it);
    }
    return {};
  }

 private:
  const ProbeEvents& events_;
  TemporaryRecord record_;
  const StopSignals& signals_;
  Streams io_;
  std::vector<TraceEventDef> defs_;
  bool keep_record_ = false;
};

// The --probe specs of `trace`, resolved and named (user stacks captured
// where --stack asks for them). `keep_entry_args`: whether the caller pairs
// each return with its entry (trace and hist do, through PlanTrace; serve
// does not), so that a return's arguments the kernel cannot keep are
// fetched at the entry (ResolveOptions::keep_entry_args) rather than refused.
Result<std::vector<TraceEventDef>> ResolveTemporary(const Options& options, const TraceOptions& trace,
                                                    const TracefsDir& dir, EventNamer& namer, Streams io,
                                                    bool keep_entry_args);
// This run, as the records of temporary probes name it.
TraceRun Self(const KernelEnv& env);

}  // namespace kprobectl::cli
