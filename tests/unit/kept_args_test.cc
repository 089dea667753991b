// SPDX-License-Identifier: GPL-2.0-or-later
//
// A return probe's arguments the kernel cannot keep for it (a kernel
// return probe before Linux 6.9, any user return probe): trace and hist
// fetch them with an entry probe of their own and print them with the
// return of the same call; add and -D refuse them. The plan (which hidden
// entry, which arguments), the CLI's dry run for a kernel without the
// feature (6.1's README) and with it (7.3's), the pairing of calls
// (nesting, a lost entry, a lost return, events lost), the printed lines
// in text and JSON, and hist's counting.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstring>
#include <regex>
#include <sstream>

#include "json_check.h"
#include "kprobectl/aggregation.h"
#include "kprobectl/call_pairing.h"
#include "kprobectl/strings.h"
#include "kprobectl/trace_plan.h"
#include "kprobectl/trace_printer.h"
#include "kprobectl/tracer.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

TraceEventDef Def(const std::string& text, ProbeKind kind = ProbeKind::kUser) {
  auto def = ParseDefinition(text, kind);
  REQUIRE(def);
  return *def;
}

FetchArg AtEntry(std::string name, std::string fetch, std::string type) {
  return FetchArg{std::move(name), std::move(fetch), std::move(type), true};
}

// A tracefs of a kernel whose README is tests/data/kernels/VERSION's.
struct KernelTracefs {
  TempDir dir;
  explicit KernelTracefs(const std::string& version) {
    WriteFile(dir / "README", ReadFile(DataPath("kernels/" + version + "/README")));
    WriteFile(dir / "kprobe_events", "");
    WriteFile(dir / "uprobe_events", "");
    WriteFile(dir / "error_log", "");
  }
  CliResult Run(std::vector<std::string> args) const {
    std::vector<std::string> all = {"--tracefs", dir.path(), "--btf", FixturePath("vmlinux-6.18.btf")};
    all.insert(all.end(), args.begin(), args.end());
    return RunKprobectl(all);
  }
};

}  // namespace

TEST_CASE("kept arguments: the plan moves them to a hidden entry, which pairs by the stack pointer") {
  TraceEventDef ret = Def("r:tmp/walk__return /bin/x:0x10 retval=$retval:s64");
  ret.args.insert(ret.args.begin(), {AtEntry("depth", "%di", "s64"), AtEntry("tag", "%si", "s64")});
  TraceEventDef other = Def("p:tmp/other /bin/x:0x40 v=%ax");
  EventNamer namer({"tmp/walk__return", "tmp/other"}, true);
  auto plan = PlanTrace({}, {}, {ret, other}, namer);
  REQUIRE(plan);
  REQUIRE(plan->add.size() == 3);
  CHECK(FormatDefinition(plan->add[0]) == "r:tmp/walk__return /bin/x:0x10 retval=$retval:s64 __kp_call_sp=$stack:x64");
  CHECK(FormatDefinition(plan->add[1]) == "p:tmp/other /bin/x:0x40 v=%ax");
  CHECK(FormatDefinition(plan->add[2]) ==
        "p:tmp/walk__entry /bin/x:0x10 depth=%di:s64 tag=%si:s64 __kp_call_sp=$stack:x64");
  for (const TraceEventDef& def : plan->add)
    for (const FetchArg& arg : def.args) CHECK_FALSE(arg.at_entry);  // nothing the kernel is sent keeps one
  CHECK(plan->hidden == std::set<std::string>{"tmp/walk__entry"});
  CHECK(plan->opens == std::map<std::string, std::vector<std::string>>{{"tmp/walk__entry", {"tmp/walk__return"}}});
  REQUIRE(plan->kept.size() == 1);
  const KeptArgs& kept = plan->kept.at("tmp/walk__return");
  CHECK(kept.entry == "tmp/walk__entry");
  CHECK(kept.args == std::vector<FetchArg>{AtEntry("depth", "%di", "s64"), AtEntry("tag", "%si", "s64"),
                                           FetchArg{"retval", "$retval", "s64"}});
  CHECK(kept.fields == std::vector<std::string>{"depth", "tag", "retval"});
  CHECK(plan->returns.empty());
}

// Two returns of one function share its hidden entry: one field where
// they fetch the same, renamed where they fetch two things under one
// name. With --latency, a traced entry of the function is not the one
// that pairs (it fetches none of them): the hidden entry opens every call.
TEST_CASE("kept arguments: one hidden entry for a function's returns, also timing them") {
  TraceEventDef first = Def("r:tmp/f__return /bin/x:0x10 r=$retval");
  first.args.insert(first.args.begin(), AtEntry("a", "%di", "s32"));
  TraceEventDef second = Def("r:tmp/f__return_1 /bin/x:0x10");
  second.args = {AtEntry("a", "%di", "s32"), AtEntry("n", "%si", "u64"), FetchArg{"__kp_r7", "%sp", "x64"}};
  TraceEventDef third = Def("r:tmp/f__return_2 /bin/x:0x10");
  third.args = {AtEntry("a", "%dx", "s32")};
  std::vector<TraceEventDef> existing = {Def("p:probe_x/f /bin/x:0x10 a=%di")};
  EventNamer namer({"tmp/f__return", "tmp/f__return_1", "tmp/f__return_2", "probe_x/f"}, true);
  auto plan = PlanTrace({{"probe_x:f"}, true}, existing, {first, second, third}, namer);
  REQUIRE(plan);
  std::vector<std::string> added;
  for (const TraceEventDef& def : plan->add) added.push_back(FormatDefinition(def));
  CHECK(added == std::vector<std::string>{
                     "r:tmp/f__return /bin/x:0x10 r=$retval __kp_call_sp=$stack:x64",
                     "r:tmp/f__return_1 /bin/x:0x10 __kp_r7=%sp:x64 __kp_call_sp=$stack:x64",
                     "r:tmp/f__return_2 /bin/x:0x10 __kp_call_sp=$stack:x64",
                     "p:tmp/f__entry /bin/x:0x10 a=%di:s32 n=%si:u64 a_1=%dx:s32 __kp_call_sp=$stack:x64",
                 });
  CHECK(plan->opens == std::map<std::string, std::vector<std::string>>{
                           {"tmp/f__entry", {"tmp/f__return", "tmp/f__return_1", "tmp/f__return_2"}}});
  CHECK(plan->kept.at("tmp/f__return_1").fields == std::vector<std::string>{"a", "n"});  // not the capture
  CHECK(plan->kept.at("tmp/f__return_2").fields == std::vector<std::string>{"a_1"});
  CHECK(plan->kept.at("tmp/f__return_2").args == std::vector<FetchArg>{AtEntry("a", "%dx", "s32")});
}

// The whole dry run: where the kernel keeps no arguments for return
// probes (6.1), count comes from a hidden entry; where it keeps them
// (7.3), the return probe reads $arg3 itself and nothing is added.
TEST_CASE("kept arguments: trace -n on a kernel without them (6.1) and with them (7.3)") {
  KernelTracefs old("6.1");
  auto planned = old.Run({"trace", "-n", "--probe", "vfs_read%return count $retval"});
  INFO(planned.err);
  CHECK(planned.status == 0);
  CHECK(planned.out ==
        "r:probe/vfs_read__return vfs_read+0 retval=$retval:s64 __kp_call_sp=$stack:x64\n"
        "p:probe/vfs_read__entry vfs_read+0 count=%dx:u64 __kp_call_sp=$stack:x64\n"
        "# traced: probe:vfs_read__return probe:vfs_read__entry (hidden)\n"
        "# kept for probe:vfs_read__return by probe:vfs_read__entry: count\n");
  KernelTracefs keeps("7.3");
  auto direct = keeps.Run({"trace", "-n", "--probe", "vfs_read%return count $retval"});
  CHECK(direct.status == 0);
  CHECK(direct.out ==
        "r:probe/vfs_read__return vfs_read+0 count=$arg3:u64 retval=$retval:s64\n"
        "# traced: probe:vfs_read__return\n");
  // The same from a kernel image's DWARF: a parameter in an argument
  // register at the entry.
  auto dwarf = RunKprobectl({"--tracefs", old.dir.path(), "--no-cache", "-f", "-k", FixturePath("kernel_like"), "trace",
                             "-n", "--probe", "process%return factor $retval"});
  CHECK(dwarf.status == 0);
  CHECK(dwarf.out ==
        "r:probe/process__return process+0 retval=$retval:s32 __kp_call_sp=$stack:x64\n"
        "p:probe/process__entry process+0 factor=%si:s32 __kp_call_sp=$stack:x64\n"
        "# traced: probe:process__return probe:process__entry (hidden)\n"
        "# kept for probe:process__return by probe:process__entry: factor\n");
  // Memory read through an argument is read at the return, which the entry
  // cannot do for it: refused with the reason.
  auto memory = old.Run({"trace", "-n", "--probe", "vfs_read%return buf:string"});
  CHECK(memory.status == 1);
  CHECK(memory.err ==
        "kprobectl: error: invalid argument: 'buf:string' reads memory through argument 2 when the function "
        "returns, and this kernel cannot keep a function's arguments for its return probe ($argN, Linux 6.9); read "
        "at the entry, that memory could differ from the return's\n"
        "    vfs_read%return buf:string\n"
        "                    ^\n"
        "  hint: probe the entry for it there ('vfs_read buf:string'), or fetch argument 2 itself\n");
  // fprobes (Linux 6.5 to 6.8 have them, not $argN at their exits): 6.12's
  // README without the line that says it keeps them stands in.
  KernelTracefs fprobes("6.12");
  WriteFile(fprobes.dir / "README",
            Replace(ReadFile(fprobes.dir / "README"), "kernel return probes support: $retval, $arg<N>, $comm",
                    "kernel return probes support: $retval, $comm"));
  WriteFile(fprobes.dir / "dynamic_events", "");
  auto fprobe = fprobes.Run({"--fprobe", "trace", "-n", "--probe", "vfs_read%return count"});
  CHECK(fprobe.status == 1);
  CHECK(fprobe.err ==
        "kprobectl: error: 'count' is kept by the function's entry for its return, as kprobectl does for kprobes, "
        "not for fprobes\n  hint: leave --fprobe out\n");
}

// The kernel's hist triggers count one event at a time: a return whose
// arguments its entry keeps is counted in kprobectl, which pairs them.
TEST_CASE("kept arguments: hist counts them in kprobectl, on a kernel with hist triggers too") {
  KernelTracefs tracefs("6.12");
  std::string bin = FixturePath("recursive");
  auto hist = [&](const std::string& spec, const std::string& key) {
    return RunKprobectl({"--tracefs", tracefs.dir.path(), "-x", bin, "hist", "-n", "--probe", spec, "-k", key});
  };
  auto counted = hist("walk%return depth", "depth");
  CHECK(counted.status == 0);
  CHECK(std::regex_replace(counted.out, std::regex(":0x[0-9a-f]+ "), ":OFF ") ==
        "r:probe_recursive/walk__return " + bin + ":OFF __kp_call_sp=$stack:x64\n" + "p:probe_recursive/walk__entry " +
            bin + ":OFF depth=%di:s64 __kp_call_sp=$stack:x64\n" +
            "# traced: probe_recursive:walk__return probe_recursive:walk__entry (hidden)\n"
            "# kept for probe_recursive:walk__return by probe_recursive:walk__entry: depth\n"
            "# counted in kprobectl: probe_recursive:walk__return\n");
  // Without kept arguments, the kernel counts.
  auto kernel = hist("walk%return $retval", "retval");
  CHECK(kernel.status == 0);
  CHECK(kernel.out.find("# trigger on probe_recursive/walk__return: hist:keys=retval") != std::string::npos);
}

// Go's FUNC%return is probes on its return instructions: its $argN are
// fetched by a hidden entry past the stack check (where --latency times
// from), paired by goroutine (R14) and stack pointer, measured from the
// top of the goroutine's stack (g.stack.hi), which moves when Go grows it.
TEST_CASE("kept arguments: a Go function's return, paired by goroutine") {
  KernelTracefs tracefs("6.1");
  std::string bin = FixturePath("gofx");
  auto planned = RunKprobectl({"--tracefs", tracefs.dir.path(), "-x", bin, "trace", "-n", "--probe",
                               "main.(*Server).Serve%return $arg4 $retval"});
  INFO(planned.err);
  CHECK(planned.status == 0);
  CHECK(std::regex_replace(planned.out, std::regex(":0x[0-9a-f]+ "), ":OFF ") ==
        "p:probe_gofx/main__Server__Serve__return " + bin +
            ":OFF retval=%ax:s64 __kp_call_sp=$stack:x64 __kp_g=%r14:x64 __kp_g_top=+8(%r14):x64\n"
            "p:probe_gofx/main__Server__Serve__entry " +
            bin +
            ":OFF arg4=%di __kp_call_sp=$stack:x64 __kp_g=%r14:x64 __kp_g_top=+8(%r14):x64\n"
            "# traced: probe_gofx:main__Server__Serve__return probe_gofx:main__Server__Serve__entry (hidden)\n"
            "# kept for probe_gofx:main__Server__Serve__return by probe_gofx:main__Server__Serve__entry: arg4\n");
}

// add and -D write definitions others read from the kernel's trace: no
// pairing there. The reason, the first kernel that keeps them, and what can.
TEST_CASE("kept arguments: add and -D refuse them, naming the kernel that keeps them and trace and hist") {
  KernelTracefs old("6.1");
  const std::string expected =
      "kprobectl: error: invalid argument: 'count' is argument 3, and this kernel cannot keep a function's arguments "
      "for its return probe ($argN, Linux 6.9)\n"
      "    vfs_read%return count $retval\n"
      "                    ^\n"
      "  hint: 'kprobectl trace --probe' and 'kprobectl hist --probe' can: they fetch it at the function's entry with "
      "a probe of their own and print it with the return; or probe the entry too ('vfs_read count')\n";
  for (const char* command : {"-D", "-a"}) {
    INFO(command);
    auto refused = old.Run({command, "vfs_read%return count $retval"});
    CHECK(refused.status == 1);
    CHECK(refused.out.empty());
    CHECK(refused.err == expected);
  }
  CHECK(ReadFile(old.dir / "kprobe_events").empty());
  auto raw = old.Run({"-D", "vfs_read%return $arg3"});
  CHECK(raw.err ==
        "kprobectl: error: invalid argument: '$arg3' is argument 3, and this kernel cannot keep a function's "
        "arguments for its return probe ($argN, Linux 6.9)\n    vfs_read%return $arg3\n                    ^\n"
        "  hint: 'kprobectl trace --probe' and 'kprobectl hist --probe' can: they fetch it at the function's entry "
        "with a probe of their own and print it with the return; or probe the entry too ('vfs_read $arg3')\n");
  CHECK(KernelTracefs("7.3").Run({"-D", "vfs_read%return count $retval"}).out ==
        "r:probe/vfs_read__return vfs_read+0 count=$arg3:u64 retval=$retval:s64\n");
}

// serve counts one event at a time and pairs nothing: as add does, it
// refuses them, before anything is written.
TEST_CASE("kept arguments: serve refuses them, writing nothing") {
  KernelTracefs tracefs("6.1");
  // A free loopback port: serve binds before it resolves.
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&address), size) == 0);
  REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0);
  close(fd);
  WriteFile(tracefs.dir / "k.conf", "probe -x " + FixturePath("recursive") +
                                        " 'walk%return depth'\nhist probe_recursive:walk__return -k depth\n");
  auto served = RunKprobectl({"--tracefs", tracefs.dir.path(), "serve", "-c", tracefs.dir / "k.conf", "--listen",
                              "127.0.0.1:" + std::to_string(ntohs(address.sin_port))});
  CHECK(served.status == 1);
  CHECK(served.err == "kprobectl: error: " + tracefs.dir / "k.conf" +
                          ":1: invalid argument: 'depth' is argument 1, and no kernel keeps a function's arguments "
                          "for a user return probe (uprobes keep none)\n"
                          "    walk%return depth\n"
                          "                ^\n"
                          "  hint: 'kprobectl trace --probe' and 'kprobectl hist --probe' can: they fetch it at the "
                          "function's entry with a probe of their own and print it with the return; or probe the "
                          "entry too ('walk depth')\n");
  CHECK(ReadFile(tracefs.dir / "uprobe_events").empty());
}

namespace {

// An entry that keeps count, and a return of retval, as the kernel
// formats them; the return printing both, as planned.
struct Walk {
  EventPlan entry, ret;
  Walk() {
    EventFormat in;
    in.id = 1;
    in.system = "g";
    in.name = "f__entry";
    in.fields = {{"__probe_ip", 8, 8, false, false, 0},
                 {"count", 16, 8, false, false, 0},
                 {"__kp_call_sp", 24, 8, false, false, 0}};
    in.print_fmt = "(%lx) count=%Lu __kp_call_sp=0x%Lx";
    EventFormat out;
    out.id = 2;
    out.system = "g";
    out.name = "f__return";
    out.fields = {{"__probe_func", 8, 8, false, false, 0},
                  {"__probe_ret_ip", 16, 8, false, false, 0},
                  {"retval", 24, 8, true, false, 0},
                  {"__kp_call_sp", 32, 8, false, false, 0}};
    out.print_fmt = "(%lx <- %lx) retval=%Ld __kp_call_sp=0x%Lx";
    entry = *PlanEvent(in);
    ret = *PlanEvent(out);
    KeptArgs kept{
        "g/f__entry", {AtEntry("count", "%dx", "u64"), FetchArg{"retval", "$retval", "s64"}}, {"count", "retval"}};
    REQUIRE(PlanKeptArgs(ret, entry, kept));
    entry.hidden = true;
    entry.opens = {"g/f__return"};
    ret.call_key = "g/f__return";
    ret.location = "f";
    ret.caller = [](int, uint64_t, uint64_t) { return std::string("main+0x5"); };
  }
};

// Records of a thread, in time order, through the pairing and printer.
struct Run {
  Walk& walk;
  CallPairing calls{8};  // x86-64: a return probe's stack pointer is its entry's + 8
  Printer printer;
  std::string out;
  uint64_t ts = 0;
  Run(Walk& w, bool json)
      : walk(w),
        printer(
            {json, false, {}}, [](int) { return std::string("walk"); }, nullptr) {}
  void Record(const EventPlan& plan, int pid, uint64_t stack, uint64_t value) {
    uint8_t data[40] = {};
    const bool is_ret = &plan == &walk.ret;
    std::memcpy(data + (is_ret ? 32 : 24), &stack, 8);
    std::memcpy(data + (is_ret ? 24 : 16), &value, 8);
    kprobectl::Record r;
    r.ts = ts += 1000;
    r.pid = pid;
    r.data = data;
    r.size = sizeof data;
    auto call = calls.Next(plan, r);
    printer.Print(plan, r, out, nullptr, call ? &*call : nullptr);
  }
  void Enter(int pid, uint64_t stack, uint64_t count) { Record(walk.entry, pid, stack, count); }
  void Return(int pid, uint64_t stack, int64_t retval) { Record(walk.ret, pid, stack, static_cast<uint64_t>(retval)); }
};

void Calls(Run& run) {
  // Recursion: the inner call returns first, each with its own count.
  run.Enter(1, 0x1000, 10);
  run.Enter(1, 0xf00, 20);
  run.Return(1, 0xf08, 2);
  run.Return(1, 0x1008, 1);
  // The inner call's entry lost: it is not the outer call's.
  run.Enter(1, 0x1000, 30);
  run.Return(1, 0xf08, 3);
  run.Return(1, 0x1008, 4);
  // The inner call's return lost: the outer call's is still its own.
  run.Enter(1, 0x1000, 40);
  run.Enter(1, 0xf00, 50);
  run.Return(1, 0x1008, 5);
  // Another thread's call, and one entered before the trace began.
  run.Enter(2, 0x1000, 60);
  run.Return(3, 0x1008, 6);
  run.Return(2, 0x1008, 7);
  // A call whose return was lost, then the next at the same depth.
  run.Enter(1, 0x1000, 70);
  run.Enter(1, 0x1000, 80);
  run.Return(1, 0x1008, 8);
  // Events lost: no open call is certain.
  run.Enter(1, 0x1000, 90);
  run.calls.Lost();
  run.Return(1, 0x1008, 9);
}

}  // namespace

TEST_CASE("kept arguments: a return prints its own call's, through recursion, and ? for an entry not recorded") {
  Walk walk;
  CHECK(walk.entry.args.size() == 1);  // count; never the stack pointer
  REQUIRE(walk.entry.stack_offset);
  CHECK(walk.entry.keep_record);
  REQUIRE(walk.ret.args.size() == 2);
  CHECK(walk.ret.args[0].name == "count");
  CHECK(walk.ret.args[0].from_entry);
  CHECK(walk.ret.args[0].offset == 16);  // in the entry's record
  CHECK(walk.ret.args[1].name == "retval");
  CHECK_FALSE(walk.ret.args[1].from_entry);

  Run text(walk, false);
  Calls(text);
  const std::string head = "            walk-";
  CHECK(text.out == head + "1       [000] 0.000003: g:f__return: (main+0x5 <- f) count=20 retval=2\n" +      //
                        head + "1       [000] 0.000004: g:f__return: (main+0x5 <- f) count=10 retval=1\n" +  //
                        head + "1       [000] 0.000006: g:f__return: (main+0x5 <- f) count=? retval=3\n" +   //
                        head + "1       [000] 0.000007: g:f__return: (main+0x5 <- f) count=30 retval=4\n" +  //
                        head + "1       [000] 0.000010: g:f__return: (main+0x5 <- f) count=40 retval=5\n" +  //
                        head + "3       [000] 0.000012: g:f__return: (main+0x5 <- f) count=? retval=6\n" +   //
                        head + "2       [000] 0.000013: g:f__return: (main+0x5 <- f) count=60 retval=7\n" +  //
                        head + "1       [000] 0.000016: g:f__return: (main+0x5 <- f) count=80 retval=8\n" +  //
                        head + "1       [000] 0.000018: g:f__return: (main+0x5 <- f) count=? retval=9\n");
  CHECK(text.printer.unknown_entries() == 3);

  Run json(walk, true);
  Calls(json);
  auto lines = SplitLines(json.out);
  REQUIRE(lines.size() == 9);
  for (const std::string& line : lines) CHECK(JsonValid(line));
  CHECK(lines[0] ==
        "{\"time\":0.000003,\"cpu\":0,\"pid\":1,\"comm\":\"walk\",\"event\":\"g:f__return\",\"probe\":\"f\","
        "\"caller\":\"main+0x5\",\"args\":{\"count\":20,\"retval\":2}}");
  CHECK(lines[2] ==
        "{\"time\":0.000006,\"cpu\":0,\"pid\":1,\"comm\":\"walk\",\"event\":\"g:f__return\",\"probe\":\"f\","
        "\"caller\":\"main+0x5\",\"args\":{\"count\":null,\"retval\":3}}");
}

namespace {

// Pages of records written here: a page is one byte, its index in
// `pages`, which says its CPU, its records and the events the kernel lost
// before it.
struct ScriptedPage {
  int cpu = 0;
  uint64_t missed = 0;
  std::vector<Record> records;
};

class ScriptedDecoder : public EventDecoder {
 public:
  explicit ScriptedDecoder(const std::vector<ScriptedPage>& pages) : pages_(pages) {}
  const std::vector<EventFormat>& formats() const override { return formats_; }
  Result<void> DecodePage(std::span<const uint8_t> page, int, std::vector<Record>& out, uint64_t* missed) override {
    const ScriptedPage& p = pages_.at(page[0]);
    out.insert(out.end(), p.records.begin(), p.records.end());
    *missed += p.missed;
    return {};
  }

 private:
  const std::vector<ScriptedPage>& pages_;
  std::vector<EventFormat> formats_;
};

class ScriptedReader : public RingReader {
 public:
  explicit ScriptedReader(const std::vector<ScriptedPage>& pages) : pages_(pages) {}
  int cpus() const override { return 2; }
  Result<size_t> ReadPage(int cpu, std::vector<uint8_t>& page) override {
    while (next_[cpu] < pages_.size() && pages_[next_[cpu]].cpu != cpu) ++next_[cpu];
    if (next_[cpu] == pages_.size()) return 0;
    page.assign(1, static_cast<uint8_t>(next_[cpu]++));
    return 1;
  }

 private:
  const std::vector<ScriptedPage>& pages_;
  size_t next_[2] = {0, 0};
};

}  // namespace

// The kernel says events were lost at a page of a CPU: the calls open at
// that page's first record may have lost their entries or returns there,
// and are dropped then, not at the drain's start, where a call entered
// earlier in the same drain would survive it and lend its value to a
// return whose own entry was lost.
TEST_CASE("kept arguments: events lost within a drain drop the calls open where they were lost") {
  Walk walk;
  walk.entry.id = 1;
  walk.ret.id = 2;
  std::vector<std::array<uint8_t, 40>> data;
  data.reserve(8);
  auto record = [&](const EventPlan& plan, int cpu, int pid, uint64_t ts, uint64_t stack, uint64_t value) {
    const bool is_ret = &plan == &walk.ret;
    data.push_back({});
    std::memcpy(data.back().data() + (is_ret ? 32 : 24), &stack, 8);
    std::memcpy(data.back().data() + (is_ret ? 24 : 16), &value, 8);
    Record r;
    r.ts = ts;
    r.cpu = cpu;
    r.type = plan.id;
    r.pid = pid;
    r.data = data.back().data();
    r.size = 40;
    return r;
  };
  const std::vector<ScriptedPage> pages = {
      // CPU 0: thread 1 enters; then lost: that call's return, and the entry
      // of the next call at its depth, whose return comes after the gap.
      {0, 0, {record(walk.entry, 0, 1, 1000, 0x1000, 10)}},
      {0, 3, {record(walk.ret, 0, 1, 5000, 0x1008, 2)}},
      // After the gap, a whole call.
      {0, 0, {record(walk.entry, 0, 1, 6000, 0x1000, 30), record(walk.ret, 0, 1, 7000, 0x1008, 3)}},
      // CPU 1: thread 2's call, open across CPU 0's gap: in doubt too.
      {1, 0, {record(walk.entry, 1, 2, 2000, 0x2000, 40), record(walk.ret, 1, 2, 8000, 0x2008, 4)}},
  };
  ScriptedDecoder decoder(pages);
  ScriptedReader reader(pages);
  Printer printer(
      {false, false, {}}, [](int) { return std::string("walk"); }, nullptr);
  std::ostringstream out;
  Tracer tracer(decoder, {walk.entry, walk.ret}, printer, out, "the test's stream", {}, 8);
  REQUIRE(tracer.Drain(reader));
  CHECK(tracer.missed() == 3);
  const std::string head = "            walk-";
  CHECK(out.str() == head + "1       [000] 0.000005: g:f__return: (main+0x5 <- f) count=? retval=2\n" +       //
                         head + "1       [000] 0.000007: g:f__return: (main+0x5 <- f) count=30 retval=3\n" +  //
                         head + "2       [001] 0.000008: g:f__return: (main+0x5 <- f) count=? retval=4\n");
  CHECK(printer.unknown_entries() == 2);
}

// A probe on a return instruction (Go's) runs before the return: the same
// stack pointer as the entry. With --latency, the time from the entry.
TEST_CASE("kept arguments: a return instruction's stack pointer is its entry's, and latency is from that entry") {
  Walk walk;
  walk.ret.retprobe = false;
  walk.ret.latency_return = true;
  Run run(walk, false);
  run.printer = Printer(
      {false, true, {}}, [](int) { return std::string("walk"); }, nullptr);
  run.Enter(1, 0x1000, 10);
  run.Return(1, 0x1008, 1);  // not its depth
  run.Enter(1, 0x1000, 20);
  run.Return(1, 0x1000, 2);
  auto lines = SplitLines(run.out);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].ends_with(" count=? retval=1"));
  CHECK(lines[1].ends_with(" count=20 retval=2 latency=1.000us"));
}

TEST_CASE("kept arguments: hist counts a return by its entry's value, never without it") {
  EventFormat entry_format;
  entry_format.system = "g";
  entry_format.name = "f__entry";
  entry_format.fields = {{"count", 16, 8, false, false, 0}};
  EventFormat ret_format;
  ret_format.system = "g";
  ret_format.name = "f__return";
  ret_format.fields = {{"retval", 24, 8, true, false, 0}};
  KeptArgs kept{
      "g/f__entry", {AtEntry("count", "%dx", "u64"), FetchArg{"retval", "$retval", "s64"}}, {"count", "retval"}};
  TraceEventDef written = Def("r:g/f__return f", ProbeKind::kKernel);
  written.args = kept.args;
  auto parsed = ParseAggregation({{"count"}, {"retval"}, {}, "", 0});
  REQUIRE(parsed);
  auto spec = BindAggregation(*parsed, written);
  REQUIRE(spec);
  auto counter = UserAggregator::Create(
      *spec, ret_format, [](int) { return std::string(); }, false, &kept, &entry_format);
  REQUIRE(counter);
  auto record = [](uint8_t* data, uint64_t at, uint64_t value) {
    std::memcpy(data + at, &value, 8);
    Record r;
    r.data = data;
    r.size = 40;
    return r;
  };
  uint8_t in1[40] = {}, in2[40] = {}, out1[40] = {}, out2[40] = {}, out3[40] = {};
  Record e1 = record(in1, 16, 4096), e2 = record(in2, 16, 512);
  CHECK(counter->Add(record(out1, 24, 100), 0, nullptr, &e1));
  CHECK(counter->Add(record(out2, 24, 50), 0, nullptr, &e2));
  CHECK(counter->Add(record(out3, 24, 7), 0, nullptr, &e1));
  CHECK_FALSE(counter->Add(record(out3, 24, 1000), 0, nullptr, nullptr));  // its entry not recorded
  AggTable table = counter->Table("g:f__return");
  CHECK(table.hits == 3);
  CHECK(FormatTable(table, *spec) ==
        "g:f__return: 3 hits\n"
        "  count  hits  sum(retval)\n"
        "   4096     2          107\n"
        "    512     1           50\n");
}
