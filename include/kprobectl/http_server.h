// SPDX-License-Identifier: GPL-2.0-or-later
//
// The HTTP side of kprobectl serve, through libmicrohttpd (which stays in
// http_server.cc): the socket bound at once, so that a port in use is an
// error before anything else happens; requests answered from the
// library's own thread, many connections at once, each bounded in time
// and memory, so that a slow or broken client holds up no other.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "kprobectl/result.h"
#include "kprobectl/serve.h"

namespace kprobectl {

class HttpServer {
 public:
  using Handler = std::function<HttpAnswer(std::string_view method, std::string_view url)>;
  // `address` an IPv4 or IPv6 address; port 0 picks a free one.
  static Result<std::unique_ptr<HttpServer>> Start(const std::string& address, uint16_t port, Handler handler);
  virtual ~HttpServer() = default;
  virtual uint16_t port() const = 0;
};

// The largest exposition served (16 MB): past it, an error that says so.
size_t MaxMetricsBytes();

}  // namespace kprobectl
