// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/glob.h"

#include <catch2/catch.hpp>

#include "kprobectl/lang_names.h"

using namespace kprobectl;

TEST_CASE("globs") {
  struct Row {
    const char* pattern;
    const char* text;
    bool match;
  } rows[] = {
      {"*", "", true},
      {"*", "anything", true},
      {"vfs_*", "vfs_read", true},
      {"vfs_*", "do_vfs", false},
      {"*_read", "vfs_read", true},
      {"v?s_read", "vfs_read", true},
      {"v?s_read", "vs_read", false},
      {"[a-c]x", "bx", true},
      {"[!a-c]x", "bx", false},
      {"[^a-c]x", "dx", true},
      {"a\\*", "a*", true},
      {"a\\*", "ab", false},
      {"*a*b*", "xxaxxbxx", true},
      {"*a*b*", "xxbxxaxx", false},
      {"[x", "[x", true},
      {"compute", "compute", true},
      {"compute", "compute2", false},
  };
  for (const Row& row : rows) {
    INFO(row.pattern << " ~ " << row.text);
    CHECK(GlobMatch(row.pattern, row.text) == row.match);
  }
  CHECK(IsGlob("vfs_*"));
  CHECK(IsGlob("a?"));
  CHECK(IsGlob("[ab]"));
  CHECK_FALSE(IsGlob("a\\*"));
  CHECK_FALSE(IsGlob("plain"));
}

TEST_CASE("perf's filter language") {
  struct Row {
    const char* filter;
    const char* name;
    bool match;
  } rows[] = {
      {"vfs_*", "vfs_read", true},
      {"!vfs_*", "vfs_read", false},
      {"vfs_* & !vfs_read", "vfs_read", false},
      {"vfs_* & !vfs_read", "vfs_write", true},
      {"a* | b*", "bee", true},
      {"a* | b* & !bee", "bee", false},
      {"(a* | b*) & !bee", "ant", true},
      {"!(a* | b*)", "cat", true},
      {"!_*", "_start", false},
      {"!_*", "main", true},
      // A '(' inside a glob is the name's (Go's pointer receivers), through its ')'.
      {"net/http.(*ServeMux)*", "net/http.(*ServeMux).ServeHTTP", true},
      {"main.(*T).M | main.f", "main.f", true},
      {"(main.(*T)* | x) & !main.(*T).N", "main.(*T).M", true},
      {"(main.(*T)* | x) & !main.(*T).N", "main.(*T).N", false},
  };
  for (const Row& row : rows) {
    INFO(row.filter << " ~ " << row.name);
    auto filter = GlobFilter::Parse(row.filter);
    REQUIRE(filter);
    CHECK(filter->Matches(row.name) == row.match);
  }
}

TEST_CASE("a filter's globs through a leaf's own pattern: Go's names") {
  auto filter = GlobFilter::Parse("main.Sum[...] | main.(*S).M", [](std::string_view g) { return GoGlob(g); });
  REQUIRE(filter);
  CHECK(filter->Matches("main.Sum[go.shape.int_0]"));
  CHECK(filter->Matches("main.(*S).M"));
  CHECK_FALSE(filter->Matches("main.(xS).M"));
  CHECK_FALSE(filter->Matches("main.Sum"));
}

TEST_CASE("bad filters point at the problem") {
  auto missing = GlobFilter::Parse("(a | b");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message == "invalid filter: expected ')'\n    (a | b\n          ^");
  auto empty = GlobFilter::Parse("a &");
  REQUIRE_FALSE(empty);
  CHECK(empty.error().message == "invalid filter: expected a glob\n    a &\n       ^");
  auto trailing = GlobFilter::Parse("a )");
  REQUIRE_FALSE(trailing);
  CHECK(trailing.error().message == "invalid filter: expected '&', '|' or the end\n    a )\n      ^");
}
