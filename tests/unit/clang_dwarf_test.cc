// SPDX-License-Identifier: GPL-2.0-or-later
//
// A program built by clang: its DWARF 5 gives a function in the CU's own
// file DW_AT_decl_file 0, which libdw names no file. The function's place
// at an entry and a return is then the line's file (Describe looks the line
// up there), with or without an index in the cache.
#include <catch2/catch.hpp>

#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

TEST_CASE("clang's DWARF 5: an entry's and a return's source file, named though decl_file is 0") {
  const std::string bin = FixturePath("clang_decl");
  const std::string source = FixtureSourceDir() + "/clang_decl.c";
  FakeTracefs tracefs;
  TempDir cache;
  ScopedEnv env("XDG_CACHE_HOME", cache.path());
  // The first run builds the index, the second reads it.
  for (int run = 0; run < 2; ++run) {
    INFO("run " << run);
    auto ret = RunKprobectl({"--tracefs", tracefs.path(), "-x", bin, "-n", "triple%return", "$retval"});
    CHECK(ret.status == 0);
    CHECK(ret.err == "Added new event:\n  probe_clang_decl:triple__return\t(on triple%return@" + source + " in " + bin +
                         " with retval)\n\nYou can now record them, e.g.:\n  kprobectl trace "
                         "'probe_clang_decl:triple__return' -- COMMAND\n  echo 1 > " +
                         tracefs.path() + "/events/probe_clang_decl/triple__return/enable; cat " + tracefs.path() +
                         "/trace_pipe\n");
    auto entry = RunKprobectl({"--tracefs", tracefs.path(), "-x", bin, "-n", "triple"});
    CHECK(entry.status == 0);
    CHECK(entry.err == "Added new event:\n  probe_clang_decl:triple\t(on triple@" + source + " in " + bin +
                           ")\n\nYou can now record them, e.g.:\n  kprobectl trace 'probe_clang_decl:triple' -- "
                           "COMMAND\n  echo 1 > " +
                           tracefs.path() + "/events/probe_clang_decl/triple/enable; cat " + tracefs.path() +
                           "/trace_pipe\n");
  }
}
