// SPDX-License-Identifier: GPL-2.0-or-later
//
// Timelines. In: calls as slices (an entry and its return: when, on which
// track, named, with their arguments as JSON objects), events with no pair
// as instants, where events were lost, and the names of processes and
// tracks (threads, or Go's goroutines). Out: the Trace Event Format's JSON
// (the "JSON Object Format" of Chrome's trace viewer), which Perfetto's UI,
// chrome://tracing and speedscope open. Chosen over Perfetto's protobuf:
// every one of those viewers reads it, it is text that jq and a test can
// read, and it needs no schema compiler; what it cannot say that the
// protobuf could (interned strings, flows) a probe's trace does not need.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kprobectl {

struct TimelineSlice {
  int pid = 0;
  int64_t track = 0;            // a thread's id, or a goroutine's track (Timeline::kGoroutineTracks + n)
  uint64_t start = 0, end = 0;  // the trace clock's ns
  std::string name;             // the function
  std::string category;         // the probes' group
  std::string args;             // a JSON object, "{...}", or empty
};

struct TimelineInstant {
  int pid = 0;
  int64_t track = 0;
  uint64_t time = 0;
  std::string name;      // the event, "group:event", or what was lost
  std::string category;  // the group
  std::string args;      // a JSON object, or empty
  bool global = false;   // drawn across every track (events lost)
};

struct Timeline {
  // Goroutines' tracks are numbered from here, above any thread id
  // (pid_max is at most 2^22).
  static constexpr int64_t kGoroutineTracks = int64_t{1} << 30;
  std::map<int, std::string> processes;                   // pid -> name
  std::map<std::pair<int, int64_t>, std::string> tracks;  // (pid, track) -> name
  std::vector<TimelineSlice> slices;
  std::vector<TimelineInstant> instants;
  std::string producer;  // what made it: the command line
};

// The JSON document: metadata (process and thread names, their sort
// order) first, then every slice ("X", its duration) and instant ("i") by
// time, a caller before its callees; times in microseconds with the ns in
// three decimals.
std::string TraceEventJson(const Timeline& timeline);

}  // namespace kprobectl
