// SPDX-License-Identifier: GPL-2.0-or-later
//
// libmicrohttpd, wrapped. Its internal thread polls every connection
// (poll()), so one that sends its request a byte a
// minute waits alone until the timeout closes it; the number of
// connections, and the memory each may take (the request line and headers
// of a GET must fit), are bounded. Requests are answered on their first
// call, before any body is read: a GET has none, and other methods are
// refused. The library is loaded when serve starts (SharedLibrary says
// why) and called through the pointers it gives. With TLS, each new
// connection is told, before its handshake, to require a verified client
// certificate where an authority is configured (TlsSession does that in
// GnuTLS); a request on a connection whose certificate did not verify is
// dropped without an answer. New options (a web configuration read again)
// start a new daemon on the same socket: the old one stops accepting, and
// Sweep() stops it once it has had a second to finish its answers (not
// Reconfigure() itself: its caller may be what an answer waits for).
#include "kprobectl/http_server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "kprobectl/shared_library.h"

namespace kprobectl {

namespace {

constexpr unsigned kTimeoutSeconds = 10;
// Held connections (idle, slow readers) must not starve a scrape: a
// connection costs a descriptor and at most kConnectionMemory.
constexpr unsigned kMaxConnections = 512;
constexpr size_t kConnectionMemory = size_t{32} * 1024;
constexpr size_t kMaxBody = size_t{16} * 1024 * 1024;
// How long a daemon replaced by Reconfigure() may finish its answers.
constexpr auto kRetireGrace = std::chrono::seconds(1);

struct Mhd {
  SharedLibrary library;
  decltype(&MHD_start_daemon) start_daemon;
  decltype(&MHD_stop_daemon) stop_daemon;
  decltype(&MHD_quiesce_daemon) quiesce_daemon;
  decltype(&MHD_get_daemon_info) get_daemon_info;
  decltype(&MHD_create_response_from_buffer) create_response_from_buffer;
  decltype(&MHD_add_response_header) add_response_header;
  decltype(&MHD_queue_response) queue_response;
  decltype(&MHD_destroy_response) destroy_response;
  decltype(&MHD_lookup_connection_value) lookup_connection_value;
  decltype(&MHD_get_connection_info) get_connection_info;
};

Result<Mhd> LoadMhd() {
  SharedLibrary library =
      KP_TRY(SharedLibrary::Open(KPROBECTL_MICROHTTPD_SONAME, "serve", KPROBECTL_MICROHTTPD_PACKAGE));
  return Mhd{library,
             KP_TRY(library.Function<decltype(MHD_start_daemon)>("MHD_start_daemon")),
             KP_TRY(library.Function<decltype(MHD_stop_daemon)>("MHD_stop_daemon")),
             KP_TRY(library.Function<decltype(MHD_quiesce_daemon)>("MHD_quiesce_daemon")),
             KP_TRY(library.Function<decltype(MHD_get_daemon_info)>("MHD_get_daemon_info")),
             KP_TRY(library.Function<decltype(MHD_create_response_from_buffer)>("MHD_create_response_from_buffer")),
             KP_TRY(library.Function<decltype(MHD_add_response_header)>("MHD_add_response_header")),
             KP_TRY(library.Function<decltype(MHD_queue_response)>("MHD_queue_response")),
             KP_TRY(library.Function<decltype(MHD_destroy_response)>("MHD_destroy_response")),
             KP_TRY(library.Function<decltype(MHD_lookup_connection_value)>("MHD_lookup_connection_value")),
             KP_TRY(library.Function<decltype(MHD_get_connection_info)>("MHD_get_connection_info"))};
}

// One libmicrohttpd daemon on the listening socket, with one set of
// options (TLS material, headers). Stopping it leaves the socket open
// (quiesced first): the socket is the server's, which may hand it to the
// next daemon.
class MhdDaemon {
 public:
  MhdDaemon(const Mhd& mhd, const HttpServer::Handler& handler, HttpOptions options, std::optional<TlsSession> tls)
      : mhd_(mhd), handler_(handler), options_(std::move(options)), tls_(std::move(tls)) {}
  ~MhdDaemon() { Stop(); }
  MhdDaemon(const MhdDaemon&) = delete;
  MhdDaemon& operator=(const MhdDaemon&) = delete;

  Result<void> Run(int fd, uint16_t port) {
    std::vector<MHD_OptionItem> items = {
        {MHD_OPTION_LISTEN_SOCKET, fd, nullptr},
        {MHD_OPTION_CONNECTION_TIMEOUT, kTimeoutSeconds, nullptr},
        {MHD_OPTION_CONNECTION_LIMIT, kMaxConnections, nullptr},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<intptr_t>(kConnectionMemory), nullptr}};
    // poll(), not epoll: quiescing an epoll daemon from another thread races
    // with its loop's removal of the socket from the set (an MHD_PANIC).
    unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC;
    if (const std::optional<TlsMaterial>& tls = options_.tls) {
      flags |= MHD_USE_TLS;
      items.push_back({MHD_OPTION_HTTPS_MEM_CERT, 0, const_cast<char*>(tls->cert_pem.c_str())});
      items.push_back({MHD_OPTION_HTTPS_MEM_KEY, 0, const_cast<char*>(tls->key_pem.c_str())});
      items.push_back({MHD_OPTION_HTTPS_PRIORITIES, 0, const_cast<char*>(tls->priorities.c_str())});
      if (VerifiesClients()) {
        items.push_back({MHD_OPTION_HTTPS_MEM_TRUST, 0, const_cast<char*>(tls->client_ca_pem.c_str())});
        items.push_back({MHD_OPTION_NOTIFY_CONNECTION, reinterpret_cast<intptr_t>(&MhdDaemon::Started), this});
      }
    }
    items.push_back({MHD_OPTION_END, 0, nullptr});
    daemon_ = mhd_.start_daemon(flags, 0, nullptr, nullptr, &MhdDaemon::Access, this, MHD_OPTION_ARRAY, items.data(),
                                MHD_OPTION_END);
    if (!daemon_)
      return Fail("libmicrohttpd could not start serving" + std::string(options_.tls ? " HTTPS" : "") + " on port " +
                  std::to_string(port));
    return {};
  }

  // No new connections; those open are answered until Stop().
  void Quiesce() {
    if (daemon_) mhd_.quiesce_daemon(daemon_);
  }
  // The connections open now.
  unsigned Connections() const {
    const MHD_DaemonInfo* info = daemon_ ? mhd_.get_daemon_info(daemon_, MHD_DAEMON_INFO_CURRENT_CONNECTIONS) : nullptr;
    return info ? info->num_connections : 0;
  }
  // Its open connections closed, its thread joined; the socket left open.
  void Stop() {
    if (!daemon_) return;
    Quiesce();
    mhd_.stop_daemon(std::exchange(daemon_, nullptr));
  }

 private:
  bool VerifiesClients() const { return options_.tls && !options_.tls->client_ca_pem.empty(); }

  void* GnutlsSession(MHD_Connection* connection) const {
    const MHD_ConnectionInfo* info = mhd_.get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    return info ? info->tls_session : nullptr;
  }

  static void Started(void* self, MHD_Connection* connection, void** /*socket_context*/,
                      MHD_ConnectionNotificationCode code) {
    auto* daemon = static_cast<MhdDaemon*>(self);
    if (code != MHD_CONNECTION_NOTIFY_STARTED) return;
    if (void* session = daemon->GnutlsSession(connection)) daemon->tls_->RequireVerifiedClient(session);
  }

  static MHD_Result Access(void* self, MHD_Connection* connection, const char* url, const char* method,
                           const char* /*version*/, const char* /*upload_data*/, size_t* /*upload_data_size*/,
                           void** /*request*/) {
    auto* daemon = static_cast<MhdDaemon*>(self);
    const Mhd& mhd = daemon->mhd_;
    if (daemon->VerifiesClients() && !daemon->tls_->ClientVerified(daemon->GnutlsSession(connection))) return MHD_NO;
    const char* authorization = mhd.lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    HttpAnswer answer = daemon->handler_({method, url, authorization ? authorization : ""});
    MHD_Response* response =
        mhd.create_response_from_buffer(answer.body.size(), answer.body.data(), MHD_RESPMEM_MUST_COPY);
    if (!response) return MHD_NO;
    mhd.add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, answer.content_type.c_str());
    if (!answer.allow.empty()) mhd.add_response_header(response, MHD_HTTP_HEADER_ALLOW, answer.allow.c_str());
    if (!answer.www_authenticate.empty())
      mhd.add_response_header(response, MHD_HTTP_HEADER_WWW_AUTHENTICATE, answer.www_authenticate.c_str());
    for (const auto& [name, value] : daemon->options_.headers)
      mhd.add_response_header(response, name.c_str(), value.c_str());
    MHD_Result queued = mhd.queue_response(connection, answer.status, response);
    mhd.destroy_response(response);
    return queued;
  }

  const Mhd& mhd_;
  const HttpServer::Handler& handler_;
  HttpOptions options_;
  std::optional<TlsSession> tls_;
  MHD_Daemon* daemon_ = nullptr;
};

// TLS material checked (certificate against key, the client authority)
// before a daemon is given it.
Result<std::optional<TlsSession>> LoadTls(const HttpOptions& options) {
  if (!options.tls) return std::optional<TlsSession>();
  TlsSession tls = KP_TRY(TlsSession::Load());
  KP_TRY_VOID(tls.Check(*options.tls));
  return std::optional<TlsSession>(std::move(tls));
}

class MhdServer final : public HttpServer {
 public:
  MhdServer(Mhd mhd, Handler handler, int fd, uint16_t port)
      : mhd_(std::move(mhd)), handler_(std::move(handler)), fd_(fd), port_(port) {}
  ~MhdServer() override {
    retired_.clear();
    daemon_.reset();
    close(fd_);
  }
  MhdServer(const MhdServer&) = delete;
  MhdServer& operator=(const MhdServer&) = delete;
  uint16_t port() const override { return port_; }

  Result<void> Start(HttpOptions options) {
    auto tls = KP_TRY(LoadTls(options));
    auto daemon = std::make_unique<MhdDaemon>(mhd_, handler_, options, std::move(tls));
    KP_TRY_VOID(daemon->Run(fd_, port_));
    daemon_ = std::move(daemon);
    options_ = std::move(options);
    return {};
  }

  // The next daemon starts on the socket beside the one before (both
  // accepting for a moment is harmless), then the one before stops
  // accepting and answers what it was asked until Sweep(). Should the next
  // fail to start, the one before goes on as it was.
  Result<void> Reconfigure(HttpOptions options) override {
    auto tls = KP_TRY(LoadTls(options));
    auto next = std::make_unique<MhdDaemon>(mhd_, handler_, options, std::move(tls));
    KP_TRY_VOID(next->Run(fd_, port_));
    std::unique_ptr<MhdDaemon> before = std::exchange(daemon_, std::move(next));
    before->Quiesce();
    options_ = std::move(options);
    retired_.emplace_back(std::move(before), std::chrono::steady_clock::now() + kRetireGrace);
    return {};
  }

  void Sweep() override {
    auto now = std::chrono::steady_clock::now();
    std::erase_if(retired_, [&](auto& retired) {
      if (now < retired.second && retired.first->Connections() > 0) return false;
      retired.first->Stop();
      return true;
    });
  }

 private:
  Mhd mhd_;
  Handler handler_;
  int fd_ = -1;
  uint16_t port_ = 0;
  HttpOptions options_;
  std::unique_ptr<MhdDaemon> daemon_;
  // Daemons replaced, answering what they were asked until their time.
  std::vector<std::pair<std::unique_ptr<MhdDaemon>, std::chrono::steady_clock::time_point>> retired_;
};

// The listening socket, bound and listening, and the port it got.
Result<std::pair<int, uint16_t>> Listen(const std::string& address, uint16_t port) {
  sockaddr_storage storage{};
  socklen_t length = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
  if (inet_pton(AF_INET, address.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    length = sizeof(*v4);
  } else if (inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    length = sizeof(*v6);
  } else {
    return Fail("cannot listen on '" + address + "': not an IPv4 or IPv6 address", "e.g. 127.0.0.1 or ::1");
  }
  std::string where = (storage.ss_family == AF_INET6 ? "[" + address + "]" : address) + ":" + std::to_string(port);
  int fd = socket(storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Fail("cannot listen on " + where + ": " + std::strerror(errno));
  int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  if (bind(fd, reinterpret_cast<sockaddr*>(&storage), length) != 0 || listen(fd, 64) != 0) {
    int error = errno;
    close(fd);
    return Fail("cannot listen on " + where + ": " + std::strerror(error),
                error == EADDRINUSE ? "another process listens there (ss -ltnp says which); choose another port "
                                      "with 'listen ADDRESS:PORT' in the configuration or --listen"
                                    : "");
  }
  getsockname(fd, reinterpret_cast<sockaddr*>(&storage), &length);
  uint16_t bound = ntohs(storage.ss_family == AF_INET6 ? v6->sin6_port : v4->sin_port);
  return std::pair{fd, bound};
}

}  // namespace

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& address, uint16_t port, Handler handler,
                                                      HttpOptions options) {
  Mhd mhd = KP_TRY(LoadMhd());
  KP_TRY(LoadTls(options));  // bad material is an error before the port is bound
  auto [fd, bound] = KP_TRY(Listen(address, port));
  auto server = std::make_unique<MhdServer>(std::move(mhd), std::move(handler), fd, bound);
  KP_TRY_VOID(server->Start(std::move(options)));
  return std::unique_ptr<HttpServer>(std::move(server));
}

size_t MaxMetricsBytes() { return kMaxBody; }

}  // namespace kprobectl
