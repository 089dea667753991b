// SPDX-License-Identifier: GPL-2.0-or-later
//
// The exporter-toolkit's web configuration (its docs/web-configuration.md),
// read as node_exporter reads it where kprobectl implements a setting, and
// refused with FILE:LINE where it does not or where the setting would be
// unsafe: client_auth_type other than NoClientCert and
// RequireAndVerifyClientCert (the toolkit's own documentation calls the
// others insecure), TLS before 1.2, inline certificates and keys,
// client_allowed_sans, curve_preferences and rate_limit (not implemented:
// accepting them would promise what is not done).
#include "kprobectl/web_config.h"

#include <algorithm>
#include <array>
#include <cstdint>

#include "kprobectl/yaml_subset.h"

namespace kprobectl {

namespace {

std::string Where(const std::string& path, const YamlNode& node) {
  return path + ":" + std::to_string(node.line) + ": ";
}

Result<std::string> Scalar(const YamlNode& node, const std::string& key, const std::string& path) {
  if (node.kind == YamlNode::kNull) return std::string();
  if (node.kind != YamlNode::kScalar) return Fail(Where(path, node) + key + " takes one value");
  return node.scalar;
}

Result<bool> Boolean(const YamlNode& node, const std::string& key, const std::string& path) {
  std::string value = KP_TRY(Scalar(node, key, path));
  if (value == "true") return true;
  if (value == "false") return false;
  return Fail(Where(path, node) + key + " is true or false, not '" + value + "'");
}

Result<void> NeedMap(const YamlNode& node, const std::string& key, const std::string& path) {
  if (node.kind == YamlNode::kMap || node.kind == YamlNode::kNull) return {};
  return Fail(Where(path, node) + key + " holds KEY: VALUE lines");
}

std::string Resolve(const std::string& file, const std::string& path) {
  if (file.empty() || file.starts_with('/')) return file;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? file : path.substr(0, slash + 1) + file;
}

// Go's name of a TLS 1.2 cipher suite, and GnuTLS's names of its parts.
struct Suite {
  std::string_view go, kx, cipher, mac;
};
constexpr std::array<Suite, 14> kSuites{{
    {"TLS_RSA_WITH_AES_128_CBC_SHA", "RSA", "AES-128-CBC", "SHA1"},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", "RSA", "AES-256-CBC", "SHA1"},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", "RSA", "AES-128-GCM", "AEAD"},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", "RSA", "AES-256-GCM", "AEAD"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA", "AES-128-CBC", "SHA1"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA", "AES-256-CBC", "SHA1"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA", "AES-128-CBC", "SHA1"},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA", "AES-256-CBC", "SHA1"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA", "AES-128-GCM", "AEAD"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA", "AES-256-GCM", "AEAD"},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA", "AES-128-GCM", "AEAD"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA", "AES-256-GCM", "AEAD"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA", "CHACHA20-POLY1305", "AEAD"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA", "CHACHA20-POLY1305", "AEAD"},
}};

const Suite* FindSuite(std::string_view go) {
  auto it = std::find_if(kSuites.begin(), kSuites.end(), [&](const Suite& s) { return s.go == go; });
  return it == kSuites.end() ? nullptr : &*it;
}
const Suite* FindSuite(std::string_view kx, std::string_view cipher) {
  auto it =
      std::find_if(kSuites.begin(), kSuites.end(), [&](const Suite& s) { return s.kx == kx && s.cipher == cipher; });
  return it == kSuites.end() ? nullptr : &*it;
}

Result<std::string> Version(const YamlNode& node, const std::string& key, const std::string& path) {
  std::string value = KP_TRY(Scalar(node, key, path));
  if (value == "TLS12" || value == "TLS13") return value;
  if (value == "TLS10" || value == "TLS11")
    return Fail(Where(path, node) + key + " " + value + ": TLS before 1.2 is refused as unsafe", "TLS12 or TLS13");
  return Fail(Where(path, node) + key + " '" + value + "' is not a TLS version", "TLS12 or TLS13");
}

Result<void> ParseSuites(const YamlNode& node, const std::string& path, WebTls& tls) {
  if (node.kind != YamlNode::kList) return Fail(Where(path, node) + "cipher_suites is a list");
  for (const YamlNode& item : node.list) {
    if (item.scalar.starts_with("TLS_AES_") || item.scalar.starts_with("TLS_CHACHA20_"))
      return Fail(Where(path, item) + "cipher_suites: " + item.scalar + " is a TLS 1.3 suite, which is not chosen",
                  "list TLS 1.2 suites only, as Go's crypto/tls reads them");
    if (!FindSuite(item.scalar))
      return Fail(Where(path, item) + "cipher_suites: '" + item.scalar + "' is not a suite kprobectl serves",
                  "one of Go's tls.CipherSuites(), e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256");
    tls.cipher_suites.push_back(item.scalar);
  }
  return {};
}

Result<WebTls> ParseTls(const YamlNode& node, const std::string& path) {
  KP_TRY_VOID(NeedMap(node, "tls_server_config", path));
  WebTls tls;
  std::string client_auth = "NoClientCert";
  const YamlNode* client_auth_node = nullptr;
  const YamlNode* ca_node = nullptr;
  for (const auto& [key, value] : node.map) {
    std::string at = Where(path, value);
    if (key == "cert_file") {
      tls.cert_file = Resolve(KP_TRY(Scalar(value, key, path)), path);
    } else if (key == "key_file") {
      tls.key_file = Resolve(KP_TRY(Scalar(value, key, path)), path);
    } else if (key == "client_ca_file") {
      tls.client_ca_file = Resolve(KP_TRY(Scalar(value, key, path)), path);
      ca_node = &value;
    } else if (key == "client_auth_type") {
      client_auth = KP_TRY(Scalar(value, key, path));
      client_auth_node = &value;
    } else if (key == "min_version") {
      tls.min_version = KP_TRY(Version(value, key, path));
    } else if (key == "max_version") {
      tls.max_version = KP_TRY(Version(value, key, path));
    } else if (key == "cipher_suites") {
      KP_TRY_VOID(ParseSuites(value, path, tls));
    } else if (key == "prefer_server_cipher_suites") {
      tls.prefer_server_cipher_suites = KP_TRY(Boolean(value, key, path));
    } else if (key == "cert" || key == "key" || key == "client_ca") {
      return Fail(at + "tls_server_config: an inline " + key + " is not read", "name a file with " + key + "_file");
    } else if (key == "client_allowed_sans" || key == "curve_preferences") {
      return Fail(at + "tls_server_config: " + key + " is not implemented by kprobectl serve",
                  "remove it; kprobectl refuses what it would not do");
    } else {
      return Fail(at + "tls_server_config: unknown setting '" + key + "'",
                  "cert_file, key_file, client_auth_type, client_ca_file, min_version, max_version, cipher_suites, "
                  "prefer_server_cipher_suites");
    }
  }
  if (tls.cert_file.empty() || tls.key_file.empty())
    return Fail(Where(path, node) + "tls_server_config needs cert_file and key_file");
  if (client_auth == "RequireAndVerifyClientCert") {
    tls.verify_clients = true;
    if (tls.client_ca_file.empty())
      return Fail(Where(path, *client_auth_node) + "RequireAndVerifyClientCert needs client_ca_file",
                  "the certificate of the authority that signs the clients' certificates");
  } else if (client_auth == "RequestClientCert" || client_auth == "RequireAnyClientCert" ||
             client_auth == "VerifyClientCertIfGiven") {
    return Fail(Where(path, *client_auth_node) + "client_auth_type " + client_auth +
                    " is refused as unsafe: a client without a verified certificate would be let in",
                "RequireAndVerifyClientCert, or NoClientCert with basic_auth_users");
  } else if (client_auth != "NoClientCert") {
    return Fail(Where(path, *client_auth_node) + "client_auth_type '" + client_auth + "' is not one",
                "NoClientCert or RequireAndVerifyClientCert");
  } else if (ca_node) {
    return Fail(Where(path, *ca_node) +
                    "client_ca_file without client_auth_type: RequireAndVerifyClientCert "
                    "verifies nothing",
                "add client_auth_type: RequireAndVerifyClientCert");
  }
  if (tls.min_version > tls.max_version)
    return Fail(Where(path, node) + "min_version " + tls.min_version + " is above max_version " + tls.max_version);
  return tls;
}

constexpr std::array<std::string_view, 5> kHeaders{"Content-Security-Policy", "X-Frame-Options",
                                                   "X-Content-Type-Options", "X-XSS-Protection",
                                                   "Strict-Transport-Security"};

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return text;
}

Result<void> ParseHttp(const YamlNode& node, const std::string& path, WebConfig& web) {
  KP_TRY_VOID(NeedMap(node, "http_server_config", path));
  for (const auto& [key, value] : node.map) {
    if (key == "http2") {
      KP_TRY_VOID(Boolean(value, key, path));  // kprobectl serves HTTP/1.1, which Prometheus speaks either way
      continue;
    }
    if (key != "headers")
      return Fail(Where(path, value) + "http_server_config: unknown setting '" + key + "'", "http2 and headers");
    KP_TRY_VOID(NeedMap(value, key, path));
    for (const auto& [name, header] : value.map) {
      if (std::find(kHeaders.begin(), kHeaders.end(), name) == kHeaders.end())
        return Fail(Where(path, header) + "headers: '" + name + "' is not one the exporter-toolkit sets",
                    "Content-Security-Policy, X-Frame-Options, X-Content-Type-Options, X-XSS-Protection, "
                    "Strict-Transport-Security");
      std::string text = KP_TRY(Scalar(header, name, path));
      if (std::any_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }))
        return Fail(Where(path, header) + "headers: " + name + " holds a control character");
      if (name == "X-Frame-Options" && !text.empty() && Lower(text) != "deny" && Lower(text) != "sameorigin")
        return Fail(Where(path, header) + "X-Frame-Options is deny or sameorigin, not '" + text + "'");
      if (name == "X-Content-Type-Options" && !text.empty() && Lower(text) != "nosniff")
        return Fail(Where(path, header) + "X-Content-Type-Options is nosniff, not '" + text + "'");
      if (!text.empty()) web.headers.emplace_back(name, text);
    }
  }
  return {};
}

bool IsBcrypt(std::string_view hash) {
  static constexpr std::string_view kAlphabet = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  if (hash.size() != 60 || !(hash.starts_with("$2y$") || hash.starts_with("$2b$") || hash.starts_with("$2a$")))
    return false;
  if (hash[6] != '$' || hash[4] < '0' || hash[4] > '3' || hash[5] < '0' || hash[5] > '9') return false;
  return hash.substr(7).find_first_not_of(kAlphabet) == std::string_view::npos;
}

Result<void> ParseUsers(const YamlNode& node, const std::string& path, WebConfig& web) {
  KP_TRY_VOID(NeedMap(node, "basic_auth_users", path));
  for (const auto& [name, value] : node.map) {
    std::string hash = KP_TRY(Scalar(value, name, path));
    if (name.find(':') != std::string::npos)
      return Fail(Where(path, value) + "basic_auth_users: a user name cannot hold ':'");
    if (!IsBcrypt(hash))
      return Fail(Where(path, value) + "basic_auth_users: " + name + "'s password is not a bcrypt hash",
                  "make one with: htpasswd -nBC 10 \"\" | tr -d ':\\n'");
    web.users.push_back({name, hash});
  }
  return {};
}

// RFC 4648 base64 with padding, as HTTP's basic authentication sends it.
bool DecodeBase64(std::string_view text, std::string& out) {
  static constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (text.size() % 4 != 0) return false;
  uint32_t bits = 0;
  int count = 0;
  size_t padding = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '=') {
      if (i + 2 < text.size()) return false;
      ++padding;
      continue;
    }
    size_t value = kAlphabet.find(c);
    if (value == std::string_view::npos || padding) return false;
    bits = (bits << 6) | static_cast<uint32_t>(value);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += static_cast<char>((bits >> count) & 0xff);
    }
  }
  return true;
}

}  // namespace

Result<WebConfig> ParseWebConfig(std::string_view text, const std::string& path) {
  YamlNode root = KP_TRY(ParseYamlSubset(text, path));
  WebConfig web;
  web.path = path;
  if (root.kind == YamlNode::kNull) return web;
  if (root.kind != YamlNode::kMap) return Fail(Where(path, root) + "a web configuration holds KEY: VALUE lines");
  for (const auto& [key, value] : root.map) {
    if (key == "tls_server_config") {
      if (value.kind != YamlNode::kNull) web.tls = KP_TRY(ParseTls(value, path));
    } else if (key == "http_server_config") {
      KP_TRY_VOID(ParseHttp(value, path, web));
    } else if (key == "basic_auth_users") {
      KP_TRY_VOID(ParseUsers(value, path, web));
    } else if (key == "rate_limit") {
      return Fail(Where(path, value) + "rate_limit is not implemented by kprobectl serve",
                  "remove it; kprobectl refuses what it would not do");
    } else {
      return Fail(Where(path, value) + "unknown setting '" + key + "'",
                  "tls_server_config, http_server_config and basic_auth_users");
    }
  }
  return web;
}

Result<std::string> TlsPriorities(const WebTls& tls, const std::string& path) {
  std::string out = "NORMAL:-VERS-ALL";
  if (tls.min_version <= "TLS12" && tls.max_version >= "TLS12") out += ":+VERS-TLS1.2";
  if (tls.max_version == "TLS13") out += ":+VERS-TLS1.3";
  if (!tls.cipher_suites.empty()) {
    // GnuTLS enables key exchanges, ciphers and MACs apart, so a list is
    // served exactly only when it holds every pairing of its parts.
    std::vector<std::string_view> kxs, ciphers, macs;
    auto add = [](std::vector<std::string_view>& to, std::string_view what) {
      if (std::find(to.begin(), to.end(), what) == to.end()) to.push_back(what);
    };
    for (const std::string& name : tls.cipher_suites) {
      const Suite* suite = FindSuite(name);
      if (!suite) return Fail(path + ": cipher_suites: '" + name + "' is not a suite kprobectl serves");
      add(kxs, suite->kx);
      add(ciphers, suite->cipher);
      add(macs, suite->mac);
    }
    for (std::string_view kx : kxs)
      for (std::string_view cipher : ciphers)
        if (const Suite* also = FindSuite(kx, cipher);
            also && std::find(tls.cipher_suites.begin(), tls.cipher_suites.end(), also->go) == tls.cipher_suites.end())
          return Fail(path + ": cipher_suites: GnuTLS would also allow " + std::string(also->go) +
                          ", as it pairs every listed key exchange with every listed cipher",
                      "add it to the list, or list suites that share a key exchange or a cipher");
    if (tls.max_version == "TLS13" && std::find(macs.begin(), macs.end(), "AEAD") == macs.end())
      return Fail(path + ": cipher_suites: TLS 1.3 needs a GCM or ChaCha20 cipher, and none is listed",
                  "add one, or set max_version: TLS12");
    out += ":-KX-ALL:-CIPHER-ALL:-MAC-ALL";
    for (std::string_view kx : kxs) out += ":+" + std::string(kx);
    for (std::string_view cipher : ciphers) out += ":+" + std::string(cipher);
    for (std::string_view mac : macs) out += ":+" + std::string(mac);
  }
  if (tls.prefer_server_cipher_suites) out += ":%SERVER_PRECEDENCE";
  return out;
}

Result<std::string> CheckExposure(const std::string& address, const WebConfig* web, bool insecure) {
  bool loopback = address.starts_with("127.") || address == "::1";
  if (loopback) return std::string();
  bool tls = web && web->tls;
  bool authenticated = web && (!web->users.empty() || (web->tls && web->tls->verify_clients));
  if (tls && authenticated) return std::string();
  std::string missing = !tls && !authenticated ? "neither TLS nor authentication"
                        : !tls                 ? "no TLS (passwords would cross the network in the clear)"
                                               : "no authentication (anyone who reaches it reads the metrics)";
  if (!insecure)
    return Fail("serve would listen on " + address + ", beyond this machine, with " + missing,
                "configure them in a web configuration (web-config FILE, --web.config.file FILE: "
                "tls_server_config and basic_auth_users or client certificates), listen on 127.0.0.1, or "
                "accept the risk with --insecure");
  return "kprobectl: warning: serving " + address + " with " + missing + " (--insecure)";
}

std::optional<HttpAnswer> CheckBasicAuth(std::string_view authorization, const std::vector<WebUser>& users,
                                         const PasswordMatches& matches) {
  if (users.empty()) return std::nullopt;
  HttpAnswer denied;
  denied.status = 401;
  denied.www_authenticate = "Basic realm=\"kprobectl\", charset=\"UTF-8\"";
  denied.body = "kprobectl serve: authentication required\n";
  std::string credentials;
  if (!authorization.starts_with("Basic ") || !DecodeBase64(authorization.substr(6), credentials)) return denied;
  size_t colon = credentials.find(':');
  if (colon == std::string::npos) return denied;
  std::string name = credentials.substr(0, colon);
  std::string password = credentials.substr(colon + 1);
  // A hash of the same cost as htpasswd -nBC 10's, for a user that is not
  // there: the comparison takes as long as for one who is.
  static const std::string kNoUser = "$2b$10$2Ow76Uw12HY/l1oBwun6XO2gy9g/ZD/bCknUULK4wNtqtQQ8ZC95u";
  auto user = std::find_if(users.begin(), users.end(), [&](const WebUser& u) { return u.name == name; });
  bool matched = matches(password, user == users.end() ? kNoUser : user->hash);
  if (user == users.end() || !matched) return denied;
  return std::nullopt;
}

}  // namespace kprobectl
