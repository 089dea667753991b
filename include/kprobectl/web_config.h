// SPDX-License-Identifier: GPL-2.0-or-later
//
// The web configuration of kprobectl serve, in the format of the Prometheus
// exporter-toolkit (node_exporter's --web.config.file): TLS, client
// certificates, basic authentication with bcrypt hashes, response headers.
// In: the file's text and name. Out: plain settings, every file path
// resolved against the file's directory, or an error naming FILE:LINE for
// a setting that is unknown, that kprobectl does not implement, or that
// would be unsafe. Also here, pure: the GnuTLS priority string for the TLS
// settings, the check that a non-loopback address is not served in the
// clear, and the basic-authentication decision for one request (the
// bcrypt comparison handed in: libcrypt stays in password_check.cc).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kprobectl/result.h"
#include "kprobectl/serve.h"

namespace kprobectl {

struct WebTls {
  std::string cert_file, key_file;
  std::string client_ca_file;   // set exactly when clients must show a certificate it signed
  bool verify_clients = false;  // client_auth_type: RequireAndVerifyClientCert
  std::string min_version = "TLS12", max_version = "TLS13";
  std::vector<std::string> cipher_suites;  // Go's names; empty: GnuTLS's defaults
  bool prefer_server_cipher_suites = true;
};

struct WebUser {
  std::string name;
  std::string hash;  // bcrypt: $2y$, $2b$ or $2a$
};

struct WebConfig {
  std::string path;
  std::optional<WebTls> tls;
  std::vector<std::pair<std::string, std::string>> headers;  // added to every answer
  std::vector<WebUser> users;                                // empty: no basic authentication
};

Result<WebConfig> ParseWebConfig(std::string_view text, const std::string& path);

// The GnuTLS priority string for `tls`'s versions and cipher suites.
Result<std::string> TlsPriorities(const WebTls& tls, const std::string& path);

// Serving `address` (an IP literal) with `web` (null: none): an error
// unless it is a loopback address, or TLS and an authentication (users or
// client certificates) are configured, or `insecure`. Out: a warning to
// print (empty when there is nothing to say).
Result<std::string> CheckExposure(const std::string& address, const WebConfig* web, bool insecure);

// One request's Authorization header against `users`: nullopt lets it
// through; otherwise the 401 answer (with WWW-Authenticate). `matches`
// compares a password with a bcrypt hash; it runs once per request that
// has credentials, for an unknown user too, so that the time taken does
// not tell which users exist.
using PasswordMatches = std::function<bool(const std::string& password, const std::string& hash)>;
std::optional<HttpAnswer> CheckBasicAuth(std::string_view authorization, const std::vector<WebUser>& users,
                                         const PasswordMatches& matches);

}  // namespace kprobectl
