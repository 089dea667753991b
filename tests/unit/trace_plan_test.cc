// SPDX-License-Identifier: GPL-2.0-or-later
//
// The trace stage without a kernel: the planner's choices, the tracer on a
// captured ring-buffer page, what a killed run left (on a directory that
// stands in for tracefs), process maps, and finding -x by name.
#include "kprobectl/trace_plan.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>

#include "kprobectl/arch.h"
#include "kprobectl/find_binary.h"
#include "kprobectl/leftovers.h"
#include "kprobectl/strings.h"
#include "kprobectl/trace_locations.h"
#include "kprobectl/trace_session.h"
#include "kprobectl/tracer.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

TraceEventDef Def(const std::string& text) {
  auto def = ParseDefinition(text, ProbeKind::kUser);
  REQUIRE(def);
  return *def;
}

std::vector<std::string> Names(const std::vector<TraceEventDef>& defs) {
  std::vector<std::string> out;
  for (const TraceEventDef& d : defs) out.push_back(d.group + "/" + d.event);
  return out;
}

// Pages handed out once each, as a ring buffer would: the same ones on
// each of `cpus` CPUs.
class CapturedPages : public RingReader {
 public:
  explicit CapturedPages(std::vector<std::string> pages, int cpus = 1)
      : pages_(std::move(pages)), next_(static_cast<size_t>(cpus)) {}
  int cpus() const override { return static_cast<int>(next_.size()); }
  Result<size_t> ReadPage(int cpu, std::vector<uint8_t>& page) override {
    size_t& next = next_[static_cast<size_t>(cpu)];
    if (next == pages_.size()) return size_t{0};
    const std::string& p = pages_[next++];
    page.assign(p.begin(), p.end());
    return p.size();
  }

 private:
  std::vector<std::string> pages_;
  std::vector<size_t> next_;  // per CPU
};

}  // namespace

TEST_CASE("trace plan: globs select, probe* by default, --probe added, latency entries hidden") {
  std::vector<TraceEventDef> existing = {Def("p:probe_x/a /bin/x:0x10"), Def("r:probe_x/b /bin/x:0x20"),
                                         Def("p:other/c /bin/x:0x30")};
  EventNamer namer({"probe_x/a", "probe_x/b", "other/c"}, true);
  auto plan = PlanTrace({}, existing, {}, namer);
  REQUIRE(plan);
  CHECK(Names(plan->events) == std::vector<std::string>{"probe_x/a", "probe_x/b"});
  CHECK(plan->add.empty());

  plan = PlanTrace({{"other:*", "probe_x/b"}, false}, existing, {}, namer);
  REQUIRE(plan);
  CHECK(Names(plan->events) == std::vector<std::string>{"probe_x/b", "other/c"});

  // --latency: b's return needs its entry; a temporary return probe on a's
  // target finds a there already.
  std::vector<TraceEventDef> temporary = {Def("r:tmp/a__return /bin/x:0x10")};
  plan = PlanTrace({{"probe_x:b"}, true}, existing, temporary, namer);
  REQUIRE(plan);
  CHECK(Names(plan->add) == std::vector<std::string>{"tmp/a__return", "probe_x/b__entry", "tmp/a__entry"});
  CHECK(plan->hidden == std::set<std::string>{"probe_x/b__entry", "tmp/a__entry"});
  CHECK(Names(plan->events) ==
        std::vector<std::string>{"probe_x/b", "tmp/a__return", "probe_x/b__entry", "tmp/a__entry"});
  CHECK(plan->add[1].args.empty());
  CHECK_FALSE(plan->add[1].retprobe);

  auto none = PlanTrace({{"nothing:*"}, false}, existing, {}, namer);
  REQUIRE_FALSE(none);
  CHECK(none.error().message == "no probe event matches nothing:*");
}

// Go's FUNC%return is plain probes on the return instructions: --latency
// times them from the function's entry, one hidden entry for both, and a
// call is its goroutine's (R14, a hidden argument of each), not its
// thread's; where a probe of the function is in the kernel already (not
// kprobectl's to shape), by thread.
TEST_CASE("trace plan: --latency times probes on a Go function's return instructions from its entry") {
  std::vector<TraceEventDef> temporary = {Def("p:tmp/f__return /bin/g:0x120"), Def("p:tmp/f__return_1 /bin/g:0x150"),
                                          Def("p:tmp/h /bin/g:0x200")};
  EventNamer namer({"tmp/f__return", "tmp/f__return_1", "tmp/h"}, true);
  ReturnSiteOf return_site_of = [](const TraceEventDef& def) -> std::optional<ReturnSite> {
    if (def.target.offset != 0x120 && def.target.offset != 0x150 && def.target.offset != 0x350) return std::nullopt;
    ReturnSite site{def.target, "r14"};
    site.entry.offset = def.target.offset == 0x350 ? 0x300 : 0x100;
    return site;
  };
  auto plan = PlanTrace({{}, true}, {}, temporary, namer, return_site_of);
  REQUIRE(plan);
  CHECK(Names(plan->add) == std::vector<std::string>{"tmp/f__return", "tmp/f__return_1", "tmp/h", "tmp/f__entry"});
  CHECK(plan->hidden == std::set<std::string>{"tmp/f__entry"});
  CHECK(FormatDefinition(plan->add[0]) == "p:tmp/f__return /bin/g:0x120 __kp_g=%r14:x64");
  CHECK(FormatDefinition(plan->add[2]) == "p:tmp/h /bin/g:0x200");
  CHECK(FormatDefinition(plan->add.back()) == "p:tmp/f__entry /bin/g:0x100 __kp_g=%r14:x64");
  CHECK(plan->returns ==
        std::map<std::string, std::string>{{"tmp/f__return", "/bin/g:0x100"}, {"tmp/f__return_1", "/bin/g:0x100"}});
  // A return instruction's probe in the kernel already: by thread.
  std::vector<TraceEventDef> existing = {Def("p:probe_g/k__return /bin/g:0x350")};
  plan = PlanTrace({{"probe_g:*"}, true}, existing, {}, namer, return_site_of);
  REQUIRE(plan);
  CHECK(Names(plan->add) == std::vector<std::string>{"probe_g/k__entry"});
  CHECK(FormatDefinition(plan->add[0]) == "p:probe_g/k__entry /bin/g:0x300");
  // Without --latency, nothing is looked up.
  plan = PlanTrace({{}, false}, {}, temporary, namer, return_site_of);
  REQUIRE(plan);
  CHECK(plan->returns.empty());
  CHECK(FormatDefinition(plan->add[0]) == "p:tmp/f__return /bin/g:0x120");
}

TEST_CASE("tracer: a captured page printed to the stream it is given") {
  std::vector<std::pair<std::string, std::string>> formats;
  for (const char* event : {"all", "ret__return", "tick"})
    formats.emplace_back("kptypes", ReadFile(DataPath(std::string("trace/") + event + ".format")));
  auto decoder = EventDecoder::FromFormats(formats);
  REQUIRE(decoder);
  std::vector<EventPlan> plans;
  for (const EventFormat& format : (*decoder)->formats()) {
    auto plan = PlanEvent(format);
    REQUIRE(plan);
    plan->location = format.name == "ret__return" ? "all_types" : format.name == "tick" ? "tick+0x0" : "all_types+0x0";
    plan->caller = [](int, uint64_t, uint64_t) { return std::string("main+0x5e"); };
    plans.push_back(*plan);
  }
  Printer printer(
      {false, false, {}}, [](int) { return std::string("types"); }, nullptr);
  std::ostringstream out;
  Tracer tracer(**decoder, plans, printer, out, "the test's stream");
  CapturedPages pages({ReadFile(DataPath("trace/types.cpu0.raw"))});
  REQUIRE(tracer.Drain(pages));
  CHECK(out.str() == ReadFile(DataPath("trace/types.txt")));
  CHECK(tracer.missed() == 0);
  CHECK(tracer.busiest_bytes() == 4096);
  REQUIRE(tracer.Drain(pages));  // nothing more
  CHECK(out.str() == ReadFile(DataPath("trace/types.txt")));
  CHECK(tracer.busiest_bytes() == 0);

  // Two CPUs' pages merged by time; at the same time, the lower CPU first.
  std::ostringstream merged;
  Tracer two(**decoder, plans, printer, merged, "the test's stream");
  CapturedPages both({ReadFile(DataPath("trace/types.cpu0.raw"))}, 2);
  REQUIRE(two.Drain(both));
  std::string expected;
  for (const std::string& line : SplitLines(ReadFile(DataPath("trace/types.txt"))))
    expected += line + "\n" + Replace(line, "[000]", "[001]") + "\n";
  CHECK(merged.str() == expected);
  CHECK(two.busiest_bytes() == 4096);

  // A stream that fails is an error naming it.
  std::ostringstream broken;
  broken.setstate(std::ios::badbit);
  Tracer failing(**decoder, plans, printer, broken, "the test's stream");
  CapturedPages again({ReadFile(DataPath("trace/types.cpu0.raw"))});
  auto result = failing.Drain(again);
  REQUIRE_FALSE(result);
  CHECK(result.error().message == "cannot write the trace to the test's stream: the stream failed");
}

TEST_CASE("drain interval: 100 ms when idle, a quarter of the busiest buffer's fill time under a flood") {
  struct Case {
    uint64_t bytes;
    double seconds;
    uint64_t buffer;
    int ms;
  };
  for (Case c : {Case{0, 0.1, 1 << 20, 100},            // nothing came
                 Case{4096, 0, 1 << 20, 100},           // no time passed
                 Case{4096, 0.1, 1 << 20, 100},         // 40 KB/s: 25 s to fill
                 Case{1 << 20, 1.0, 1 << 20, 100},      // fills in 1 s: 250 ms, at most 100
                 Case{1 << 20, 0.1, 1 << 20, 25},       // fills in 100 ms
                 Case{128 << 10, 0.05, 128 << 10, 12},  // 128 KB in 50 ms
                 Case{1 << 30, 1.0, 64 << 10, 1}}) {    // faster than 1 ms allows
    INFO(c.bytes << " bytes in " << c.seconds << " s, buffer " << c.buffer);
    CHECK(DrainIntervalMs(c.bytes, c.seconds, c.buffer) == c.ms);
  }
}

TEST_CASE("session: the buffer's size per CPU as the kernel writes it") {
  TempDir root;
  std::filesystem::create_directories(root / "instances");
  TracefsDir tracefs(root.path());
  auto session = TraceSession::Create(tracefs, "kp-test");
  REQUIRE(session);
  for (auto [text, kb] :
       {std::pair{"1408\n", 1408}, std::pair{"7 (expanded: 1408)\n", 1408}, std::pair{"16384", 16384}}) {
    WriteFile(root / "instances/kp-test/buffer_size_kb", text);
    auto read = (*session)->BufferSizeKb();
    REQUIRE(read);
    CHECK(*read == uint64_t(kb));
  }
  WriteFile(root / "instances/kp-test/buffer_size_kb", "x\n");
  auto bad = (*session)->BufferSizeKb();
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message == "cannot read the ring buffer's size: 'x'");
  std::filesystem::remove(root / "instances/kp-test/buffer_size_kb");
}

TEST_CASE("leftovers: a dead run's instance and recorded probes are found and removed, a live one's are not") {
  TempDir tracefs_dir, registry;
  TracefsDir tracefs(tracefs_dir.path());
  std::filesystem::create_directories(tracefs_dir / "instances/kprobectl-4242");
  std::filesystem::create_directories(tracefs_dir / "instances/kprobectl-4242-1");  // serve's counting
  std::filesystem::create_directories(tracefs_dir / "instances/kprobectl-77");      // alive, no record
  std::filesystem::create_directories(tracefs_dir / "instances/kprobectl-77-3");
  std::filesystem::create_directories(tracefs_dir / "instances/kprobectl-4242-x");  // not a part: another's
  std::filesystem::create_directories(tracefs_dir / "instances/other");
  std::filesystem::create_directories(tracefs_dir / "events/tmp/a");
  WriteFile(tracefs_dir / "events/tmp/a/enable", "0\n");
  // The kernel prints the probes back in its own form.
  WriteFile(tracefs_dir / "uprobe_events", "p:tmp/a /bin/x:0x0000000000000010\np:mine/b /bin/x:0x0000000000000010\n");
  {
    auto record = TemporaryRecord::Create(registry.path(), tracefs.root(), {4242, 99});
    REQUIRE(record);
    REQUIRE(record->Add({Def("p:tmp/a /bin/x:0x10"), Def("p:tmp/gone /bin/x:0x20")}));
    record->Keep();  // as if killed: the file stays
  }
  // Another tracefs's record is not ours to act on.
  REQUIRE(TemporaryRecord::Create(registry.path(), "/elsewhere", {5555, 1})->path().size());
  std::set<int> live = {77};
  auto alive = [&](const TraceRun& run) { return live.contains(run.pid); };
  auto found = FindLeftovers(tracefs, registry.path(), alive);
  REQUIRE(found);
  REQUIRE(found->size() == 1);
  const Leftover& l = (*found)[0];
  CHECK(l.run.pid == 4242);
  CHECK(l.run.start_time == 99u);
  CHECK(l.instances == std::vector<std::string>{"instances/kprobectl-4242", "instances/kprobectl-4242-1"});
  REQUIRE(l.probes.size() == 1);  // tmp/gone is no longer in the kernel
  CHECK(l.probes[0].FullName() == "tmp:a");
  // Removing it: the fake tracefs cannot take "-:tmp/a" the way the kernel
  // does, but the instance goes and the account says what was done.
  std::vector<std::string> written;
  auto account = RemoveLeftover(tracefs, l, [&](std::string_view line) { written.emplace_back(line); });
  REQUIRE(account);
  CHECK(*account ==
        "removed what kprobectl trace (pid 4242) left behind when it was stopped without cleaning up: "
        "kprobectl-4242, kprobectl-4242-1, tmp:a");
  CHECK_FALSE(std::filesystem::exists(tracefs_dir / "instances/kprobectl-4242"));
  CHECK_FALSE(std::filesystem::exists(tracefs_dir / "instances/kprobectl-4242-1"));
  CHECK(std::filesystem::exists(tracefs_dir / "instances/kprobectl-77"));
  CHECK(std::filesystem::exists(tracefs_dir / "instances/kprobectl-77-3"));
  CHECK(std::filesystem::exists(tracefs_dir / "instances/kprobectl-4242-x"));
  CHECK(std::find(written.begin(), written.end(), "write " + tracefs.PathOf("uprobe_events") + ": -:tmp/a") !=
        written.end());
  CHECK_FALSE(std::filesystem::exists(registry / "trace-4242"));
  // A live run (same start time) is left alone, record and all.
  auto mine = TemporaryRecord::Create(registry.path(), tracefs.root(), {77, 5});
  REQUIRE(mine);
  found = FindLeftovers(tracefs, registry.path(), alive);
  REQUIRE(found);
  CHECK(found->empty());
}

TEST_CASE("leftovers: this process's start time is read from /proc") {
  auto self = ProcessRun("/proc", getpid());
  REQUIRE(self);
  CHECK(self->start_time.has_value());
  CHECK_FALSE(ProcessRun("/proc", 0x7ffffffe).has_value());
}

TEST_CASE("process maps: mapped files, with blanks in paths, without anonymous or deleted mappings") {
  auto maps = ProcessMaps::Parse(
      "55d0c6a00000-55d0c6a02000 r--p 00000000 fe:01 1234                       /usr/bin/cat\n"
      "55d0c6a02000-55d0c6a07000 r-xp 00002000 fe:01 1234                       /usr/bin/cat\n"
      "7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n"
      "7f1000000000-7f1000001000 r-xp 00001000 fe:01 99     /tmp/a dir/lib x.so\n"
      "7f2000000000-7f2000001000 r-xp 00000000 fe:01 98     /tmp/old.so (deleted)\n"
      "7ffd1e5f0000-7ffd1e612000 rw-p 00000000 00:00 0                          [stack]\n");
  REQUIRE(maps.size() == 3);
  CHECK(maps[1].start == 0x55d0c6a02000);
  CHECK(maps[1].offset == 0x2000);
  CHECK(maps[1].path == "/usr/bin/cat");
  CHECK(maps[2].path == "/tmp/a dir/lib x.so");
  // This process's own code is found in its own executable.
  ProcessMaps live;
  auto place = live.Find(getpid(), reinterpret_cast<uint64_t>(&ProcessMaps::Parse));
  REQUIRE(place);
  CHECK(std::filesystem::equivalent(place->path, "/proc/self/exe"));
}

TEST_CASE("finding -x by name: programs in PATH, libraries where the dynamic linker looks, 64-bit only") {
  TempDir dir;
  std::filesystem::create_directories(dir / "bin");
  std::filesystem::create_directories(dir / "lib32");
  std::filesystem::create_directories(dir / "lib64");
  std::filesystem::copy_file(FixturePath("types"), dir / "bin/prog");
  std::filesystem::permissions(dir / "bin/prog", std::filesystem::perms::owner_all);
  WriteFile(dir / "lib32/libz.so.1", std::string("\x7f"
                                                 "ELF\x01\x01\x01",
                                                 7) +
                                         std::string(60, '\0'));
  std::filesystem::copy_file(FixturePath("libfx.so"), dir / "lib64/libz.so.1");
  WriteFile(dir / "ld.so.conf", "include " + dir.path() + "/conf.d/*.conf\n");
  std::filesystem::create_directories(dir / "conf.d");
  WriteFile(dir / "conf.d/a.conf", "# 32-bit first\n" + dir.path() + "/lib32\n" + dir.path() + "/lib64\n");
  std::string path_env = "/nonexistent:" + dir.path() + "/bin";
  SearchPaths search = SearchPathsFrom(
      path_env.c_str(), nullptr, LibraryMachine{X86_64Arch().elf_machine(), "x86_64-linux-gnu"}, dir / "ld.so.conf");
  CHECK(*FindBinary("prog", search) == std::filesystem::canonical(dir / "bin/prog").string());
  CHECK(*FindBinary("libz.so.1", search) == std::filesystem::canonical(dir / "lib64/libz.so.1").string());
  auto missing = FindBinary("libnothing.so.9", search);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message ==
        "cannot find the binary 'libnothing.so.9' in PATH or where the dynamic linker looks for libraries");
  CHECK(FindBinary("", search).error().message ==
        "-x needs a binary: an executable or a shared library, by path or name");
}
