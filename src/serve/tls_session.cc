// SPDX-License-Identifier: GPL-2.0-or-later
//
// GnuTLS, wrapped; loaded when serve has TLS to do (libmicrohttpd has
// loaded it already by then). A client certificate is required with
// gnutls_certificate_server_set_request(GNUTLS_CERT_REQUIRE) and verified
// by gnutls_session_set_verify_cert2 against the trust list libmicrohttpd
// set from client_ca_file, for the purpose TLS client authentication (as
// Go's RequireAndVerifyClientCert checks it): a client without one, with
// one another authority signed, or with a server's, fails the handshake. ClientVerified checks again for
// each request, so that no answer depends on the first check alone.
#include "kprobectl/tls_session.h"

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

namespace kprobectl {

struct TlsSession::Functions {
  decltype(&gnutls_certificate_allocate_credentials) allocate_credentials;
  decltype(&gnutls_certificate_free_credentials) free_credentials;
  decltype(&gnutls_certificate_set_x509_key_mem) set_key_mem;
  decltype(&gnutls_certificate_set_x509_trust_mem) set_trust_mem;
  decltype(&gnutls_priority_init) priority_init;
  decltype(&gnutls_priority_deinit) priority_deinit;
  decltype(&gnutls_strerror) strerror;
  decltype(&gnutls_certificate_server_set_request) server_set_request;
  decltype(&gnutls_session_set_verify_cert2) set_verify_cert2;
  decltype(&gnutls_certificate_verify_peers) verify_peers;
  decltype(&gnutls_certificate_get_peers) get_peers;
  // A client certificate's purpose, TLS client authentication; GnuTLS
  // keeps the pointer for the session's life, so it lives as long as this.
  gnutls_typed_vdata_st client_purpose{
      GNUTLS_DT_KEY_PURPOSE_OID, reinterpret_cast<unsigned char*>(const_cast<char*>(GNUTLS_KP_TLS_WWW_CLIENT)), 0};
};

Result<TlsSession> TlsSession::Load() {
  TlsSession tls;
  tls.library_ = KP_TRY(SharedLibrary::Open(KPROBECTL_GNUTLS_SONAME, "serve's TLS", KPROBECTL_GNUTLS_PACKAGE));
  const SharedLibrary& l = tls.library_;
  tls.f_ = std::make_shared<const Functions>(Functions{
      KP_TRY(l.Function<decltype(gnutls_certificate_allocate_credentials)>("gnutls_certificate_allocate_credentials")),
      KP_TRY(l.Function<decltype(gnutls_certificate_free_credentials)>("gnutls_certificate_free_credentials")),
      KP_TRY(l.Function<decltype(gnutls_certificate_set_x509_key_mem)>("gnutls_certificate_set_x509_key_mem")),
      KP_TRY(l.Function<decltype(gnutls_certificate_set_x509_trust_mem)>("gnutls_certificate_set_x509_trust_mem")),
      KP_TRY(l.Function<decltype(gnutls_priority_init)>("gnutls_priority_init")),
      KP_TRY(l.Function<decltype(gnutls_priority_deinit)>("gnutls_priority_deinit")),
      KP_TRY(l.Function<decltype(gnutls_strerror)>("gnutls_strerror")),
      KP_TRY(l.Function<decltype(gnutls_certificate_server_set_request)>("gnutls_certificate_server_set_request")),
      KP_TRY(l.Function<decltype(gnutls_session_set_verify_cert2)>("gnutls_session_set_verify_cert2")),
      KP_TRY(l.Function<decltype(gnutls_certificate_verify_peers)>("gnutls_certificate_verify_peers")),
      KP_TRY(l.Function<decltype(gnutls_certificate_get_peers)>("gnutls_certificate_get_peers"))});
  return tls;
}

namespace {

gnutls_datum_t Datum(const std::string& text) {
  return {reinterpret_cast<unsigned char*>(const_cast<char*>(text.data())), static_cast<unsigned>(text.size())};
}

}  // namespace

Result<void> TlsSession::Check(const TlsMaterial& m) const {
  gnutls_certificate_credentials_t credentials = nullptr;
  if (f_->allocate_credentials(&credentials) < 0) return Fail("GnuTLS could not allocate credentials");
  std::unique_ptr<gnutls_certificate_credentials_st, decltype(f_->free_credentials)> owned(credentials,
                                                                                           f_->free_credentials);
  gnutls_datum_t cert = Datum(m.cert_pem), key = Datum(m.key_pem);
  if (int e = f_->set_key_mem(credentials, &cert, &key, GNUTLS_X509_FMT_PEM); e < 0)
    return Fail("cert_file " + m.cert_file + " and key_file " + m.key_file + ": " + f_->strerror(e),
                "a PEM certificate and the PEM private key it was made for");
  if (!m.client_ca_pem.empty()) {
    gnutls_datum_t ca = Datum(m.client_ca_pem);
    int n = f_->set_trust_mem(credentials, &ca, GNUTLS_X509_FMT_PEM);
    if (n <= 0)
      return Fail("client_ca_file " + m.client_ca_file + ": " + (n < 0 ? f_->strerror(n) : "no certificate in it"),
                  "the PEM certificate of the authority that signs the clients' certificates");
  }
  gnutls_priority_t priority = nullptr;
  const char* error_at = nullptr;
  if (int e = f_->priority_init(&priority, m.priorities.c_str(), &error_at); e < 0)
    return Fail("GnuTLS refuses the priority string '" + m.priorities + "' at '" + (error_at ? error_at : "") +
                "': " + f_->strerror(e));
  f_->priority_deinit(priority);
  return {};
}

void TlsSession::RequireVerifiedClient(void* session) const {
  auto* s = static_cast<gnutls_session_t>(session);
  f_->server_set_request(s, GNUTLS_CERT_REQUIRE);
  f_->set_verify_cert2(s, const_cast<gnutls_typed_vdata_st*>(&f_->client_purpose), 1, 0);
}

bool TlsSession::ClientVerified(void* session) const {
  auto* s = static_cast<gnutls_session_t>(session);
  unsigned count = 0;
  if (!session || !f_->get_peers(s, &count) || count == 0) return false;
  unsigned status = ~0u;
  return f_->verify_peers(s, const_cast<gnutls_typed_vdata_st*>(&f_->client_purpose), 1, &status) == 0 && status == 0;
}

}  // namespace kprobectl
