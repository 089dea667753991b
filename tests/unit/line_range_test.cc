// SPDX-License-Identifier: GPL-2.0-or-later
//
// line (-L) ranges, parsed as perf's parse_line_range_desc() parses them,
// with perf's own test_line_semantics cases among them.
#include "kprobectl/line_range.h"

#include <catch2/catch.hpp>

using namespace kprobectl;

namespace {

std::string Render(const LineRange& r) {
  std::string out;
  if (!r.function.empty()) out += "func=" + r.function + " ";
  if (!r.file.empty()) out += "file=" + r.file + " ";
  out += "start=" + std::to_string(r.start);
  if (r.end) out += " end=" + std::to_string(*r.end);
  return out;
}

}  // namespace

TEST_CASE("line ranges parse as perf parses them") {
  struct Row {
    const char* input;
    const char* expected;
  } rows[] = {
      // perf's test_line_semantics: every one of these is accepted.
      {"func", "func=func start=0"},
      {"func:10", "func=func start=10"},
      {"func:0-10", "func=func start=0 end=10"},
      {"func:2+10", "func=func start=2 end=11"},  // ten lines from line 2
      {"func@source.c", "func=func file=source.c start=0"},
      {"func@source.c:1", "func=func file=source.c start=1"},
      {"source.c:1", "file=source.c start=1"},
      {"source.c:1+1", "file=source.c start=1 end=1"},
      {"source.c:1-10", "file=source.c start=1 end=10"},
      // The issue's: a '.' or '/' after the '@' is the file's, not the name's.
      {"getname_flags@fs/namei.c", "func=getname_flags file=fs/namei.c start=0"},
      {"getname_flags@fs/namei.c:1", "func=getname_flags file=fs/namei.c start=1"},
      {"getname_flags@fs/namei.c:1-3", "func=getname_flags file=fs/namei.c start=1 end=3"},
      {"getname_flags@*:2", "func=getname_flags start=2"},
      {"@fs/namei.c:120+3", "file=fs/namei.c start=120 end=122"},
      {"fs/namei.c", "file=fs/namei.c start=1"},
      {"namei", "func=namei start=0"},
      {"src/Makefile:4", "file=src/Makefile start=4"},
      // C++: a scope's "::" and what brackets hold are the name's.
      {"shop::Cart::add:3", "func=shop::Cart::add start=3"},
      {"shop::Cart::add(const Item&, int):1-2", "func=shop::Cart::add(const Item&, int) start=1 end=2"},
      {"shop::max<int>@shop.cc", "func=shop::max<int> file=shop.cc start=0"},
      {"weird\\:name:4", "func=weird:name start=4"},
  };
  for (const Row& row : rows) {
    INFO(row.input);
    auto range = ParseLineRange(row.input);
    REQUIRE(range);
    CHECK(Render(*range) == row.expected);
  }
}

TEST_CASE("bad line ranges get a caret under the bad part") {
  struct Row {
    const char* input;
    const char* message;
  } rows[] = {
      // perf's test_line_semantics: each of these is a semantic error.
      {"func:foo", "invalid line range: expected a line number after ':'\n    func:foo\n         ^"},
      {"func:1-foo", "invalid line range: expected a line number after '-'\n    func:1-foo\n           ^"},
      {"func:1+foo", "invalid line range: expected a number of lines after '+'\n    func:1+foo\n           ^"},
      {"func;lazy*pattern", "invalid line range: a line range takes no ;PATTERN\n    func;lazy*pattern\n        ^"},
      {"fs/a.c;x", "invalid line range: a line range takes no ;PATTERN\n    fs/a.c;x\n          ^"},
      {"func:3-1", "invalid line range: the range ends (line 1) before it starts (line 3)\n    func:3-1\n           ^"},
      {"func:3+0",
       "invalid line range: a range of 0 lines shows nothing: +COUNT counts lines from START\n"
       "    func:3+0\n           ^"},
      {"func:3x", "invalid line range: unexpected 'x' after the line number\n    func:3x\n          ^"},
      {"func:1-2:3", "invalid line range: unexpected ':3' after the line range\n    func:1-2:3\n            ^"},
      {"func:99999999999",
       "invalid line range: line number out of range (at most 2147483647)\n    func:99999999999\n         ^"},
      {":3", "invalid line range: expected a function or a source file\n    :3\n    ^"},
      {"", "invalid line range: expected a function or a source file\n    \n    ^"},
      {"fu-nc:3", "invalid line range: 'fu-nc' is not a function name\n    fu-nc:3\n      ^"},
      {"9func", "invalid line range: '9func' is not a function name\n    9func\n    ^"},
      {"func@", "invalid line range: expected a source file or '*' after '@'\n    func@\n         ^"},
      {"@*:3", "invalid line range: '@*' alone names nothing: give a function before it\n    @*:3\n    ^"},
      {"f$x@a.c", "invalid line range: 'f$x' is not a function name\n    f$x@a.c\n     ^"},
  };
  for (const Row& row : rows) {
    INFO(row.input);
    auto range = ParseLineRange(row.input);
    REQUIRE_FALSE(range);
    CHECK(range.error().message == row.message);
    CHECK_FALSE(range.error().hint.empty());
  }
}
