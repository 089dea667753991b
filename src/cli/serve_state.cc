// SPDX-License-Identifier: GPL-2.0-or-later
#include "serve_state.h"

#include <algorithm>

#include "kprobectl/strings.h"

namespace kprobectl::cli {

namespace {

// A probe's hits are counted (kprobe_profile, uprobe_profile) only while
// its event is enabled somewhere: one that no hist line counts is enabled
// behind this filter, which records nothing (the hit is counted before
// the filter runs).
constexpr std::string_view kRecordNothing = "common_pid < 0";

bool Has(const std::vector<TraceEventDef>& defs, const std::string& full) {
  return std::any_of(defs.begin(), defs.end(), [&](const TraceEventDef& d) { return d.FullName() == full; });
}

std::string At(const std::string& path, int line) { return path + ":" + std::to_string(line) + ": "; }

}  // namespace

Result<std::vector<TraceEventDef>> ServeState::Resolve(const ServeProbe& line, EventNamer& namer) const {
  Options of = c_.options;
  of.exec = line.exec;
  TraceOptions trace;
  trace.probes = {Join(line.spec, " ")};
  // serve counts one event at a time, pairing no return with its entry:
  // a return's arguments the kernel cannot keep are refused, as by add.
  auto defs = ResolveTemporary(of, trace, c_.dir, ReadFeatures(c_.dir), namer, c_.io, false);
  if (!defs) return Fail(At(c_.path, line.line) + defs.error().message, defs.error().hint);
  return defs;
}

// A hist line bound to its event, before anything is written.
Result<HistRun> ServeState::PlanHist(const ServeHist& line, const std::vector<TraceEventDef>& known) const {
  std::string where = At(c_.path, line.line);
  auto def =
      std::find_if(known.begin(), known.end(), [&](const TraceEventDef& d) { return d.FullName() == line.event; });
  if (def == known.end())
    return Fail(where + "hist: no probe event " + line.event,
                "a 'probe' line of this file, or a probe added with kprobectl add; kprobectl list shows them");
  TraceOptions trace;
  trace.aggregate = line.words;
  trace.filter = line.filter;
  // A histogram's _sum: the bucketed argument's sum, asked of the kernel too.
  auto parsed = ParseAggregation(line.words);
  if (!parsed) return Fail(where + parsed.error().message, parsed.error().hint);
  for (const AggKey& key : parsed->keys)
    if (key.buckets != AggKey::kExact &&
        std::find(line.words.sums.begin(), line.words.sums.end(), key.arg) == line.words.sums.end()) {
      trace.aggregate->sums.push_back(key.arg);
      break;
    }
  TracePlan plan;
  plan.events = {*def};
  auto run = HistRun::Plan(trace, plan, ReadFeatures(c_.dir).hist);
  if (!run) return Fail(where + run.error().message, run.error().hint);
  return std::move(*run);
}

Result<ServeState::Plan> ServeState::Prepare(const ServeConfig& next) const {
  ServeConfig running;  // the lines the kernel has now
  for (const Probe& p : probes_) running.probes.push_back(p.line);
  for (const Hist& h : hists_) running.hists.push_back(h.line);
  ServeDiff diff = DiffServeConfigs(running, next);
  Plan plan;
  plan.config = next;
  // A changed line's events take the names of the line's events before.
  std::set<std::string> names = KP_TRY(c_.events.Names());
  for (size_t r : diff.removed_probes)
    for (const TraceEventDef& def : probes_[r].defs) {
      names.erase(def.Path());
      plan.removed.push_back(def);
    }
  EventNamer namer(std::move(names), true);
  plan.probes.resize(next.probes.size());
  for (auto [r, n] : diff.kept_probes) plan.probes[n] = {next.probes[n], probes_[r].defs};
  for (size_t n : diff.added_probes) {
    plan.probes[n] = {next.probes[n], KP_TRY(Resolve(next.probes[n], namer))};
    plan.added.insert(plan.added.end(), plan.probes[n].defs.begin(), plan.probes[n].defs.end());
  }
  std::vector<TraceEventDef> known;
  for (TraceEventDef& def : KP_TRY(c_.events.List()))
    if (!Has(plan.removed, def.FullName())) known.push_back(std::move(def));
  known.insert(known.end(), plan.added.begin(), plan.added.end());
  std::vector<std::optional<size_t>> kept(next.hists.size());
  for (auto [r, n] : diff.kept_hists)
    if (!Has(plan.removed, hists_[r].line.event)) kept[n] = r;  // over a changed probe: counted anew
  std::map<std::string, const ServeHist*> filtered;             // where kprobectl counts: one filter an event
  for (size_t n = 0; n < next.hists.size(); ++n) {
    Plan::NextHist h{next.hists[n], kept[n], std::nullopt};
    if (!kept[n]) h.planned = KP_TRY(PlanHist(next.hists[n], known));
    const HistRun& run = kept[n] ? hists_[*kept[n]].run : *h.planned;
    for (const std::string& path : run.in_kernel() ? std::vector<std::string>() : run.paths()) {
      auto [other, fresh] = filtered.try_emplace(path, &next.hists[n]);
      if (!fresh && other->second->filter != next.hists[n].filter)
        return Fail(At(c_.path, next.hists[n].line) + "hist: " + next.hists[n].event + " is counted by line " +
                        std::to_string(other->second->line) +
                        " with another --filter, and kprobectl counts it itself (the kernel does not here)",
                    "kprobectl filters an event once, in the kernel: give its hist lines one --filter");
    }
    plan.hists.push_back(std::move(h));
  }
  for (const Probe& p : plan.probes) plan.served.insert(plan.served.end(), p.defs.begin(), p.defs.end());
  for (const ServeHist& h : next.hists)
    for (const TraceEventDef& def : known)
      if (def.FullName() == h.event && !Has(plan.served, def.FullName())) plan.served.push_back(def);
  return plan;
}

std::map<std::string, std::string> ServeState::Counted(const std::vector<HistView>& hists) {
  std::map<std::string, std::string> out;
  for (const HistView& h : hists)
    if (!h.run->in_kernel())
      for (const std::string& path : h.run->paths()) out[path] = h.line->filter;
  return out;
}

std::set<std::string> ServeState::Uncounted(const std::vector<HistView>& hists,
                                            const std::vector<TraceEventDef>& served) {
  std::set<std::string> counted;
  for (const HistView& h : hists)
    for (const std::string& path : h.run->paths()) counted.insert(path);
  std::set<std::string> out;
  for (const TraceEventDef& def : served)
    if (!counted.contains(def.Path())) out.insert(def.Path());
  return out;
}

Result<void> ServeState::Rewire(const std::map<std::string, std::string>& counted,
                                const std::set<std::string>& uncounted, bool leaving_only) {
  for (auto it = uncounted_.begin(); it != uncounted_.end();) {
    if (uncounted.contains(*it)) {
      ++it;
      continue;
    }
    KP_TRY_VOID(session_->Disable(*it));
    std::string path = *it;
    it = uncounted_.erase(it);  // disabled: whatever the filter's fate, it is no longer counted
    KP_TRY_VOID(session_->SetFilter(path, "0"));
  }
  for (auto it = counting_.begin(); it != counting_.end();) {
    if (counted.contains(it->first)) {
      ++it;
      continue;
    }
    if (tracer_) KP_TRY_VOID(tracer_->Drain(*it->second.reader));  // its last events counted
    for (const TraceSession::CpuStats& cpu : it->second.session->Stats()) lost_before_ += cpu.overrun + cpu.dropped;
    it->second.reader.reset();
    KP_TRY_VOID(it->second.session->Close());
    it = counting_.erase(it);
  }
  if (leaving_only) return {};
  for (const std::string& path : uncounted)
    if (!uncounted_.contains(path)) {
      KP_TRY_VOID(session_->SetFilter(path, std::string(kRecordNothing)));
      KP_TRY_VOID(session_->Enable(path));
      uncounted_.insert(path);
    }
  for (const auto& [path, filter] : counted) {
    auto now = counting_.find(path);
    if (now != counting_.end()) {
      if (now->second.filter != filter)
        KP_TRY_VOID(now->second.session->SetFilter(path, filter.empty() ? "0" : filter));
      now->second.filter = filter;
      continue;
    }
    Counting counting;
    counting.session = KP_TRY(TraceSession::Create(c_.dir, InstanceName(c_.pid, next_part_++), c_.log));
    counting.session->ExcludePid(c_.pid);
    if (!filter.empty()) KP_TRY_VOID(counting.session->SetFilter(path, filter));
    KP_TRY_VOID(counting.session->Enable(path));
    counting.reader = KP_TRY(RingReader::Open(c_.dir.root(), counting.session->name()));
    counting.filter = filter;
    counting_.emplace(path, std::move(counting));
  }
  return {};
}

Result<void> ServeState::Commit(Plan plan, TraceSession& session) {
  session_ = &session;
  KP_TRY_VOID(Drain());  // the kept tables have every record so far
  std::vector<Hist> next;
  std::vector<bool> going(hists_.size(), true);
  for (const Plan::NextHist& h : plan.hists)
    if (h.kept) going[*h.kept] = false;
  // 1. What goes: the triggers on probes that go (a probe with one cannot
  // be removed), its events' enables, its probes. The other triggers that
  // go wait until the new probes are in: a refused commit keeps them, and
  // their counts.
  auto stop_going = [&](bool over_removed) -> Result<void> {
    for (size_t r = 0; r < hists_.size(); ++r)
      if (going[r] && hists_[r].started && Has(plan.removed, hists_[r].line.event) == over_removed) {
        if (hists_[r].run.in_kernel()) KP_TRY_VOID(hists_[r].run.Stop(*session_));
        hists_[r].started = false;
      }
    return {};
  };
  KP_TRY_VOID(stop_going(true));
  std::vector<HistView> target;  // next's hists, as they will run
  for (const Plan::NextHist& h : plan.hists) target.push_back({&h.line, h.kept ? &hists_[*h.kept].run : &*h.planned});
  std::map<std::string, std::string> counted = Counted(target);
  std::set<std::string> uncounted = Uncounted(target, plan.served);
  // A changed probe's event goes, though its name comes back.
  auto staying_counted = counted;
  auto staying_uncounted = uncounted;
  for (const TraceEventDef& def : plan.removed) {
    staying_counted.erase(def.Path());
    staying_uncounted.erase(def.Path());
  }
  KP_TRY_VOID(Rewire(staying_counted, staying_uncounted, true));
  KP_TRY_VOID(c_.probes.Remove(plan.removed));
  std::erase_if(probes_, [&](const Probe& p) {
    return std::any_of(p.defs.begin(), p.defs.end(),
                       [&](const TraceEventDef& d) { return Has(plan.removed, d.FullName()); });
  });
  // 2. What comes: its probes all at once, its triggers, its enables.
  KP_TRY_VOID(c_.probes.Add(plan.added));
  KP_TRY_VOID(stop_going(false));
  for (const TraceEventDef& def : plan.removed) read_.erase(def.FullName());  // a new event, if its name comes back
  probes_ = plan.probes;
  for (Plan::NextHist& h : plan.hists) {
    if (h.kept)
      next.push_back(std::move(hists_[*h.kept]));
    else
      next.push_back({h.line, std::move(*h.planned), false});
    next.back().line = h.line;  // a kept line's place in the file
  }
  hists_ = std::move(next);
  served_ = plan.served;
  for (Hist& h : hists_)
    if (!h.started && h.run.in_kernel()) {
      c_.io.err << h.run.Note();
      KP_TRY_VOID(h.run.Start(*session_));
      h.started = true;
    }
  KP_TRY_VOID(Rewire(counted, uncounted, false));
  KP_TRY_VOID(Count());
  config_ = std::move(plan.config);
  return {};
}

// kprobectl's own counting made to read the events of the hists it
// counts; the reader, opened once, keeps its place in the buffer.
Result<void> ServeState::Count() {
  std::vector<std::string> paths;
  for (const Hist& h : hists_)
    if (!h.run.in_kernel())
      for (const std::string& path : h.run.paths())
        if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(path);
  tracer_.reset();
  decoder_.reset();
  std::map<std::string, uint64_t> read;  // only what is read now: a count no longer read would stand still
  for (std::string path : paths) {
    std::string full = path.replace(path.find('/'), 1, ":");
    read[full] = read_.contains(full) ? read_[full] : 0;
  }
  read_ = std::move(read);
  if (paths.empty()) return {};
  std::vector<std::pair<std::string, std::string>> formats;
  for (const std::string& path : paths)
    formats.emplace_back(path.substr(0, path.find('/')), KP_TRY(c_.dir.Read("events/" + path + "/format")));
  decoder_ = KP_TRY(EventDecoder::FromFormats(formats));
  std::vector<EventPlan> plans;
  for (const EventFormat& format : decoder_->formats()) plans.push_back(KP_TRY(PlanEvent(format)));
  for (Hist& h : hists_)
    if (!h.run.in_kernel() && !h.started) {
      c_.io.err << h.run.Note();
      KP_TRY_VOID(h.run.Bind(decoder_->formats(), [this](int pid) { return c_.comms.Lookup(pid); }));
      h.started = true;
    }
  printer_ = std::make_unique<Printer>(
      Printer::Options{}, [](int) { return std::string(); }, [](uint64_t) { return std::string(); });
  tracer_ = std::make_unique<Tracer>(*decoder_, std::move(plans), *printer_, nowhere_, "nowhere");
  tracer_->SetSink([this](const EventPlan& p, const Record& r, const EventStacks*, const OpenCall*) {
    ++read_[p.full_name];
    for (Hist& h : hists_)
      if (!h.run.in_kernel()) h.run.Add(p, r);
  });
  return {};
}

Result<void> ServeState::Drain() {
  if (!tracer_) return {};
  c_.comms.Refresh();
  for (auto& [path, counting] : counting_) KP_TRY_VOID(tracer_->Drain(*counting.reader));
  return {};
}

std::optional<uint64_t> ServeState::EventsLost() const {
  if (counting_.empty() && lost_before_ == 0) return std::nullopt;
  uint64_t lost = lost_before_;
  for (const auto& [path, counting] : counting_)
    for (const TraceSession::CpuStats& cpu : counting.session->Stats()) lost += cpu.overrun + cpu.dropped;
  return lost;
}

Result<std::string> ServeState::Metrics(unsigned max_series) {
  std::vector<ProbeHits> hits;
  for (ProbeKind kind : {ProbeKind::kKernel, ProbeKind::kUser}) {
    auto profile = c_.events.Profile(kind);
    if (!profile) continue;
    for (const TraceEventDef& def : served_)
      if (def.kind == kind)
        if (const ProfileEntry* entry = FindProfileEntry(*profile, def)) {
          ProbeHits h{def.FullName(), entry->hits, entry->misses, std::nullopt};
          if (auto read = read_.find(def.FullName()); read != read_.end()) h.read = read->second;
          hits.push_back(std::move(h));
        }
  }
  std::vector<std::vector<AggTable>> tables;
  for (Hist& h : hists_) tables.push_back(KP_TRY(h.run.Tables(c_.dir, *session_, false)));
  std::vector<MetricsTable> shown;
  for (size_t i = 0; i < tables.size(); ++i)
    shown.push_back({hists_[i].line.name, &hists_[i].run.spec(0), &tables[i].front()});
  return RenderMetrics(hits, shown, max_series);
}

}  // namespace kprobectl::cli
