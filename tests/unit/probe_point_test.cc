// SPDX-License-Identifier: GPL-2.0-or-later
#include <catch2/catch.hpp>

#include "kprobectl/probe_spec.h"

using namespace kprobectl;

namespace {

// A compact rendering of a parsed point, so each table row is one line.
std::string Render(const ProbeSpec& s) {
  const ProbePoint& p = s.point;
  std::string out;
  if (!s.group.empty()) out += "group=" + s.group + " ";
  if (!s.event.empty()) out += "event=" + s.event + " ";
  if (!p.function.empty()) out += "func=" + p.function + " ";
  if (!p.file.empty()) out += "file=" + p.file + " ";
  if (!p.version.empty()) out += "version=" + p.version + " ";
  if (p.any_file) out += "any_file ";
  if (p.address) out += "address=" + std::to_string(*p.address) + " ";
  if (p.line) out += "line=" + std::to_string(*p.line) + " ";
  if (p.offset) out += "offset=" + std::to_string(*p.offset) + " ";
  if (p.lazy_pattern) out += "pattern=" + *p.lazy_pattern + " ";
  if (p.retprobe) out += "return ";
  if (!p.sdt_name.empty()) out += "marker=" + p.sdt_provider + ":" + p.sdt_name + " ";
  if (!out.empty()) out.pop_back();
  return out;
}

}  // namespace

TEST_CASE("probe points parse as perf parses them") {
  struct Row {
    const char* input;
    const char* expected;
  } rows[] = {
      {"do_sys_open", "func=do_sys_open"},
      {"do_sys_open:9", "func=do_sys_open line=9"},
      {"do_sys_open+16", "func=do_sys_open offset=16"},
      {"do_sys_open+0x10", "func=do_sys_open offset=16"},
      {"do_sys_open%return", "func=do_sys_open return"},
      {"do_sys_open;filename=*", "func=do_sys_open pattern=filename=*"},
      {"do_sys_open;x%return", "func=do_sys_open pattern=x%return"},  // ;PTN takes the rest
      {"do_sys_open@fs/open.c", "func=do_sys_open file=fs/open.c"},
      {"do_sys_open@fs/open.c:9", "func=do_sys_open file=fs/open.c line=9"},
      {"do_sys_open@fs/open.c+4", "func=do_sys_open file=fs/open.c offset=4"},
      {"do_sys_open@*", "func=do_sys_open any_file"},
      {"fs/open.c:1310", "file=fs/open.c line=1310"},
      {"fs/open.c;getname(*", "file=fs/open.c pattern=getname(*"},
      {"main.c:12", "file=main.c line=12"},
      {"myev=do_sys_open", "event=myev func=do_sys_open"},
      {"grp:myev=do_sys_open%return", "group=grp event=myev func=do_sys_open return"},
      {"grp:ev=fs/open.c:1310", "group=grp event=ev file=fs/open.c line=1310"},
      {"0x1139", "address=4409"},
      {"0x1139%return", "address=4409 return"},
      {"malloc@GLIBC_2.2.5", "func=malloc version=GLIBC_2.2.5"},
      {"memcpy@@GLIBC_2.14", "func=memcpy version=@GLIBC_2.14"},
      {"malloc@GLIBC_2.2.5%return", "func=malloc version=GLIBC_2.2.5 return"},
      {"weird\\:name", "func=weird:name"},
      {"a\\+b\\@c\\=d\\;e", "func=a+b@c=d;e"},
      {"foo.isra.0", "func=foo.isra.0"},
      {"foo.isra.0+4", "func=foo.isra.0 offset=4"},
      {"vfs_*", "func=vfs_*"},
  };
  for (const Row& row : rows) {
    INFO(row.input);
    auto spec = ParseProbeSpec(row.input);
    REQUIRE(spec);
    CHECK(Render(*spec) == row.expected);
  }
}

TEST_CASE("bad probe points get a caret under the bad token") {
  struct Row {
    const char* input;
    const char* message;
  } rows[] = {
      {"foo+bar", "invalid probe point: expected a byte offset after '+' (decimal or 0x hex)\n    foo+bar\n        ^"},
      {"foo:1x", "invalid probe point: expected a line number after ':'\n    foo:1x\n        ^"},
      {"foo%entry", "invalid probe point: unknown probe place '%entry'\n    foo%entry\n        ^"},
      {"foo:3+4", "invalid probe point: an offset (+OFFSET) cannot be used with a line number\n    foo:3+4\n    ^"},
      {"foo:3;bar",
       "invalid probe point: a lazy pattern (;PATTERN) cannot be used with a line number\n    foo:3;bar\n    ^"},
      {"foo+4;bar",
       "invalid probe point: a lazy pattern (;PATTERN) cannot be used with an offset\n    foo+4;bar\n    ^"},
      {"foo:3%return",
       "invalid probe point: %return cannot be used with an offset, a line number or a lazy pattern\n"
       "    foo:3%return\n    ^"},
      {"foo+4%return",
       "invalid probe point: %return cannot be used with an offset, a line number or a lazy pattern\n"
       "    foo+4%return\n    ^"},
      {"foo@a.c@b.c",
       "invalid probe point: a probe point takes one source file (SRC@SRC)\n    foo@a.c@b.c\n           ^"},
      {"foo:1:2", "invalid probe point: a probe point takes one line number\n    foo:1:2\n         ^"},
      {"9ev=foo", "invalid probe point: invalid event name '9ev'\n    9ev=foo\n    ^"},
      {"g-x:ev=foo", "invalid probe point: invalid group name 'g-x'\n    g-x:ev=foo\n    ^"},
      {"ev=", "invalid probe point: expected a function, a source file or an address\n    ev=\n       ^"},
      {"0xzz", "invalid probe point: invalid address '0xzz'\n    0xzz\n    ^"},
      {"0x10:3", "invalid probe point: an address takes only +OFFSET or %return\n    0x10:3\n    ^"},
      {"foo;", "invalid probe point: expected a pattern after ';'\n    foo;\n        ^"},
      {"foo@", "invalid probe point: expected a source file, '*' or a symbol version after '@'\n    foo@\n        ^"},
  };
  for (const Row& row : rows) {
    INFO(row.input);
    auto spec = ParseProbeSpec(row.input);
    REQUIRE_FALSE(spec);
    CHECK(spec.error().message == row.message);
    CHECK_FALSE(spec.error().hint.empty());
  }
}

TEST_CASE("a file spec without a line or pattern is not a file spec but a function") {
  // perf's rule: a head is a file only when a ':' or ';' follows it.
  auto spec = ParseProbeSpec("main.c");
  REQUIRE(spec);
  CHECK(spec->point.function == "main.c");
}

TEST_CASE("empty specs are refused") {
  auto spec = ParseProbeSpec("   ");
  REQUIRE_FALSE(spec);
  CHECK(spec.error().message == "empty probe spec");
}

TEST_CASE("which specs need debuginfo") {
  struct Row {
    const char* input;
    bool needs;
  } rows[] = {
      {"foo", false},
      {"foo+4 %di", false},
      {"foo%return $retval", false},
      {"foo:3", true},
      {"foo;x=*", true},
      {"a.c:3", true},
      {"foo@a.c", true},
      {"foo x", true},
      {"foo $vars", true},
      {"foo $params", true},
      {"foo +0(%di):string", false},
  };
  for (const Row& row : rows) {
    INFO(row.input);
    auto spec = ParseProbeSpec(row.input);
    REQUIRE(spec);
    CHECK(NeedsDebuginfo(*spec) == row.needs);
  }
}

TEST_CASE("DescribePoint renders a point back") {
  for (const char* input : {"foo", "foo+4", "foo%return", "a.c:3", "foo@a.c:3", "foo;x*", "malloc@GLIBC_2.2.5"}) {
    auto spec = ParseProbeSpec(input);
    REQUIRE(spec);
    CHECK(DescribePoint(spec->point) == input);
  }
}

TEST_CASE("USDT markers parse as perf writes them, and stay apart from lines and C++ scopes") {
  struct Row {
    const char* input;
    const char* expected;
  } rows[] = {
      {"sdt_python:function__entry", "marker=sdt_python:function__entry"},
      {"%sdt_python:function__entry", "marker=sdt_python:function__entry"},
      {"%python:function__entry", "marker=python:function__entry"},
      {"python:function__entry", "marker=python:function__entry"},
      {"%throw", "marker=*:throw"},
      {"sdt_python:*", "marker=sdt_python:*"},
      {"sdt_x:2nd", "marker=sdt_x:2nd"},  // sdt_ says it is a marker, though a digit follows
      {"mygrp:myev=python:line", "group=mygrp event=myev marker=python:line"},
      // Not markers: a line of a function, a file's line, a C++ scope.
      {"compute:3", "func=compute line=3"},
      {"main.c:12", "file=main.c line=12"},
  };
  for (const Row& row : rows) {
    INFO(row.input);
    auto spec = ParseProbeSpec(row.input);
    REQUIRE(spec);
    CHECK(Render(*spec) == row.expected);
  }
  auto described = ParseProbeSpec("sdt_python:line");
  REQUIRE(described);
  CHECK(DescribePoint(described->point) == "%sdt_python:line");
  CHECK_FALSE(NeedsDebuginfo(*ParseProbeSpec("sdt_python:line arg1:string")));
  struct Bad {
    const char* input;
    const char* message;
  } bad[] = {
      {"%", "invalid probe point: expected a USDT marker, [sdt_]PROVIDER:NAME, after '%'\n    %\n     ^"},
      {"sdt_python:line%return",
       "invalid probe point: a USDT marker is [%][sdt_]PROVIDER:NAME; nothing follows the name\n"
       "    sdt_python:line%return\n"
       "                   ^"},
  };
  for (const Bad& b : bad) {
    INFO(b.input);
    auto spec = ParseProbeSpec(b.input);
    REQUIRE_FALSE(spec);
    CHECK(spec.error().message == b.message);
  }
}
