// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/event_names.h"

#include <catch2/catch.hpp>

using namespace kprobectl;

TEST_CASE("user probe groups are named after the binary, as perf does") {
  CHECK(UserGroupName("/usr/bin/demo") == "probe_demo");
  CHECK(UserGroupName("/lib/x86_64-linux-gnu/libc.so.6") == "probe_libc");
  CHECK(UserGroupName("/tmp/my-app") == "probe_my");
  CHECK(UserGroupName("/tmp/my_app2") == "probe_my_app2");
  CHECK(UserGroupName("/tmp/target_O0") == "probe_target_O0");
  CHECK(UserGroupName("bash") == "probe_bash");
}

TEST_CASE("event names drop compiler and version suffixes") {
  CHECK(EventBaseFromSymbol("do_sys_open") == "do_sys_open");
  CHECK(EventBaseFromSymbol("foo.isra.0") == "foo");
  CHECK(EventBaseFromSymbol("foo.constprop.3") == "foo");
  CHECK(EventBaseFromSymbol("foo.part.0") == "foo");
  CHECK(EventBaseFromSymbol("foo.cold") == "foo");
  CHECK(EventBaseFromSymbol("malloc@GLIBC_2.2.5") == "malloc");
  CHECK(EventBaseFromSymbol(".hidden") == "hidden");
  CHECK(EventBaseFromSymbol("odd$name") == "odd_name");
  CHECK(EventBaseFromSymbol("9lives") == "_9lives");
}

TEST_CASE("event bases for lines and addresses") {
  ProbePoint p;
  p.function = "do_sys_open";
  CHECK(EventBase(p, "do_sys_open") == "do_sys_open");
  p.line = 9;
  CHECK(EventBase(p, "do_sys_open") == "do_sys_open_L9");
  p.line = 0;  // the declaration: the entry, named as perf names it
  CHECK(EventBase(p, "do_sys_open") == "do_sys_open");
  ProbePoint a;
  a.address = 0x1139;
  CHECK(EventBase(a, "") == "abs_1139");
}

TEST_CASE("EventNamer: existing names, -f, several addresses") {
  EventNamer strict({"probe/foo"}, false);
  auto clash = strict.Take("probe", "foo", false, false);
  REQUIRE_FALSE(clash);
  CHECK(clash.error().message == "event 'probe:foo' already exists");
  CHECK(clash.error().hint ==
        "remove it with 'kprobectl del probe:foo', name the new one with EVENT=..., or add -f to append a number");
  CHECK(*strict.Take("probe", "foo", true, false) == "foo__return");
  CHECK(*strict.Take("other", "foo", false, false) == "foo");

  // The second and later addresses of one probe point: EV_1, EV_2...
  EventNamer namer({}, false);
  CHECK(*namer.Take("probe", "bar", false, false) == "bar");
  CHECK(*namer.Take("probe", "bar", false, true) == "bar_1");
  CHECK(*namer.Take("probe", "bar", false, true) == "bar_2");
  auto twice = namer.Take("probe", "bar", false, false);
  REQUIRE_FALSE(twice);
  CHECK(twice.error().message == "two probes of this command are both named 'probe:bar'");

  EventNamer forced({"probe/foo", "probe/foo_1"}, true);
  CHECK(*forced.Take("probe", "foo", false, false) == "foo_2");
  CHECK(*forced.Take("probe", "foo", true, false) == "foo__return");
  CHECK(*forced.Take("probe", "foo", true, false) == "foo__return_1");
}

TEST_CASE("names over the kernel's limit are an error with a hint") {
  EventNamer namer({}, false);
  std::string base(60, 'a');
  CHECK(namer.Take("probe", std::string(63, 'b'), false, false));
  auto result = namer.Take("probe", base, true, false);
  REQUIRE_FALSE(result);
  CHECK(result.error().message ==
        "event name '" + base + "__return' is 68 characters long; the kernel takes at most 63");
  CHECK(result.error().hint == "name the event yourself: [GROUP:]EVENT=aaaaaaaaaaaaaaaaaaaa...");
}
