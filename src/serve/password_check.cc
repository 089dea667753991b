// SPDX-License-Identifier: GPL-2.0-or-later
//
// libxcrypt, wrapped. crypt_r's data (32 kB) is allocated per call, so
// that calls from several threads share nothing.
#include "kprobectl/password_check.h"

#include <crypt.h>

#include <memory>
#include <string_view>

namespace kprobectl {

Result<PasswordCheck> PasswordCheck::Load() {
  PasswordCheck check;
  check.library_ =
      KP_TRY(SharedLibrary::Open(KPROBECTL_CRYPT_SONAME, "serve's basic_auth_users", KPROBECTL_CRYPT_PACKAGE));
  check.crypt_r_ = KP_TRY(check.library_.Function<CryptR>("crypt_r"));
  return check;
}

namespace {

constexpr size_t kRemembered = 64;

}  // namespace

bool PasswordCheck::Matches(const std::string& password, const std::string& hash) const {
  std::string key = hash + "\n" + password;
  {
    std::lock_guard held(verified_->lock);
    if (verified_->keys.contains(key)) return true;
  }
  if (!Computed(password, hash)) return false;
  std::lock_guard held(verified_->lock);
  if (verified_->keys.size() >= kRemembered) verified_->keys.clear();
  verified_->keys.insert(std::move(key));
  return true;
}

bool PasswordCheck::Computed(const std::string& password, const std::string& hash) const {
  auto data = std::make_unique<crypt_data>();
  const char* computed = crypt_r_(password.c_str(), hash.c_str(), data.get());
  // A failure is "*0" or "*1" (libxcrypt), or null: never equal to a hash.
  std::string_view got = computed ? computed : "*";
  unsigned char differ = got.size() == hash.size() ? 0 : 1;
  for (size_t i = 0; i < hash.size(); ++i)
    differ |= static_cast<unsigned char>(hash[i] ^ (i < got.size() ? got[i] : 0));
  return differ == 0;
}

}  // namespace kprobectl
