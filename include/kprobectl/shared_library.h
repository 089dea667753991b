// SPDX-License-Identifier: GPL-2.0-or-later
//
// A shared library loaded when a command first needs it (dlopen), not at
// start-up. Capstone (Go's return sites) and libmicrohttpd (serve, with
// GnuTLS and its eight libraries behind it) serve one command each; linked
// in, they were loaded, relocated and resident on every run: a third of a
// warm `-D`'s time and 6 MB of its memory. In: the library's soname (the
// build's, from CMake), what needs it and the Debian package that has it.
// Out: the handle, and its functions by name; a missing library is an
// error naming the package.
#pragma once

#include <memory>
#include <string>

#include "kprobectl/result.h"

namespace kprobectl {

class SharedLibrary {
 public:
  // Stays loaded for the process (RTLD_NODELETE): a second Open finds it.
  static Result<SharedLibrary> Open(const std::string& soname, const std::string& needed_by,
                                    const std::string& package);
  // The function `name` as `F*`; an error when the library lacks it.
  template <typename F>
  Result<F*> Function(const char* name) const {
    return reinterpret_cast<F*>(KP_TRY(Address(name)));
  }

 private:
  Result<void*> Address(const char* name) const;
  std::shared_ptr<void> handle_;
  std::string soname_;
};

}  // namespace kprobectl
