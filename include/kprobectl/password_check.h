// SPDX-License-Identifier: GPL-2.0-or-later
//
// A password against a bcrypt hash ($2y$, $2b$, $2a$, as htpasswd -B and
// the exporter-toolkit make them), through libxcrypt's crypt_r (which stays
// in password_check.cc, loaded when serve needs it). The hash computed is
// compared with the one stored in constant time.
#pragma once

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
  SharedLibrary library_;
  CryptR* crypt_r_ = nullptr;
};

}  // namespace kprobectl
