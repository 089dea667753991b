// SPDX-License-Identifier: GPL-2.0-or-later
//
// What kprobectl serve keeps in the kernel for its configuration, and how
// a reload changes it. A configuration is planned before anything is
// written (its probes resolved, its hist lines bound to their events'
// arguments), against what runs now: a line that did not change keeps its
// probe or its table, and so its counts; a probe line that changed keeps
// its event's name, so that the hist lines naming it still do. Then it is
// committed: what goes is stopped (triggers, enables) and removed, what
// is new added, all probes at once, then started and enabled. A commit
// that the kernel refuses midway is undone by committing the running
// configuration's plan again (serve.cc), the state here saying at each
// step what the kernel has.
//
// In serve's instance: the kernel's hist triggers, and the probes no hist
// line counts enabled behind a filter that records nothing, so that
// *_profile counts their hits. Each event kprobectl counts itself has an
// instance of its own (kprobectl-PID-N), enabled there with its hist
// lines' filter, read by a reader of its own: removing a dynamic event
// empties the ring buffer of every instance it was ever enabled in (the
// kernel's probe_remove_event_call(), since Linux 6.3's "Free buffers when
// a used dynamic event is removed"), so a reload that removes one probe
// must not empty the buffer another probe's unread events are in.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "hist_run.h"
#include "kprobectl/serve.h"
#include "kprobectl/trace_symbols.h"
#include "kprobectl/tracer.h"
#include "temporary_probes.h"

namespace kprobectl::cli {

class ServeState {
 public:
  struct Context {
    const Options& options;
    std::string path;  // the configuration file, for errors
    const TracefsDir& dir;
    const ProbeEvents& events;
    TemporaryProbes& probes;
    CommCache& comms;
    Streams io;
    int pid = 0;                                // serve's, for its instances' names
    std::function<void(std::string_view)> log;  // -v: what is written
  };
  explicit ServeState(Context context) : c_(std::move(context)) {}

  struct Plan;
  // `next` resolved and bound against what runs now; nothing written.
  Result<Plan> Prepare(const ServeConfig& next) const;
  // Written, in `session`'s instance (made after the first plan: a bad
  // configuration writes nothing). On an error, this state says what the
  // kernel has.
  Result<void> Commit(Plan plan, TraceSession& session);

  // Counts what the ring buffer holds for kprobectl's own counting.
  Result<void> Drain();
  // The exposition of the counts (without serve's own metrics).
  Result<std::string> Metrics(unsigned max_series);
  // Events the instance's ring buffer lost; none when nothing is read from it.
  std::optional<uint64_t> EventsLost() const;
  const ServeConfig& config() const { return config_; }

 private:
  struct Probe {
    ServeProbe line;
    std::vector<TraceEventDef> defs;
  };
  struct Hist {
    ServeHist line;
    HistRun run;
    bool started = false;  // its triggers written (in the kernel) or bound (kprobectl's)
  };
  // An event kprobectl counts: its instance, its reader, its filter.
  struct Counting {
    std::unique_ptr<TraceSession> session;
    std::unique_ptr<RingReader> reader;
    std::string filter;
  };

  Result<std::vector<TraceEventDef>> Resolve(const ServeProbe& line, EventNamer& namer) const;
  Result<HistRun> PlanHist(const ServeHist& line, const std::vector<TraceEventDef>& known) const;
  // The events kprobectl counts (with their filter), and the probes no
  // hist line counts, for `hists` and the probes `served`.
  struct HistView {  // a hist line and its run, neither copied
    const ServeHist* line;
    const HistRun* run;
  };
  static std::map<std::string, std::string> Counted(const std::vector<HistView>& hists);
  static std::set<std::string> Uncounted(const std::vector<HistView>& hists, const std::vector<TraceEventDef>& served);
  // The instances made to count `counted` and enable `uncounted`; with
  // `leaving_only`, only what they no longer hold goes (drained first).
  Result<void> Rewire(const std::map<std::string, std::string>& counted, const std::set<std::string>& uncounted,
                      bool leaving_only);
  Result<void> Count();

  Context c_;
  TraceSession* session_ = nullptr;  // from the first commit
  ServeConfig config_;
  std::vector<Probe> probes_;
  std::vector<Hist> hists_;
  std::vector<TraceEventDef> served_;         // whose hits are served
  std::set<std::string> uncounted_;           // enabled in serve's instance, recording nothing
  std::map<std::string, Counting> counting_;  // by "group/event"
  unsigned next_part_ = 1;                    // the next counting instance's N
  uint64_t lost_before_ = 0;                  // by counting instances since closed
  // kprobectl's own counting: the formats of the events it counts, what
  // reads them, the records read per event.
  std::unique_ptr<EventDecoder> decoder_;
  std::unique_ptr<Printer> printer_;  // the tracer's, unused: records go to the runs
  std::ostringstream nowhere_;
  std::unique_ptr<Tracer> tracer_;
  std::map<std::string, uint64_t> read_;
};

struct ServeState::Plan {
  ServeConfig config;
  std::vector<Probe> probes;  // next's lines, each with its events
  std::vector<TraceEventDef> added, removed;
  // next's hist lines: a running one kept (its index), or planned anew.
  struct NextHist {
    ServeHist line;
    std::optional<size_t> kept;
    std::optional<HistRun> planned;
  };
  std::vector<NextHist> hists;
  std::vector<TraceEventDef> served;
};

}  // namespace kprobectl::cli
