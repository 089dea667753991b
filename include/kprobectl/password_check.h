// SPDX-License-Identifier: GPL-2.0-or-later
//
// A password against a bcrypt hash ($2y$, $2b$, $2a$, as htpasswd -B and
// the exporter-toolkit make them), through libxcrypt's crypt_r (which stays
// in password_check.cc, loaded when serve needs it). The hash computed is
// compared with the one stored in constant time. A match is remembered (a
// few dozen, then forgotten all at once), as the exporter-toolkit does, so
// that a scraper sending the same credentials pays bcrypt's cost (about
// 60 ms at cost 10) once, not at every scrape; a wrong password is always
// computed.
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "kprobectl/result.h"
#include "kprobectl/shared_library.h"

namespace kprobectl {

class PasswordCheck {
 public:
  static Result<PasswordCheck> Load();
  bool Matches(const std::string& password, const std::string& hash) const;

 private:
  using CryptR = char*(const char*, const char*, void*);
  struct Verified {
    std::mutex lock;
    std::set<std::string> keys;  // hash, '\n', password
  };
  bool Computed(const std::string& password, const std::string& hash) const;
  SharedLibrary library_;
  CryptR* crypt_r_ = nullptr;
  std::shared_ptr<Verified> verified_ = std::make_shared<Verified>();
};

}  // namespace kprobectl
