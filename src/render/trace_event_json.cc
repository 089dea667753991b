// SPDX-License-Identifier: GPL-2.0-or-later
//
// The Trace Event Format (its "JSON Object Format": {"traceEvents": [...]}),
// as Chrome's trace viewer documents it and Perfetto imports it. Each
// event one line, so that a diff or grep reads it. Slices are complete
// events ("X", ts and dur), which nest by time on their track as calls
// do; an instant is "i" with its scope ("t" a thread's, "g" global).
#include <algorithm>

#include "kprobectl/json_object.h"
#include "kprobectl/timeline.h"
#include "kprobectl/trace_printer.h"

namespace kprobectl {

namespace {

// ns as microseconds: "982997002.125".
std::string Micros(uint64_t ns) {
  std::string frac = std::to_string(ns % 1000);
  return std::to_string(ns / 1000) + "." + std::string(3 - frac.size(), '0') + frac;
}

std::string Ids(int pid, int64_t track) {
  return "\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(track);
}

}  // namespace

std::string TraceEventJson(const Timeline& timeline) {
  std::vector<std::string> events;
  for (const auto& [pid, name] : timeline.processes)
    events.push_back("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + std::to_string(pid) +
                     ",\"args\":{\"name\":" + JsonString(name) + "}}");
  for (const auto& [key, name] : timeline.tracks) {
    events.push_back("{\"ph\":\"M\",\"name\":\"thread_name\"," + Ids(key.first, key.second) +
                     ",\"args\":{\"name\":" + JsonString(name) + "}}");
    // Threads by id, goroutines after them.
    events.push_back("{\"ph\":\"M\",\"name\":\"thread_sort_index\"," + Ids(key.first, key.second) +
                     ",\"args\":{\"sort_index\":" + std::to_string(key.second) + "}}");
  }
  // By time; at one time the longer first, so that a caller opens before
  // the callee that starts with it.
  struct Timed {
    uint64_t time, length;
    std::string text;
  };
  std::vector<Timed> timed;
  for (const TimelineSlice& s : timeline.slices) {
    uint64_t length = s.end >= s.start ? s.end - s.start : 0;
    std::string text = "{\"ph\":\"X\",\"name\":" + JsonString(s.name) + ",\"cat\":" + JsonString(s.category) + "," +
                       Ids(s.pid, s.track) + ",\"ts\":" + Micros(s.start) + ",\"dur\":" + Micros(length);
    if (!s.args.empty()) text += ",\"args\":" + s.args;
    timed.push_back({s.start, length, text + "}"});
  }
  for (const TimelineInstant& i : timeline.instants) {
    std::string text = "{\"ph\":\"i\",\"name\":" + JsonString(i.name) + ",\"cat\":" + JsonString(i.category) + "," +
                       Ids(i.pid, i.track) + ",\"ts\":" + Micros(i.time) + ",\"s\":\"" + (i.global ? "g" : "t") + "\"";
    if (!i.args.empty()) text += ",\"args\":" + i.args;
    timed.push_back({i.time, 0, text + "}"});
  }
  std::stable_sort(timed.begin(), timed.end(), [](const Timed& a, const Timed& b) {
    return a.time != b.time ? a.time < b.time : a.length > b.length;
  });
  for (Timed& t : timed) events.push_back(std::move(t.text));
  std::string out = "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":" + JsonString(timeline.producer) +
                    "},\"traceEvents\":[\n";
  for (size_t i = 0; i < events.size(); ++i) out += events[i] + (i + 1 < events.size() ? ",\n" : "\n");
  return out + "]}\n";
}

}  // namespace kprobectl
