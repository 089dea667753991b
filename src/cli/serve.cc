// SPDX-License-Identifier: GPL-2.0-or-later
//
// serve: the passes of trace, kept in place until a stop signal, with the
// counts served to Prometheus.
//   1. the configuration read, the socket bound (a port in use stops here,
//      nothing written); what killed runs left removed (a previous serve's
//      too: a restart replaces its own leftovers, never another tool's);
//   2. the configuration planned and committed (serve_state.h): probes
//      resolved, hist lines bound, then written; a private instance; hist
//      triggers there, or where the kernel has none, the events counted by
//      kprobectl from the ring buffer;
//   3. served until SIGINT, SIGTERM or SIGQUIT; SIGHUP (or POST /-/reload,
//      where the file enables it) reads the configuration and the web
//      configuration again and commits what changed, or refuses it whole
//      and keeps what runs; a changed web configuration (new certificates)
//      is read again within a second;
//   4. then the server stops, and triggers, instance, probes and record go,
//      in that order.
// A scrape reads the hist files (or kprobectl's tables) and the probe
// profiles under one lock, which kprobectl's own counting and a reload's
// commit take too; a reload resolves and plans without it.
#include "kprobectl/serve.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <tuple>

#include "commands.h"
#include "kprobectl/http_server.h"
#include "kprobectl/leftovers.h"
#include "kprobectl/password_check.h"
#include "kprobectl/self_metrics.h"
#include "kprobectl/strings.h"
#include "kprobectl/web_config.h"
#include "serve_state.h"
#include "temporary_probes.h"

namespace kprobectl::cli {

namespace {

Result<std::string> ReadText(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Fail("cannot read " + what + " '" + path + "': " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The web configuration as it applies: the server's options (TLS files
// read, headers), the users, and the files it was read from, to notice a
// change (each file's inode, size and time).
struct Web {
  HttpOptions http;
  std::vector<WebUser> users;
  std::vector<std::string> files;
  std::string stamp;
};

std::string Stamp(const std::vector<std::string>& files) {
  std::string out;
  for (const std::string& file : files) {
    struct stat st {};
    if (stat(file.c_str(), &st) != 0) {
      out += file + ":missing;";
      continue;
    }
    out += file + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
           std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + ";";
  }
  return out;
}

// `path` empty: none (plain HTTP, no users). Checked against the address
// listened on; a warning to print goes to `warning`.
Result<Web> LoadWeb(const std::string& path, const std::string& address, bool insecure, std::string& warning) {
  Web out;
  std::optional<WebConfig> web;
  if (!path.empty()) {
    out.files.push_back(path);
    out.stamp = Stamp(out.files);  // before the read: a change during it is seen next time
    std::string text = KP_TRY(ReadText(path, "the web configuration"));
    web = KP_TRY(ParseWebConfig(text, path));
  }
  warning = KP_TRY(CheckExposure(address, web ? &*web : nullptr, insecure));
  if (!web) return out;
  out.http.headers = web->headers;
  out.users = web->users;
  if (!web->tls) return out;
  const WebTls& tls = *web->tls;
  out.files.insert(out.files.end(), {tls.cert_file, tls.key_file});
  if (tls.verify_clients) out.files.push_back(tls.client_ca_file);
  out.stamp = Stamp(out.files);
  std::string named = " (" + web->path + ")";
  TlsMaterial material;
  material.cert_file = tls.cert_file;
  material.key_file = tls.key_file;
  material.client_ca_file = tls.client_ca_file;
  material.cert_pem = KP_TRY(ReadText(tls.cert_file, "the cert_file" + named));
  material.key_pem = KP_TRY(ReadText(tls.key_file, "the key_file" + named));
  if (tls.verify_clients) material.client_ca_pem = KP_TRY(ReadText(tls.client_ca_file, "the client_ca_file" + named));
  material.priorities = KP_TRY(TlsPriorities(tls, web->path));
  out.http.tls = std::move(material);
  return out;
}

bool SameOptions(const HttpOptions& a, const HttpOptions& b) {
  auto fields = [](const HttpOptions& o) {
    return o.tls ? std::tuple(o.tls->cert_pem, o.tls->key_pem, o.tls->client_ca_pem, o.tls->priorities)
                 : std::tuple(std::string(), std::string(), std::string(), std::string());
  };
  return a.tls.has_value() == b.tls.has_value() && fields(a) == fields(b) && a.headers == b.headers;
}

// What the server's thread reads, under `lock`.
struct Shared {
  std::mutex lock;
  ServeState* state = nullptr;  // null until the first commit
  unsigned max_series = 0;
  uint64_t scrape_errors = 0;
  ReloadStats reloads;
  std::vector<WebUser> users;
  bool enable_reload = false;
  // POST /-/reload: asked of the main thread, answered here.
  uint64_t reloads_asked = 0, reloads_done = 0;
  bool stopping = false;
  bool sweeping = false;  // the main thread stops replaced daemons: no reload is asked
  Result<void> last_reload;
  std::condition_variable reloaded;
};

double Now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

// The whole of serve, from its configuration file.
class Server {
 public:
  Server(const Options& options, const ServeOptions& serve, Streams io) : options_(options), serve_(serve), io_(io) {}
  ~Server() {
    Teardown();
    if (wake_ >= 0) close(wake_);
  }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  Result<void> Run();

 private:
  Result<ServeConfig> ReadConfig() const;
  std::string WebPath(const ServeConfig& config) const {
    return serve_.web_config.empty() ? config.web_config : serve_.web_config;
  }
  HttpAnswer Answer(const HttpRequest& request);
  Result<std::string> Scrape();
  // SIGHUP, POST /-/reload: all of it again, or none.
  Result<void> Reload(const std::string& why);
  Result<void> ReloadWeb();
  void Said(const std::string& why, const Result<void>& result);
  void Sweep();
  // Before anything Run() made goes: the server (its waiters told), then
  // the state, which refers to Run()'s tracefs, probes and session.
  void Teardown();
  Result<void> Loop(StopSignals& signals);

  const Options& options_;
  const ServeOptions& serve_;
  Streams io_;
  Shared shared_;
  std::optional<PasswordCheck> passwords_;
  Web web_;
  std::optional<ServeState> state_;
  int wake_ = -1;  // an eventfd: POST /-/reload asks
  TraceSession* session_ = nullptr;
  std::unique_ptr<HttpServer> server_;  // last: it goes first, and no request reads what goes after
};

Result<ServeConfig> Server::ReadConfig() const {
  std::string text = KP_TRY(ReadText(serve_.config, "the configuration"));
  ServeConfig config = KP_TRY(ParseServeConfig(text, serve_.config));
  if (!serve_.listen.empty()) KP_TRY_VOID(ParseListen(serve_.listen, config));
  return config;
}

HttpAnswer Server::Answer(const HttpRequest& request) {
  std::vector<WebUser> users;
  bool enable_reload = false;
  {
    std::lock_guard held(shared_.lock);
    users = shared_.users;
    enable_reload = shared_.enable_reload;
  }
  if (!users.empty()) {
    PasswordMatches matches = [&](const std::string& password, const std::string& hash) {
      return passwords_->Matches(password, hash);
    };
    if (auto denied = CheckBasicAuth(request.authorization, users, matches)) return *denied;
  }
  std::function<Result<void>()> reload;
  if (enable_reload)
    reload = [this]() -> Result<void> {
      std::unique_lock held(shared_.lock);
      // While the main thread stops replaced daemons it would wait for this
      // one (Sweep()): asked again, it reloads.
      if (shared_.sweeping || shared_.stopping) return Fail("kprobectl serve is busy; ask again in a moment");
      uint64_t ticket = ++shared_.reloads_asked;
      uint64_t one = 1;
      if (write(wake_, &one, sizeof(one)) != sizeof(one)) return Fail("cannot ask for a reload");
      if (!shared_.reloaded.wait_for(held, std::chrono::minutes(2),
                                     [&] { return shared_.reloads_done >= ticket || shared_.stopping; }))
        return Fail(
            "the reload took more than two minutes; it goes on, and kprobectl_config_last_reload_successful "
            "will say how it ended");
      if (shared_.reloads_done < ticket) return Fail("kprobectl serve is stopping");
      return shared_.last_reload;
    };
  return AnswerRequest(
      request.method, request.url, [this] { return Scrape(); }, MaxMetricsBytes(), reload);
}

Result<std::string> Server::Scrape() {
  auto start = std::chrono::steady_clock::now();
  std::lock_guard held(shared_.lock);
  if (!shared_.state) return Fail("kprobectl serve is starting");
  auto counts = shared_.state->Metrics(shared_.max_series);
  if (!counts) {
    ++shared_.scrape_errors;
    return counts;
  }
  ScrapeStats scrape{std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                     shared_.scrape_errors, shared_.state->EventsLost()};
  const KernelEnv& env = options_.env;
  ProcessStats process = KP_TRY(ReadProcessStats(env.proc, "self", sysconf(_SC_CLK_TCK), sysconf(_SC_PAGESIZE)));
  return *counts + RenderSelfMetrics(KPROBECTL_VERSION, process, scrape, shared_.reloads);
}

Result<void> Server::Reload(const std::string& why) {
  ServeConfig next = KP_TRY(ReadConfig());
  KP_TRY_VOID(CheckReloadable(state_->config(), next, serve_.config));
  std::string warning;
  Web web = KP_TRY(LoadWeb(WebPath(next), next.address, serve_.insecure, warning));
  if (!web.users.empty() && !passwords_) passwords_ = KP_TRY(PasswordCheck::Load());
  auto plan = KP_TRY(state_->Prepare(next));
  size_t added = plan.added.size(), removed = plan.removed.size();
  bool new_web = !SameOptions(web.http, web_.http);
  if (new_web) KP_TRY_VOID(server_->Reconfigure(web.http));
  std::lock_guard held(shared_.lock);
  ServeConfig running = state_->config();
  auto committed = state_->Commit(std::move(plan), *session_);
  if (!committed) {
    // Undone: the running configuration committed again over what the
    // kernel has now.
    auto again = state_->Prepare(running);
    auto restored = again ? state_->Commit(std::move(*again), *session_) : Result<void>(std::unexpected(again.error()));
    if (new_web) (void)server_->Reconfigure(web_.http);
    return Fail(committed.error().message + (restored ? "; the running configuration is restored"
                                                      : "; and restoring the running one: " + restored.error().message),
                committed.error().hint);
  }
  if (!warning.empty()) io_.err << warning << "\n";
  web_ = std::move(web);
  shared_.users = web_.users;
  shared_.max_series = next.max_series;
  shared_.enable_reload = next.enable_reload;
  if (!options_.quiet)
    io_.err << "kprobectl: serve: " << why << ": " << serve_.config << " read again: " << added
            << " probe events added, " << removed << " removed\n";
  return {};
}

Result<void> Server::ReloadWeb() {
  std::string warning;
  Web web = KP_TRY(LoadWeb(WebPath(state_->config()), state_->config().address, serve_.insecure, warning));
  if (!web.users.empty() && !passwords_) passwords_ = KP_TRY(PasswordCheck::Load());
  if (!SameOptions(web.http, web_.http)) KP_TRY_VOID(server_->Reconfigure(web.http));
  std::lock_guard held(shared_.lock);
  web_ = std::move(web);
  shared_.users = web_.users;
  if (!options_.quiet) io_.err << "kprobectl: serve: the web configuration changed: read again\n";
  return {};
}

// Replaced daemons stopped, when no POST /-/reload waits for this thread
// (stopping a daemon waits for its thread's answer).
void Server::Sweep() {
  {
    std::lock_guard held(shared_.lock);
    if (shared_.reloads_asked != shared_.reloads_done) return;
    shared_.sweeping = true;
  }
  server_->Sweep();
  std::lock_guard held(shared_.lock);
  shared_.sweeping = false;
}

// A reload's outcome, in the log and the metrics.
void Server::Said(const std::string& why, const Result<void>& result) {
  std::lock_guard held(shared_.lock);
  shared_.reloads.last_successful = result.has_value();
  if (result) {
    shared_.reloads.last_success_seconds = Now();
    return;
  }
  ++shared_.reloads.failures;
  io_.err << "kprobectl: error: " << why
          << ": reload refused, the running configuration kept: " << result.error().message << "\n";
  if (!result.error().hint.empty()) io_.err << "  hint: " << result.error().hint << "\n";
}

Result<void> Server::Loop(StopSignals& signals) {
  auto next_look = std::chrono::steady_clock::now();
  for (;;) {
    pollfd fds[2] = {{signals.fd(), POLLIN, 0}, {wake_, POLLIN, 0}};
    if (poll(fds, 2, 100) > 0) {
      bool hup = false, stop = false;
      for (int sig = signals.Next(); sig; sig = signals.Next()) {
        hup = hup || sig == SIGHUP;
        stop = stop || (sig != SIGCHLD && sig != SIGHUP);
      }
      if (stop) return {};
      if (hup) Said("SIGHUP", Reload("SIGHUP"));
      uint64_t asked = 0;
      if (fds[1].revents & POLLIN && read(wake_, &asked, sizeof(asked)) == sizeof(asked)) {
        uint64_t answering = 0;  // the requests this reload answers: those asked before it read the file
        {
          std::lock_guard held(shared_.lock);
          answering = shared_.reloads_asked;
        }
        auto result = Reload("POST /-/reload");
        Said("POST /-/reload", result);
        std::lock_guard held(shared_.lock);
        shared_.last_reload = result;
        shared_.reloads_done = answering;
        shared_.reloaded.notify_all();
        if (shared_.reloads_asked > answering) {
          uint64_t again = 1;
          (void)!write(wake_, &again, sizeof(again));
        }
      }
    }
    Sweep();
    if (std::chrono::steady_clock::now() >= next_look) {
      next_look = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      if (Stamp(web_.files) != web_.stamp) {
        auto result = ReloadWeb();
        if (!result) web_.stamp = Stamp(web_.files);  // said once a change
        Said("the web configuration changed", result);
      }
    }
    std::lock_guard held(shared_.lock);
    KP_TRY_VOID(state_->Drain());
  }
}

void Server::Teardown() {
  {
    std::lock_guard held(shared_.lock);
    shared_.stopping = true;
    shared_.reloaded.notify_all();
  }
  server_.reset();  // no scrape reads what goes next
  state_.reset();
  session_ = nullptr;
}

Result<void> Server::Run() {
  StopSignals signals;
  ServeConfig config = KP_TRY(ReadConfig());
  std::string warning;
  web_ = KP_TRY(LoadWeb(WebPath(config), config.address, serve_.insecure, warning));
  if (!warning.empty()) io_.err << warning << "\n";
  bool https = web_.http.tls.has_value();
  if (!web_.users.empty()) passwords_ = KP_TRY(PasswordCheck::Load());
  shared_.users = web_.users;
  shared_.max_series = config.max_series;
  shared_.enable_reload = config.enable_reload;
  shared_.reloads.last_success_seconds = Now();
  wake_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_ < 0) return Fail(std::string("eventfd: ") + std::strerror(errno));
  auto dir = KP_TRY(OpenTracefs(options_));
  auto log = [&](std::string_view line) {
    if (options_.verbose) io_.err << line << "\n";
  };
  ProbeEvents events(*dir, log);
  const KernelEnv& env = options_.env;
  // 1. Bound first: a port in use stops everything before tracefs is touched.
  server_ = KP_TRY(HttpServer::Start(
      config.address, config.port, [this](const HttpRequest& r) { return Answer(r); }, web_.http));
  KP_TRY_VOID(CleanLeftovers(*dir, options_, io_));
  TemporaryProbes probes(events, KP_TRY(TemporaryRecord::Create(options_.runtime_dir, dir->root(), Self(env))), signals,
                         io_);
  CommCache comms(*dir, env.proc);
  // 2. Planned (nothing written), then committed.
  std::unique_ptr<TraceSession> session;  // made once the first plan stands
  // Whatever way Run() returns from here, the server and the state go
  // before the locals they refer to (the probes would stay, enabled in the
  // state's instances; a scrape would read a session gone).
  struct Guard {
    Server& server;
    ~Guard() { server.Teardown(); }
  } guard{*this};
  state_.emplace(ServeState::Context{options_, serve_.config, *dir, events, probes, comms, io_, getpid(), log});
  auto plan = KP_TRY(state_->Prepare(config));
  session = KP_TRY(TraceSession::Create(*dir, InstanceName(getpid()), log));
  session->ExcludePid(getpid());
  session_ = session.get();
  {
    std::lock_guard held(shared_.lock);
    KP_TRY_VOID(state_->Commit(std::move(plan), *session));
    shared_.state = &*state_;
  }
  if (!options_.quiet)
    io_.err << "kprobectl: serving " << (https ? "https://" : "http://")
            << (config.address.find(':') != std::string::npos ? "[" + config.address + "]" : config.address) << ":"
            << server_->port() << "/metrics\n";
  // 3. Until a stop signal.
  Result<void> served = Loop(signals);
  Teardown();
  auto closed = session->Close();
  if (!served) return served;
  return closed;
}

}  // namespace

Result<void> RunServe(const Options& options, const ServeOptions& serve, Streams io) {
  return Server(options, serve, io).Run();
}

}  // namespace kprobectl::cli
