// SPDX-License-Identifier: GPL-2.0-or-later
//
// The tracefs engine for dynamic probe events: reads, adds and removes the
// definitions in kprobe_events and uprobe_events, and answers whether an event
// is enabled. Adding is all-or-nothing: when the kernel rejects a definition,
// the error carries the kernel's own explanation from error_log and every
// definition this call already wrote is removed again.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kprobectl/result.h"
#include "kprobectl/trace_event_def.h"
#include "kprobectl/tracefs_dir.h"

namespace kprobectl {

std::string_view EventsFile(ProbeKind kind);   // "kprobe_events" / "uprobe_events"
std::string_view ProfileFile(ProbeKind kind);  // "kprobe_profile" / "uprobe_profile"

// The error_log entry the kernel wrote for `command` (the last one that names
// it), re-indented for our messages: the kernel's message, the command and
// the caret under the bad token. nullopt when the log has no such entry.
std::optional<std::string> FindErrorLogEntry(std::string_view error_log, std::string_view command);

struct ProfileEntry {
  uint64_t hits = 0;
  std::optional<uint64_t> misses;  // kprobes only
};
// The name the file prints ("group/event", or since Linux 6.x the event
// alone) -> counts, from kprobe_profile or uprobe_profile text.
std::map<std::string, ProfileEntry> ParseProfile(std::string_view text, ProbeKind kind);
// The entry for `def`, under either name.
const ProfileEntry* FindProfileEntry(const std::map<std::string, ProfileEntry>& profile, const TraceEventDef& def);

class ProbeEvents {
 public:
  // `log` receives each line written, for -v; it may be empty.
  explicit ProbeEvents(const TracefsDir& dir, std::function<void(std::string_view)> log = {})
      : dir_(dir), log_(std::move(log)) {}

  // Every definition in the files that exist (kprobe_events, uprobe_events,
  // and the fprobes and tracepoint probes of dynamic_events).
  Result<std::vector<TraceEventDef>> List() const;
  // "group/event" of every dynamic event, for picking new names.
  Result<std::set<std::string>> Names() const;

  Result<void> Add(const std::vector<TraceEventDef>& defs) const;
  Result<void> Remove(const TraceEventDef& def) const;

  // Enabled in the top-level buffer or in any instance: the instance paths
  // ("" for the top level) where events/GRP/EV/enable reads 1.
  Result<std::vector<std::string>> EnabledIn(const TraceEventDef& def) const;
  Result<void> Disable(const TraceEventDef& def, const std::vector<std::string>& where) const;

  Result<std::map<std::string, ProfileEntry>> Profile(ProbeKind kind) const;

 private:
  Result<void> WriteLine(std::string_view file, const std::string& line) const;

  const TracefsDir& dir_;
  std::function<void(std::string_view)> log_;
};

}  // namespace kprobectl
