// SPDX-License-Identifier: GPL-2.0-or-later
//
// serve's web configuration (the exporter-toolkit's format): a whole file
// read into exact settings; each refused setting with its FILE:LINE and
// hint; the GnuTLS priority strings; which addresses need TLS and
// authentication; and basic authentication against real bcrypt hashes
// (htpasswd -nbBC 10 "" secret, -nbBC 4 "" other) through libxcrypt.
#include "kprobectl/web_config.h"

#include <catch2/catch.hpp>

#include "kprobectl/password_check.h"

using namespace kprobectl;

namespace {

const std::string kSecret = "$2y$10$PCWUmGofHBuFnQdeFUEdtOyvcy.uKco3CfZa71EuwpJlnkkNUQGxC";
const std::string kOther = "$2y$04$IHU9VSZjfLQVwugnUm83YultqYezWQJzgP.lZn7IhF8o.etiTNi2m";

std::string WebError(const std::string& text) {
  auto parsed = ParseWebConfig(text, "/etc/k/web.yml");
  REQUIRE(!parsed);
  return parsed.error().message + (parsed.error().hint.empty() ? "" : " | " + parsed.error().hint);
}

std::string Describe(const WebConfig& web) {
  std::string out = "path=" + web.path + "\n";
  if (web.tls) {
    const WebTls& t = *web.tls;
    out += "tls cert=" + t.cert_file + " key=" + t.key_file + " ca=" + t.client_ca_file +
           " verify=" + (t.verify_clients ? "yes" : "no") + " " + t.min_version + "-" + t.max_version +
           " prefer=" + (t.prefer_server_cipher_suites ? "yes" : "no") + "\n";
    for (const std::string& s : t.cipher_suites) out += "suite " + s + "\n";
  }
  for (const auto& [name, value] : web.headers) out += "header " + name + ": " + value + "\n";
  for (const WebUser& u : web.users) out += "user " + u.name + " " + u.hash + "\n";
  return out;
}

}  // namespace

TEST_CASE("web config: a whole file, paths beside it") {
  std::string text =
      "# node_exporter's, as its documentation writes it\n"
      "tls_server_config:\n"
      "  cert_file: server.crt\n"
      "  key_file: /keys/server.key   # absolute stays\n"
      "  client_auth_type: \"RequireAndVerifyClientCert\"\n"
      "  client_ca_file: 'ca.crt'\n"
      "  min_version: TLS13\n"
      "  prefer_server_cipher_suites: false\n"
      "http_server_config:\n"
      "  http2: false\n"
      "  headers:\n"
      "    X-Frame-Options: deny\n"
      "    Strict-Transport-Security: max-age=31536000\n"
      "    X-XSS-Protection: ''\n"
      "basic_auth_users:\n"
      "  alice: " +
      kSecret +
      "\n"
      "  'bob': " +
      kOther + "\n";
  auto web = ParseWebConfig(text, "/etc/k/web.yml");
  REQUIRE(web);
  CHECK(Describe(*web) ==
        "path=/etc/k/web.yml\n"
        "tls cert=/etc/k/server.crt key=/keys/server.key ca=/etc/k/ca.crt verify=yes TLS13-TLS13 prefer=no\n"
        "header X-Frame-Options: deny\n"
        "header Strict-Transport-Security: max-age=31536000\n"
        "user alice " +
            kSecret +
            "\n"
            "user bob " +
            kOther + "\n");
  auto suites = ParseWebConfig(
      "tls_server_config:\n  cert_file: c\n  key_file: k\n  max_version: TLS12\n  cipher_suites:\n"
      "  - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\n  - TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384\n",
      "web.yml");
  REQUIRE(suites);
  CHECK(Describe(*suites) ==
        "path=web.yml\n"
        "tls cert=c key=k ca= verify=no TLS12-TLS12 prefer=yes\n"
        "suite TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\n"
        "suite TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384\n");
  auto empty = ParseWebConfig("# nothing yet\n\n", "web.yml");
  REQUIRE(empty);
  CHECK(Describe(*empty) == "path=web.yml\n");
}

TEST_CASE("web config: unknown, unimplemented and unsafe settings refused by file and line") {
  std::string tls = "tls_server_config:\n  cert_file: c\n  key_file: k\n";
  struct Case {
    std::string text, error;
  };
  std::vector<Case> cases = {
      {"tls_config:\n  cert_file: c\n",
       "/etc/k/web.yml:1: unknown setting 'tls_config' | tls_server_config, http_server_config and basic_auth_users"},
      {tls + "  client_auth_type: VerifyClientCertIfGiven\n",
       "/etc/k/web.yml:4: client_auth_type VerifyClientCertIfGiven is refused as unsafe: a client without a verified "
       "certificate would be let in | RequireAndVerifyClientCert, or NoClientCert with basic_auth_users"},
      {tls + "  client_auth_type: RequireAndVerifyClientCert\n",
       "/etc/k/web.yml:4: RequireAndVerifyClientCert needs client_ca_file | the certificate of the authority that "
       "signs the clients' certificates"},
      {tls + "  client_ca_file: ca.crt\n",
       "/etc/k/web.yml:4: client_ca_file without client_auth_type: RequireAndVerifyClientCert verifies nothing | add "
       "client_auth_type: RequireAndVerifyClientCert"},
      {tls + "  min_version: TLS11\n",
       "/etc/k/web.yml:4: min_version TLS11: TLS before 1.2 is refused as unsafe | TLS12 or TLS13"},
      {tls + "  min_version: TLS13\n  max_version: TLS12\n",
       "/etc/k/web.yml:1: min_version TLS13 is above max_version TLS12"},
      {tls + "  cipher_suites: [TLS_RSA_WITH_RC4_128_SHA]\n",
       "/etc/k/web.yml:4: cipher_suites: 'TLS_RSA_WITH_RC4_128_SHA' is not a suite kprobectl serves | one of Go's "
       "tls.CipherSuites(), e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"},
      {tls + "  cipher_suites:\n  - TLS_AES_128_GCM_SHA256\n",
       "/etc/k/web.yml:5: cipher_suites: TLS_AES_128_GCM_SHA256 is a TLS 1.3 suite, which is not chosen | list TLS "
       "1.2 suites only, as Go's crypto/tls reads them"},
      {tls + "  client_allowed_sans: [a.example]\n",
       "/etc/k/web.yml:4: tls_server_config: client_allowed_sans is not implemented by kprobectl serve | remove it; "
       "kprobectl refuses what it would not do"},
      {"tls_server_config:\n  cert: abc\n",
       "/etc/k/web.yml:2: tls_server_config: an inline cert is not read | name a file with cert_file"},
      {"tls_server_config:\n  key_file: k\n", "/etc/k/web.yml:1: tls_server_config needs cert_file and key_file"},
      {"rate_limit:\n  interval: 1s\n",
       "/etc/k/web.yml:1: rate_limit is not implemented by kprobectl serve | remove it; kprobectl refuses what it "
       "would not do"},
      {"basic_auth_users:\n  alice: secret\n",
       "/etc/k/web.yml:2: basic_auth_users: alice's password is not a bcrypt hash | make one with: htpasswd -nBC 10 "
       "\"\" | tr -d ':\\n'"},
      {"basic_auth_users:\n  alice: " + kSecret + "\n  alice: " + kOther + "\n",
       "/etc/k/web.yml:3: 'alice' is given twice | keep one"},
      {"http_server_config:\n  headers:\n    X-Powered-By: me\n",
       "/etc/k/web.yml:3: headers: 'X-Powered-By' is not one the exporter-toolkit sets | Content-Security-Policy, "
       "X-Frame-Options, X-Content-Type-Options, X-XSS-Protection, Strict-Transport-Security"},
      {"http_server_config:\n  headers:\n    X-Frame-Options: allow\n",
       "/etc/k/web.yml:3: X-Frame-Options is deny or sameorigin, not 'allow'"},
      {"http_server_config:\n  http2: maybe\n", "/etc/k/web.yml:2: http2 is true or false, not 'maybe'"},
      {"basic_auth_users: &users\n",
       "/etc/k/web.yml:1: '&' starts YAML that kprobectl does not read | a web "
       "configuration needs plain values, quoted values and lists"},
      {"tls_server_config:\n\tcert_file: c\n", "/etc/k/web.yml:2: a tab in the indentation | indent with spaces"},
      {"tls_server_config:\n    cert_file: c\n  key_file: k\n",
       "/etc/k/web.yml:3: this line's indentation matches no key above it"},
      {"basic_auth_users: {alice: x}\n",
       "/etc/k/web.yml:1: '{' starts YAML that kprobectl does not read | a web "
       "configuration needs plain values, quoted values and lists"},
      {"a: 1\n---\nb: 2\n", "/etc/k/web.yml:2: one YAML document only"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    CHECK(WebError(c.text) == c.error);
  }
}

TEST_CASE("web config: GnuTLS priorities, a cipher list served exactly or refused") {
  WebTls tls;
  CHECK(*TlsPriorities(tls, "w") == "NORMAL:-VERS-ALL:+VERS-TLS1.2:+VERS-TLS1.3:%SERVER_PRECEDENCE");
  tls.min_version = "TLS13";
  tls.prefer_server_cipher_suites = false;
  CHECK(*TlsPriorities(tls, "w") == "NORMAL:-VERS-ALL:+VERS-TLS1.3");
  tls.min_version = "TLS12";
  tls.cipher_suites = {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"};
  CHECK(*TlsPriorities(tls, "w") ==
        "NORMAL:-VERS-ALL:+VERS-TLS1.2:+VERS-TLS1.3:-KX-ALL:-CIPHER-ALL:-MAC-ALL:+ECDHE-RSA:+ECDHE-ECDSA:"
        "+AES-128-GCM:+AEAD");
  tls.cipher_suites = {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"};
  auto crossed = TlsPriorities(tls, "w");
  REQUIRE(!crossed);
  CHECK(crossed.error().message ==
        "w: cipher_suites: GnuTLS would also allow TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, as it pairs every listed "
        "key exchange with every listed cipher");
  tls.cipher_suites = {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"};
  auto no_aead = TlsPriorities(tls, "w");
  REQUIRE(!no_aead);
  CHECK(no_aead.error().message == "w: cipher_suites: TLS 1.3 needs a GCM or ChaCha20 cipher, and none is listed");
  tls.max_version = "TLS12";
  CHECK(*TlsPriorities(tls, "w") ==
        "NORMAL:-VERS-ALL:+VERS-TLS1.2:-KX-ALL:-CIPHER-ALL:-MAC-ALL:+ECDHE-RSA:+AES-128-CBC:+SHA1");
}

TEST_CASE("web config: beyond loopback, TLS and authentication or --insecure") {
  WebConfig none;
  WebConfig tls_only;
  tls_only.tls = WebTls{};
  WebConfig users_only;
  users_only.users = {{"alice", kSecret}};
  WebConfig both = users_only;
  both.tls = WebTls{};
  WebConfig mutual;
  mutual.tls = WebTls{};
  mutual.tls->verify_clients = true;
  CHECK(*CheckExposure("127.0.0.1", nullptr, false) == "");
  CHECK(*CheckExposure("::1", nullptr, false) == "");
  CHECK(*CheckExposure("0.0.0.0", &both, false) == "");
  CHECK(*CheckExposure("::", &mutual, false) == "");
  auto open = CheckExposure("0.0.0.0", nullptr, false);
  REQUIRE(!open);
  CHECK(open.error().message ==
        "serve would listen on 0.0.0.0, beyond this machine, with neither TLS nor "
        "authentication");
  CHECK(CheckExposure("10.0.0.1", &tls_only, false).error().message ==
        "serve would listen on 10.0.0.1, beyond this machine, with no authentication (anyone who reaches it reads "
        "the metrics)");
  CHECK(CheckExposure("10.0.0.1", &users_only, false).error().message ==
        "serve would listen on 10.0.0.1, beyond this machine, with no TLS (passwords would cross the network in "
        "the clear)");
  CHECK(*CheckExposure("0.0.0.0", &none, true) ==
        "kprobectl: warning: serving 0.0.0.0 with neither TLS nor authentication (--insecure)");
}

TEST_CASE("web config: basic authentication, 401 with WWW-Authenticate, bcrypt compared for unknown users too") {
  auto check = PasswordCheck::Load();
  REQUIRE(check);
  CHECK(check->Matches("secret", kSecret));
  CHECK(!check->Matches("Secret", kSecret));
  CHECK(!check->Matches("secret", kOther));
  CHECK(check->Matches("other", kOther));
  CHECK(!check->Matches("other", kOther.substr(0, 59)));
  // Remembered matches answer the same, and a near miss is still computed.
  CHECK(check->Matches("secret", kSecret));
  CHECK(!check->Matches("secret ", kSecret));
  CHECK(!check->Matches("secret", kOther));
  std::vector<WebUser> users = {{"alice", kSecret}, {"bob", kOther}};
  std::vector<std::string> compared;
  PasswordMatches matches = [&](const std::string& password, const std::string& hash) {
    compared.push_back(hash.substr(0, 7));
    return check->Matches(password, hash);
  };
  struct Case {
    std::string authorization;
    bool allowed;
    std::string compared;  // the hash's $2?$NN$ prefix, when one was compared
  };
  std::vector<Case> cases = {
      {"Basic YWxpY2U6c2VjcmV0", true, "$2y$10$"},   // alice:secret
      {"Basic YWxpY2U6d3Jvbmc=", false, "$2y$10$"},  // alice:wrong
      {"Basic Ym9iOnNlY3JldA==", false, "$2y$04$"},  // bob:secret
      {"Basic Y2Fyb2w6c2VjcmV0", false, "$2b$10$"},  // carol:secret, no such user: the same cost
      {"Basic YWxpY2VzZWNyZXQ=", false, ""},         // no colon
      {"Basic YWxpY2U6c2VjcmV0=", false, ""},        // bad base64
      {"Bearer YWxpY2U6c2VjcmV0", false, ""},       {"", false, ""},
  };
  for (const Case& c : cases) {
    INFO(c.authorization);
    compared.clear();
    auto denied = CheckBasicAuth(c.authorization, users, matches);
    CHECK(!denied == c.allowed);
    CHECK((compared.empty() ? "" : compared[0]) == c.compared);
    if (denied) {
      CHECK(denied->status == 401);
      CHECK(denied->www_authenticate == "Basic realm=\"kprobectl\", charset=\"UTF-8\"");
      CHECK(denied->body == "kprobectl serve: authentication required\n");
    }
  }
  CHECK(!CheckBasicAuth("", {}, matches));
}
