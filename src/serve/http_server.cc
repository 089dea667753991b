// SPDX-License-Identifier: GPL-2.0-or-later
//
// libmicrohttpd, wrapped. Its internal thread polls every connection
// (epoll where there is one), so one that sends its request a byte a
// minute waits alone until the timeout closes it; the number of
// connections, and the memory each may take (the request line and headers
// of a GET must fit), are bounded. Requests are answered on their first
// call, before any body is read: a GET has none, and other methods are
// refused. The library is loaded when serve starts (SharedLibrary says
// why) and called through the pointers it gives.
#include "kprobectl/http_server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kprobectl/shared_library.h"

namespace kprobectl {

namespace {

constexpr unsigned kTimeoutSeconds = 10;
constexpr unsigned kMaxConnections = 64;
constexpr size_t kConnectionMemory = size_t{32} * 1024;
constexpr size_t kMaxBody = size_t{16} * 1024 * 1024;

struct Mhd {
  SharedLibrary library;
  decltype(&MHD_start_daemon) start_daemon;
  decltype(&MHD_stop_daemon) stop_daemon;
  decltype(&MHD_create_response_from_buffer) create_response_from_buffer;
  decltype(&MHD_add_response_header) add_response_header;
  decltype(&MHD_queue_response) queue_response;
  decltype(&MHD_destroy_response) destroy_response;
};

Result<Mhd> LoadMhd() {
  SharedLibrary library =
      KP_TRY(SharedLibrary::Open(KPROBECTL_MICROHTTPD_SONAME, "serve", KPROBECTL_MICROHTTPD_PACKAGE));
  return Mhd{library,
             KP_TRY(library.Function<decltype(MHD_start_daemon)>("MHD_start_daemon")),
             KP_TRY(library.Function<decltype(MHD_stop_daemon)>("MHD_stop_daemon")),
             KP_TRY(library.Function<decltype(MHD_create_response_from_buffer)>("MHD_create_response_from_buffer")),
             KP_TRY(library.Function<decltype(MHD_add_response_header)>("MHD_add_response_header")),
             KP_TRY(library.Function<decltype(MHD_queue_response)>("MHD_queue_response")),
             KP_TRY(library.Function<decltype(MHD_destroy_response)>("MHD_destroy_response"))};
}

class MhdServer final : public HttpServer {
 public:
  MhdServer(Mhd mhd, Handler handler, int fd, uint16_t port)
      : mhd_(std::move(mhd)), handler_(std::move(handler)), fd_(fd), port_(port) {}
  ~MhdServer() override {
    if (daemon_) mhd_.stop_daemon(daemon_);
    if (fd_ >= 0) close(fd_);
  }
  MhdServer(const MhdServer&) = delete;
  MhdServer& operator=(const MhdServer&) = delete;
  uint16_t port() const override { return port_; }

  Result<void> Run() {
    daemon_ = mhd_.start_daemon(MHD_USE_AUTO_INTERNAL_THREAD, 0, nullptr, nullptr, &MhdServer::Access, this,
                                MHD_OPTION_LISTEN_SOCKET, fd_, MHD_OPTION_CONNECTION_TIMEOUT, kTimeoutSeconds,
                                MHD_OPTION_CONNECTION_LIMIT, kMaxConnections, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                                kConnectionMemory, MHD_OPTION_END);
    if (!daemon_) return Fail("libmicrohttpd could not start serving on port " + std::to_string(port_));
    return {};
  }

 private:
  static MHD_Result Access(void* self, MHD_Connection* connection, const char* url, const char* method,
                           const char* /*version*/, const char* /*upload_data*/, size_t* /*upload_data_size*/,
                           void** /*request*/) {
    auto* server = static_cast<MhdServer*>(self);
    const Mhd& mhd = server->mhd_;
    HttpAnswer answer = server->handler_(method, url);
    MHD_Response* response =
        mhd.create_response_from_buffer(answer.body.size(), answer.body.data(), MHD_RESPMEM_MUST_COPY);
    if (!response) return MHD_NO;
    mhd.add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, answer.content_type.c_str());
    if (!answer.allow.empty()) mhd.add_response_header(response, MHD_HTTP_HEADER_ALLOW, answer.allow.c_str());
    MHD_Result queued = mhd.queue_response(connection, answer.status, response);
    mhd.destroy_response(response);
    return queued;
  }

  Mhd mhd_;
  Handler handler_;
  int fd_ = -1;
  uint16_t port_ = 0;
  MHD_Daemon* daemon_ = nullptr;
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

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& address, uint16_t port, Handler handler) {
  Mhd mhd = KP_TRY(LoadMhd());
  auto [fd, bound] = KP_TRY(Listen(address, port));
  auto server = std::make_unique<MhdServer>(
      std::move(mhd),
      [handler = std::move(handler)](std::string_view method, std::string_view url) { return handler(method, url); },
      fd, bound);
  KP_TRY_VOID(server->Run());
  return std::unique_ptr<HttpServer>(std::move(server));
}

size_t MaxMetricsBytes() { return kMaxBody; }

}  // namespace kprobectl
