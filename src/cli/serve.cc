// SPDX-License-Identifier: GPL-2.0-or-later
//
// serve: the passes of trace, kept in place until a stop signal, with the
// counts served to Prometheus.
//   1. the configuration read, the socket bound (a port in use stops here,
//      nothing written); what killed runs left removed (a previous serve's
//      too: a restart replaces its own leftovers, never another tool's);
//   2. the probes resolved and every aggregation bound to its event's
//      arguments, still nothing written;
//   3. the probes recorded, then added; a private instance; hist triggers
//      there, or where the kernel has none, its events enabled and
//      counted by kprobectl from the ring buffer;
//   4. served until SIGINT, SIGTERM, SIGHUP or SIGQUIT; then the server
//      stops, and triggers, instance, probes and record go, in that order.
// A scrape reads the hist files (or kprobectl's tables) and the probe
// profiles under one lock, which kprobectl's own counting takes too.
#include "kprobectl/serve.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>

#include "commands.h"
#include "hist_run.h"
#include "kprobectl/http_server.h"
#include "kprobectl/leftovers.h"
#include "kprobectl/password_check.h"
#include "kprobectl/self_metrics.h"
#include "kprobectl/strings.h"
#include "kprobectl/trace_symbols.h"
#include "kprobectl/tracer.h"
#include "kprobectl/web_config.h"
#include "temporary_probes.h"

namespace kprobectl::cli {

namespace {

// What a scrape reads, and kprobectl's counting where the kernel has no
// hist triggers.
struct Served {
  std::mutex lock;
  bool ready = false;
  std::vector<HistRun> runs;
  std::vector<std::string> names;
  std::vector<TraceEventDef> probes;  // whose hits are served
  uint64_t scrape_errors = 0;
};

Result<std::vector<TraceEventDef>> ResolveProbes(const Options& options, const ServeConfig& config,
                                                 const std::string& path, const TracefsDir& dir, EventNamer& namer,
                                                 Streams io) {
  std::vector<TraceEventDef> out;
  for (const ServeProbe& probe : config.probes) {
    Options of = options;
    of.exec = probe.exec;
    TraceOptions trace;
    trace.probes = {Join(probe.spec, " ")};
    // serve counts one event at a time, pairing no return with its entry:
    // a return's arguments the kernel cannot keep are refused, as by add.
    auto defs = ResolveTemporary(of, trace, dir, namer, io, false);
    if (!defs) return Fail(path + ":" + std::to_string(probe.line) + ": " + defs.error().message, defs.error().hint);
    out.insert(out.end(), defs->begin(), defs->end());
  }
  return out;
}

// Each hist line bound to its event, before anything is written.
Result<void> PlanHists(const ServeConfig& config, const std::string& path, const std::vector<TraceEventDef>& defs,
                       const TracefsDir& dir, Served& served) {
  for (const ServeHist& hist : config.hists) {
    std::string where = path + ":" + std::to_string(hist.line) + ": ";
    auto def =
        std::find_if(defs.begin(), defs.end(), [&](const TraceEventDef& d) { return d.FullName() == hist.event; });
    if (def == defs.end())
      return Fail(where + "hist: no probe event " + hist.event,
                  "a 'probe' line of this file, or a probe added with kprobectl add; kprobectl list shows them");
    TraceOptions trace;
    trace.aggregate = hist.words;
    trace.filter = hist.filter;
    // A histogram's _sum: the bucketed argument's sum, asked of the kernel too.
    auto parsed = ParseAggregation(hist.words);
    if (!parsed) return Fail(where + parsed.error().message, parsed.error().hint);
    for (const AggKey& key : parsed->keys)
      if (key.buckets != AggKey::kExact &&
          std::find(hist.words.sums.begin(), hist.words.sums.end(), key.arg) == hist.words.sums.end()) {
        trace.aggregate->sums.push_back(key.arg);
        break;
      }
    TracePlan plan;
    plan.events = {*def};
    auto run = HistRun::Plan(trace, plan, dir);
    if (!run) return Fail(where + run.error().message, run.error().hint);
    served.runs.push_back(std::move(*run));
    served.names.push_back(hist.name);
  }
  return {};
}

Result<std::string> Metrics(Served& served, const TracefsDir& dir, TraceSession& session, const ProbeEvents& events,
                            unsigned max_series, const KernelEnv& env) {
  auto start = std::chrono::steady_clock::now();
  std::vector<ProbeHits> hits;
  for (ProbeKind kind : {ProbeKind::kKernel, ProbeKind::kUser}) {
    auto profile = events.Profile(kind);
    if (!profile) continue;
    for (const TraceEventDef& def : served.probes)
      if (def.kind == kind)
        if (const ProfileEntry* entry = FindProfileEntry(*profile, def))
          hits.push_back({def.FullName(), entry->hits, entry->misses});
  }
  std::vector<std::vector<AggTable>> tables;
  for (HistRun& run : served.runs) tables.push_back(KP_TRY(run.Tables(dir, session, false)));
  std::vector<MetricsTable> shown;
  for (size_t i = 0; i < tables.size(); ++i)
    shown.push_back({served.names[i], &served.runs[i].spec(0), &tables[i].front()});
  ScrapeStats scrape{std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                     served.scrape_errors};
  ProcessStats process = KP_TRY(ReadProcessStats(env.proc, "self", sysconf(_SC_CLK_TCK), sysconf(_SC_PAGESIZE)));
  return RenderMetrics(hits, shown, max_series) + RenderSelfMetrics(KPROBECTL_VERSION, process, scrape);
}

// The events kprobectl counts itself, enabled, and what reads them.
struct OwnCounting {
  std::unique_ptr<EventDecoder> decoder;
  std::unique_ptr<Printer> printer;  // the tracer's, unused: records go to the runs
  std::ostringstream nowhere;
  std::unique_ptr<Tracer> tracer;
  std::unique_ptr<RingReader> reader;
};

Result<void> CountOwn(Served& served, const TracefsDir& dir, TraceSession& session, CommCache& comms,
                      OwnCounting& own) {
  std::vector<std::pair<std::string, std::string>> formats;
  std::vector<std::string> paths;
  for (HistRun& run : served.runs)
    if (!run.in_kernel())
      for (const std::string& path : run.paths())
        if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(path);
  if (paths.empty()) return {};
  for (const std::string& path : paths)
    formats.emplace_back(path.substr(0, path.find('/')), KP_TRY(dir.Read("events/" + path + "/format")));
  own.decoder = KP_TRY(EventDecoder::FromFormats(formats));
  std::vector<EventPlan> plans;
  for (const EventFormat& format : own.decoder->formats()) plans.push_back(KP_TRY(PlanEvent(format)));
  for (HistRun& run : served.runs)
    if (!run.in_kernel()) KP_TRY_VOID(run.Bind(own.decoder->formats(), [&](int pid) { return comms.Lookup(pid); }));
  own.printer = std::make_unique<Printer>(
      Printer::Options{}, [](int) { return std::string(); }, [](uint64_t) { return std::string(); });
  own.tracer = std::make_unique<Tracer>(*own.decoder, std::move(plans), *own.printer, own.nowhere, "nowhere");
  own.tracer->SetSink([&served](const EventPlan& p, const Record& r, const EventStacks*, const OpenCall*) {
    for (HistRun& run : served.runs)
      if (!run.in_kernel()) run.Add(p, r);
  });
  for (const std::string& path : paths) KP_TRY_VOID(session.Enable(path));
  own.reader = KP_TRY(RingReader::Open(dir.root(), session.name()));
  return {};
}

// A probe's hits are counted (kprobe_profile, uprobe_profile) only while
// its event is enabled somewhere: one that no hist line enables is enabled
// in the instance behind a filter that records nothing (the hit is counted
// before the filter runs).
Result<void> EnableUncounted(Served& served, TraceSession& session) {
  std::vector<std::string> enabled;
  for (HistRun& run : served.runs)
    for (const std::string& path : run.paths()) enabled.push_back(path);
  for (const TraceEventDef& def : served.probes) {
    std::string path = def.Path();
    if (std::find(enabled.begin(), enabled.end(), path) != enabled.end()) continue;
    KP_TRY_VOID(session.SetFilter(path, "common_pid < 0"));
    KP_TRY_VOID(session.Enable(path));
    enabled.push_back(path);
  }
  return {};
}

Result<std::string> ReadText(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Fail("cannot read " + what + " '" + path + "': " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The web configuration's TLS files read, its headers taken.
Result<HttpOptions> HttpOptionsOf(const WebConfig& web) {
  HttpOptions http;
  http.headers = web.headers;
  if (!web.tls) return http;
  const WebTls& tls = *web.tls;
  std::string named = " (" + web.path + ")";
  TlsMaterial material;
  material.cert_file = tls.cert_file;
  material.key_file = tls.key_file;
  material.client_ca_file = tls.client_ca_file;
  material.cert_pem = KP_TRY(ReadText(tls.cert_file, "the cert_file" + named));
  material.key_pem = KP_TRY(ReadText(tls.key_file, "the key_file" + named));
  if (tls.verify_clients) material.client_ca_pem = KP_TRY(ReadText(tls.client_ca_file, "the client_ca_file" + named));
  material.priorities = KP_TRY(TlsPriorities(tls, web.path));
  http.tls = std::move(material);
  return http;
}

}  // namespace

Result<void> RunServe(const Options& options, const ServeOptions& serve, Streams io) {
  StopSignals signals;
  std::string text = KP_TRY(ReadText(serve.config, "the configuration"));
  ServeConfig config = KP_TRY(ParseServeConfig(text, serve.config));
  if (!serve.listen.empty()) KP_TRY_VOID(ParseListen(serve.listen, config));
  std::string web_path = serve.web_config.empty() ? config.web_config : serve.web_config;
  std::optional<WebConfig> web;
  if (!web_path.empty()) {
    std::string web_text = KP_TRY(ReadText(web_path, "the web configuration"));
    web = KP_TRY(ParseWebConfig(web_text, web_path));
  }
  std::string exposed = KP_TRY(CheckExposure(config.address, web ? &*web : nullptr, serve.insecure));
  if (!exposed.empty()) io.err << exposed << "\n";
  HttpOptions http = web ? KP_TRY(HttpOptionsOf(*web)) : HttpOptions{};
  bool https = http.tls.has_value();
  std::optional<PasswordCheck> passwords;
  if (web && !web->users.empty()) passwords = KP_TRY(PasswordCheck::Load());
  PasswordMatches matches = [&](const std::string& password, const std::string& hash) {
    return passwords->Matches(password, hash);
  };
  auto dir = KP_TRY(OpenTracefs(options));
  auto log = [&](std::string_view line) {
    if (options.verbose) io.err << line << "\n";
  };
  ProbeEvents events(*dir, log);
  Served served;
  const KernelEnv& env = options.env;
  std::unique_ptr<TraceSession> session;
  // 1. Bound first: a port in use stops everything before tracefs is touched.
  auto answer = [&](const HttpRequest& request) {
    if (passwords)
      if (auto denied = CheckBasicAuth(request.authorization, web->users, matches)) return *denied;
    return AnswerRequest(
        request.method, request.url,
        [&]() -> Result<std::string> {
          std::lock_guard held(served.lock);
          if (!served.ready) return Fail("kprobectl serve is starting");
          auto exposition = Metrics(served, *dir, *session, events, config.max_series, env);
          if (!exposition) ++served.scrape_errors;
          return exposition;
        },
        MaxMetricsBytes());
  };
  auto server = KP_TRY(HttpServer::Start(config.address, config.port, answer, std::move(http)));
  KP_TRY_VOID(CleanLeftovers(*dir, options, io));

  // 2. Resolved and bound; nothing written yet.
  EventNamer namer(KP_TRY(events.Names()), true);
  std::vector<TraceEventDef> added = KP_TRY(ResolveProbes(options, config, serve.config, *dir, namer, io));
  std::vector<TraceEventDef> known = KP_TRY(events.List());
  known.insert(known.end(), added.begin(), added.end());
  KP_TRY_VOID(PlanHists(config, serve.config, known, *dir, served));
  served.probes = added;
  for (const ServeHist& hist : config.hists)
    for (const TraceEventDef& def : known)
      if (def.FullName() == hist.event &&
          std::none_of(served.probes.begin(), served.probes.end(),
                       [&](const TraceEventDef& d) { return d.FullName() == def.FullName(); }))
        served.probes.push_back(def);

  // 3. Recorded, added, counted.
  TemporaryProbes probes(events, KP_TRY(TemporaryRecord::Create(options.runtime_dir, dir->root(), Self(env))), signals,
                         io);
  KP_TRY_VOID(probes.Add(added));
  session = KP_TRY(TraceSession::Create(*dir, InstanceName(getpid()), log));
  session->ExcludePid(getpid());
  CommCache comms(*dir, env.proc);
  OwnCounting own;
  {
    std::lock_guard held(served.lock);
    for (HistRun& run : served.runs) {
      io.err << run.Note();
      if (run.in_kernel()) KP_TRY_VOID(run.Start(*session));
    }
    KP_TRY_VOID(CountOwn(served, *dir, *session, comms, own));
    KP_TRY_VOID(EnableUncounted(served, *session));
    served.ready = true;
  }
  if (!options.quiet)
    io.err << "kprobectl: serving " << (https ? "https://" : "http://")
           << (config.address.find(':') != std::string::npos ? "[" + config.address + "]" : config.address) << ":"
           << server->port() << "/metrics\n";

  // 4. Until a stop signal.
  Result<void> failure;
  for (bool stop = false; !stop && failure;) {
    pollfd pfd{signals.fd(), POLLIN, 0};
    if (poll(&pfd, 1, 100) > 0)
      for (int sig = signals.Next(); sig; sig = signals.Next()) stop = stop || sig != SIGCHLD;
    if (own.tracer) {
      std::lock_guard held(served.lock);
      comms.Refresh();
      failure = own.tracer->Drain(*own.reader);
    }
  }
  server.reset();  // no scrape reads what goes next
  own.reader.reset();
  auto closed = session->Close();
  if (!failure) return failure;
  return closed;
}

}  // namespace kprobectl::cli
