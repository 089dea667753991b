// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/trace_event_def.h"

#include <catch2/catch.hpp>

using namespace kprobectl;

TEST_CASE("definitions round-trip through format and parse") {
  struct Row {
    ProbeKind kind;
    const char* line;
  } rows[] = {
      {ProbeKind::kKernel, "p:probe/do_sys_open do_sys_open+0"},
      {ProbeKind::kKernel, "p:probe/do_sys_open_L9 do_sys_open+42 filename=+0(%si):string dfd=%di:s32"},
      {ProbeKind::kKernel, "r:probe/do_sys_open__return do_sys_open+0 retval=$retval:s64"},
      {ProbeKind::kKernel, "r10:probe/vfs_read__return vfs_read+0 ret=$retval"},
      {ProbeKind::kKernel, "p:probe/umask_show _text+3417264 m=%di:x64"},
      {ProbeKind::kKernel, "p:probe/ext4_sync ext4:ext4_sync_file+16"},
      {ProbeKind::kKernel, "p:probe/abs_ffffffff81000000 0xffffffff81000000"},
      {ProbeKind::kKernel, "p:probe/x f+0 j=@jiffies+8:u64 imm=\\0x10:u8 c=$comm f=+0(%di):b4@2/32 a=+0(%si):u8[4]"},
      {ProbeKind::kUser, "p:probe_demo/compute /usr/bin/demo:0x1139 a=%di:s32 b=%si:s32"},
      {ProbeKind::kUser, "r:probe_demo/compute__return /usr/bin/demo:0x1139 retval=$retval:s32"},
      {ProbeKind::kUser, "p:probe_demo/sdt /usr/bin/demo:0x1139(0x4010) g=@+0x4010:u32"},
  };
  for (const Row& row : rows) {
    INFO(row.line);
    auto def = ParseDefinition(row.line, row.kind);
    REQUIRE(def);
    CHECK(FormatDefinition(*def) == row.line);
    auto again = ParseDefinition(FormatDefinition(*def), row.kind);
    REQUIRE(again);
    CHECK(*again == *def);
  }
}

TEST_CASE("what the kernel prints back parses to what we wrote") {
  // kprobe_events prints offsets in decimal; uprobe_events pads the file
  // offset to 16 hex digits; the 'r' keeps maxactive.
  struct Row {
    ProbeKind kind;
    const char* written;
    const char* read_back;
  } rows[] = {
      {ProbeKind::kUser, "p:probe_demo/compute /tmp/demo:0x1139 a=%di",
       "p:probe_demo/compute /tmp/demo:0x0000000000001139 a=%di"},
      {ProbeKind::kUser, "r:probe_demo/compute__return /tmp/demo:0x1139 retval=$retval:s32",
       "r:probe_demo/compute__return /tmp/demo:0x0000000000001139 retval=$retval:s32"},
      {ProbeKind::kKernel, "p:probe/do_sys_open do_sys_open+16", "p:probe/do_sys_open do_sys_open+16"},
      {ProbeKind::kKernel, "r10:probe/vfs_read__return vfs_read+0", "r10:probe/vfs_read__return vfs_read+0"},
  };
  for (const Row& row : rows) {
    INFO(row.written);
    auto written = ParseDefinition(row.written, row.kind);
    auto read_back = ParseDefinition(row.read_back, row.kind);
    REQUIRE(written);
    REQUIRE(read_back);
    CHECK(*written == *read_back);
  }
  // A "+0x10" we might write reads back as decimal.
  auto hex = ParseDefinition("p:probe/f f+0x10", ProbeKind::kKernel);
  REQUIRE(hex);
  CHECK(hex->target.offset == 16);
  CHECK(FormatDefinition(*hex) == "p:probe/f f+16");
}

TEST_CASE("the model holds the parts of a definition") {
  auto def = ParseDefinition("r16:grp/ev mod:sym+8 a=+8(%di):u32 $comm", ProbeKind::kKernel);
  REQUIRE(def);
  CHECK(def->retprobe);
  CHECK(def->maxactive == 16);
  CHECK(def->group == "grp");
  CHECK(def->event == "ev");
  CHECK(def->target.kind == ProbeTarget::kSymbol);
  CHECK(def->target.module == "mod");
  CHECK(def->target.symbol == "sym");
  CHECK(def->target.offset == 8);
  REQUIRE(def->args.size() == 2);
  CHECK(def->args[0] == FetchArg{"a", "+8(%di)", "u32"});
  CHECK(def->args[1] == FetchArg{"", "$comm", ""});
  CHECK(FormatDeletion("grp", "ev") == "-:grp/ev");
  CHECK(def->FullName() == "grp:ev");
}

TEST_CASE("a %return suffix on the target means a return probe") {
  auto def = ParseDefinition("p:probe/f f+0%return", ProbeKind::kKernel);
  REQUIRE(def);
  CHECK(def->retprobe);
  CHECK(FormatDefinition(*def) == "r:probe/f f+0");
}

TEST_CASE("malformed definitions are errors") {
  for (const char* line : {"x:probe/f f", "p:probe/f", "p:probef f+0", "p3:probe/f f+0", "pprobe/f f+0",
                           "p:probe/f f+zz", "p:probe/f /bin/true:zz"}) {
    INFO(line);
    CHECK_FALSE(ParseDefinition(
        line, std::string(line).find("/bin") != std::string::npos ? ProbeKind::kUser : ProbeKind::kKernel));
  }
}

TEST_CASE("fprobe and tracepoint probe lines (dynamic_events, Linux 6.5)") {
  struct Row {
    const char* line;
    ProbeType type;
    bool retprobe;
  } rows[] = {
      {"f:probe/vfs_read vfs_read count=%dx:u64", ProbeType::kFprobe, false},
      {"f:probe/vfs_read__return vfs_read%return ret=$retval:s64", ProbeType::kFprobe, true},
      {"f64:probe/vfs_read__return vfs_read%return", ProbeType::kFprobe, true},  // a rethook pool of 64
      {"f:probe/ext4_sync ext4:ext4_sync_file", ProbeType::kFprobe, false},
      {"t:probe/sched_switch sched_switch prev=prev:x64", ProbeType::kTracepoint, false},
  };
  for (const Row& row : rows) {
    INFO(row.line);
    auto def = ParseDefinition(row.line, ProbeKind::kKernel);
    REQUIRE(def);
    CHECK(def->type == row.type);
    CHECK(def->retprobe == row.retprobe);
    CHECK(def->target.offset == 0);
    CHECK(EventsFileOf(*def) == "dynamic_events");
    CHECK(FormatDefinition(*def) == row.line);
  }
  auto kprobe = ParseDefinition("p:probe/f f+0", ProbeKind::kKernel);
  REQUIRE(kprobe);
  CHECK(EventsFileOf(*kprobe) == "kprobe_events");
  auto uprobe = ParseDefinition("p:probe_x/f /bin/x:0x10", ProbeKind::kUser);
  REQUIRE(uprobe);
  CHECK(EventsFileOf(*uprobe) == "uprobe_events");
  // An fprobe names a function: an offset is not one.
  CHECK_FALSE(ParseDefinition("f:probe/f f+4", ProbeKind::kKernel));
  CHECK_FALSE(ParseDefinition("t:probe/t", ProbeKind::kKernel));
}
