// SPDX-License-Identifier: GPL-2.0-or-later
//
// What kprobectl serve asks of GnuTLS itself (it stays in tls_session.cc;
// libmicrohttpd drives the handshake): that a certificate, its key, the
// clients' authority and the priority string are usable, checked before
// serving so that an error names the file; and, on each connection, that
// the client must present a certificate its authority signed, verified in
// the handshake (libmicrohttpd alone only requests one and verifies
// nothing). Sessions are libmicrohttpd's `void*` gnutls_session_t.
#pragma once

#include <string>

#include "kprobectl/result.h"
#include "kprobectl/shared_library.h"

namespace kprobectl {

// The PEM texts and settings handed to libmicrohttpd.
struct TlsMaterial {
  std::string cert_pem, key_pem, client_ca_pem;  // client_ca_pem: empty without client certificates
  std::string priorities;
  std::string cert_file, key_file, client_ca_file;  // for errors
};

class TlsSession {
 public:
  static Result<TlsSession> Load();
  Result<void> Check(const TlsMaterial& material) const;
  // Before the handshake: a client certificate required and verified.
  void RequireVerifiedClient(void* session) const;
  // After it: whether the client showed a certificate that verified.
  bool ClientVerified(void* session) const;

 private:
  SharedLibrary library_;
  struct Functions;
  std::shared_ptr<const Functions> f_;
};

}  // namespace kprobectl
