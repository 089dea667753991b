// SPDX-License-Identifier: GPL-2.0-or-later
//
// SharedLibrary: a library loaded when needed, its functions by name, and
// what is missing said with the package to install.
#include "kprobectl/shared_library.h"

#include <catch2/catch.hpp>

using namespace kprobectl;

TEST_CASE("shared library: loaded by soname, its functions by name, what is missing named") {
  auto libc = SharedLibrary::Open("libc.so.6", "a test", "libc6");
  REQUIRE(libc);
  auto strlen_of = libc->Function<size_t(const char*)>("strlen");
  REQUIRE(strlen_of);
  CHECK((*strlen_of)("kprobectl") == 9);
  auto none = libc->Function<void()>("kprobectl_no_such_function");
  REQUIRE_FALSE(none);
  CHECK(none.error().message == "libc.so.6 has no function kprobectl_no_such_function");

  auto missing = SharedLibrary::Open("libkprobectl-missing.so.7", "a Go function's %return", "libmissing7");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message ==
        "a Go function's %return needs libkprobectl-missing.so.7, which cannot be loaded: libkprobectl-missing.so.7: "
        "cannot open shared object file: No such file or directory");
  CHECK(missing.error().hint == "install Debian's package libmissing7 (apt-get install libmissing7)");
}
