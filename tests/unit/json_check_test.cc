// SPDX-License-Identifier: GPL-2.0-or-later
// The tests' JSON reader must itself be right: it judges the --json output.
#include "json_check.h"

#include <catch2/catch.hpp>

using namespace kprobectl::test;

TEST_CASE("the test JSON reader accepts JSON and nothing else") {
  for (const char* good : {"{}", "[]", "{\"a\":1,\"b\":[1,2,{\"c\":null}],\"d\":\"x\\u00ff\\n\"}", "-0.5e+3",
                           "\"\xc3\xa9\"", "{\"t\":true,\"f\":false}"})
    CHECK(JsonValid(good));
  for (const char* bad : {"{", "{\"a\":}", "{a:1}", "[1,]", "01", "\"\\x41\"", "\"\xff\"", "\"a\nb\"", "{} x", "nul"})
    CHECK_FALSE(JsonValid(bad));
  std::string doc = "{\"time\":1.5,\"args\":{\"a\":5,\"s\":\"hi\",\"v\":[1,2]},\"pid\":7}";
  CHECK(*JsonField(doc, "time") == "1.5");
  CHECK(*JsonField(doc, "args.a") == "5");
  CHECK(*JsonField(doc, "args.s") == "\"hi\"");
  CHECK(*JsonField(doc, "args.v") == "[1,2]");
  CHECK(*JsonField(doc, "pid") == "7");
  CHECK_FALSE(JsonField(doc, "args.zz"));
}
