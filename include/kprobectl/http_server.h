// SPDX-License-Identifier: GPL-2.0-or-later
//
// The HTTP side of kprobectl serve, through libmicrohttpd (which stays in
// http_server.cc): the socket bound at once, so that a port in use is an
// error before anything else happens; requests answered from the
// library's own thread, many connections at once, each bounded in time
// and memory, so that a slow or broken client holds up no other. With
// TLS material, HTTPS only (plain HTTP to the port fails in the handshake);
// with a client authority, a client certificate it signed is required in
// the handshake and checked again before each answer.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kprobectl/result.h"
#include "kprobectl/serve.h"
#include "kprobectl/tls_session.h"

namespace kprobectl {

struct HttpRequest {
  std::string_view method, url;
  std::string_view authorization;  // the Authorization header, or empty
};

struct HttpOptions {
  std::optional<TlsMaterial> tls;                            // HTTPS when set
  std::vector<std::pair<std::string, std::string>> headers;  // added to every answer
};

class HttpServer {
 public:
  using Handler = std::function<HttpAnswer(const HttpRequest& request)>;
  // `address` an IPv4 or IPv6 address; port 0 picks a free one.
  static Result<std::unique_ptr<HttpServer>> Start(const std::string& address, uint16_t port, Handler handler,
                                                   HttpOptions options = {});
  virtual ~HttpServer() = default;
  virtual uint16_t port() const = 0;
  // New TLS material and headers for the connections from now on, on the
  // same socket; an error (bad material) keeps the options before.
  virtual Result<void> Reconfigure(HttpOptions options) = 0;
};

// The largest exposition served (16 MB): past it, an error that says so.
size_t MaxMetricsBytes();

}  // namespace kprobectl
