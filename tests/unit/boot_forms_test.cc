// SPDX-License-Identifier: GPL-2.0-or-later
//
// Kernel probes defined at boot: the bootconfig form (perf probe
// --bootconfig's, with the key and return places the kernel reads) and the
// kernel command line's kprobe_event=, and what neither can say.
#include "kprobectl/boot_forms.h"

#include <catch2/catch.hpp>

#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

std::vector<TraceEventDef> Defs(const std::vector<std::string>& lines) {
  std::vector<TraceEventDef> out;
  for (const std::string& line : lines) {
    auto def = ParseDefinition(line, ProbeKind::kKernel);
    REQUIRE(def);
    out.push_back(*def);
  }
  return out;
}

}  // namespace

TEST_CASE("boot forms: bootconfig and kprobe_event= for kprobes and kretprobes") {
  auto defs = Defs({"p:probe/vfs_read vfs_read+0 count=%dx:u64", "r:probe/vfs_read__return vfs_read+0 ret=$retval:s64",
                    "p:kp/open _text+1234 name=+0(+8(%si)):string", "r:kp/mod dummy:dummy_open+0"});
  std::vector<std::string> notes;
  auto bootconfig = FormatBootconfig(defs, &notes);
  REQUIRE(bootconfig);
  CHECK(*bootconfig ==
        "ftrace.event.kprobes.vfs_read.probes = 'vfs_read+0 count=%dx:u64'\n"
        "ftrace.event.kprobes.vfs_read__return.probes = 'vfs_read%return ret=$retval:s64'\n"
        "ftrace.event.kprobes.open.probes = '_text+1234 name=+0(+8(%si)):string'\n"
        "ftrace.event.kprobes.mod.probes = 'dummy:dummy_open%return'\n");
  CHECK(notes == std::vector<std::string>{"the group of probe:vfs_read is kprobes at boot: kprobes:vfs_read",
                                          "the group of probe:vfs_read__return is kprobes at boot: "
                                          "kprobes:vfs_read__return",
                                          "the group of kp:open is kprobes at boot: kprobes:open",
                                          "the group of kp:mod is kprobes at boot: kprobes:mod"});
  auto cmdline = FormatKprobeEventParameter(defs);
  REQUIRE(cmdline);
  CHECK(*cmdline ==
        "kprobe_event=p:probe/vfs_read,vfs_read+0,count=%dx:u64;r:probe/vfs_read__return,vfs_read+0,ret=$retval:s64;"
        "p:kp/open,_text+1234,name=+0(+8(%si)):string;r:kp/mod,dummy:dummy_open+0\n");
  auto maxactive = Defs({"r16:probe/vfs_read__return vfs_read+0"});
  CHECK(*FormatKprobeEventParameter(maxactive) == "kprobe_event=r16:probe/vfs_read__return,vfs_read+0\n");
  auto no_maxactive = FormatBootconfig(maxactive, nullptr);
  REQUIRE_FALSE(no_maxactive);
  CHECK(no_maxactive.error().message ==
        "'probe:vfs_read__return' has a maxactive (--maxactive), which a bootconfig cannot say");
}

TEST_CASE("boot forms: what the kernel cannot define at boot is refused, saying why") {
  auto fprobe = FormatKprobeEventParameter(Defs({"f:probe/vfs_read vfs_read"}));
  REQUIRE_FALSE(fprobe);
  CHECK(fprobe.error().message ==
        "'probe:vfs_read' is an fprobe: the kernel defines only kprobes at boot (kprobe_event= and bootconfig's "
        "ftrace.event.kprobes)");
  auto event = FormatBootconfig(Defs({"e:eprobes/x syscalls.sys_enter_openat"}), nullptr);
  REQUIRE_FALSE(event);
  CHECK(event.error().message ==
        "'eprobes:x' is an event probe: the kernel defines only kprobes at boot (kprobe_event= and bootconfig's "
        "ftrace.event.kprobes)");
  auto user = ParseDefinition("p:probe_true/main /bin/true:0x1000", ProbeKind::kUser);
  REQUIRE(user);
  auto refused = FormatKprobeEventParameter({*user});
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message ==
        "user-space probes cannot be defined at boot: the kernel defines only kprobes then (kprobe_event= and "
        "bootconfig's ftrace.event.kprobes), before any program runs");
  auto comma = FormatKprobeEventParameter(Defs({"p:probe/x vfs_read+0 s=\\\"a,b\\\""}));
  REQUIRE_FALSE(comma);
  CHECK(comma.error().message ==
        "the argument 's=\\\"a,b\\\"' of probe:x holds a comma, a blank or a ';', which kprobe_event= cannot carry "
        "(it turns commas into blanks and splits at ';')");
  std::vector<std::string> many;
  for (int i = 0; i < 60; ++i) many.push_back("p:probe/event_" + std::to_string(i) + " vfs_read+0 count=%dx:u64");
  auto long_line = FormatKprobeEventParameter(Defs(many));
  REQUIRE_FALSE(long_line);
  CHECK(long_line.error().message == "kprobe_event= would take 2522 characters; the kernel's command line holds 2047");
}

TEST_CASE("boot forms: --cmdline and --bootconfig print what -D resolves, and refuse user probes first") {
  auto cmdline = RunKprobectl({"--no-cache", "-k", FixturePath("kernel_like"), "--cmdline", "-a", "kp:p=process", "-a",
                               "process%return $retval"});
  CHECK(cmdline.err == "");
  CHECK(cmdline.out == "kprobe_event=p:kp/p,process+0;r:probe/process__return,process+0,retval=$retval:s32\n");
  auto bootconfig = RunKprobectl(
      {"--no-cache", "-q", "-k", FixturePath("kernel_like"), "--bootconfig", "-a", "process%return $retval"});
  CHECK(bootconfig.out == "ftrace.event.kprobes.process__return.probes = 'process%return retval=$retval:s32'\n");
  auto user = RunKprobectl({"--no-cache", "-x", FixturePath("target_O2"), "--bootconfig", "-a", "compute"});
  CHECK(user.status == 1);
  CHECK(user.err ==
        "kprobectl: error: user-space probes cannot be defined at boot: the kernel defines only kprobes then "
        "(kprobe_event= and bootconfig's ftrace.event.kprobes), before any program runs\n"
        "  hint: add them once the system is up: kprobectl -x BINARY add ...\n");
  auto both = RunKprobectl({"--bootconfig", "--cmdline", "-a", "vfs_read"});
  CHECK(both.status == 2);
}

TEST_CASE("funcs: a name that is no function is said, with the nearest names, but a glob that matches none is not") {
  auto wrong = RunKprobectl({"--no-cache", "-x", FixturePath("target_O2"), "funcs", "compte"});
  CHECK(wrong.status == 1);
  CHECK(wrong.err == "kprobectl: error: no function 'compte' in " + FixturePath("target_O2") +
                         " that can be probed\n  hint: similar names: compute\n");
  auto glob = RunKprobectl({"--no-cache", "-x", FixturePath("target_O2"), "funcs", "compte*"});
  CHECK(glob.status == 0);
  CHECK(glob.out == "");
}
