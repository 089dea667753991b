// SPDX-License-Identifier: GPL-2.0-or-later
//
// End-to-end probes resolved through DWARF, on the real uprobe_events: source
// lines, locals, struct and union members, bitfields, arrays, strings,
// globals, inlined copies and clones, at -O0 and -O2. The values the kernel
// records must be the ones the fixture prints.
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>

#include "kprobectl/strings.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

// The fixture's own account: "process id=33 len=512 ..." -> fields by the line's first word.
std::map<std::string, Fields> Printed(const std::string& output) {
  std::map<std::string, Fields> out;
  for (const std::string& line : SplitLines(output)) out[line.substr(0, line.find(' '))] = ParseFields(line);
  return out;
}

}  // namespace

TEST_CASE("dwarf: members, bitfields, strings, locals, globals, inlined copies and clones record the right values") {
  std::string tracefs = RealTracefsOrSkip();
  for (std::string fixture : {"records_O2", "records_O0"}) {
    INFO(fixture);
    std::string group = UniqueGroup(fixture == "records_O2" ? "f" : "g");
    GroupCleaner cleaner(tracefs, group);
    std::string bin = FixturePath(fixture);
    auto added = RunKprobectl(
        {"-x", bin, "-q", "-a",
         group + ":p=process id=req->id len=req->hdr.len flags=req->hdr.flags name=req->name:string code=req->code "
                 "kind=req->kind urgent=req->urgent prio=req->prio small_b=req->small_b v2=req->values[2] "
                 "pair1=req->pair[1].len label=req->label:string next_id=req->next->id factor",
         "-a", group + ":line=process;records_total* local result", "-a",
         group + ":arr=process;records_total* req->name:u8[4] req->values:s64[4] first=req->name[0]", "-a",
         group + ":sc=scale value factor", "-a",
         group + ":g=summarize records_total calls banner=records_banner:string", "-a",
         group + ":cl=clamp x limit extra", "-a", group + ":ta=tally x", "-a", group + ":ret=summarize%return $retval",
         // perf refuses this line ("sharing the address with other lines").
         "-a", group + ":m=main;*process(* id=first.id name=first.name:string len=first.pair[1].len"});
    INFO(added.err);
    REQUIRE(added.status == 0);

    TraceInstance instance(tracefs, group);
    for (const char* e : {"p", "line", "arr", "sc", "sc_1", "g", "cl", "ta", "ta_1", "ret__return", "m"})
      instance.Enable(e);
    int status = 0;
    std::string output = RunProgram({bin, "33", "512", "bravo"}, &status);
    REQUIRE(status == 0);
    auto printed = Printed(output);
    auto events = TraceEvents(instance.Lines());

    // Entry: members through a pointer, nested, anonymous union and struct,
    // bitfields, an array element, a char array and a char* as strings, a
    // second pointer hop.
    REQUIRE(events["p"].size() == 1);
    Fields p = events["p"][0];
    Fields want = printed["process"];
    CHECK(p["id"] == want["id"]);
    CHECK(p["len"] == want["len"]);
    CHECK(p["flags"] == want["flags"]);
    CHECK(p["name"] == "\"" + want["name"] + "\"");
    CHECK(p["code"] == want["code"]);
    CHECK(p["kind"] == want["kind"]);
    CHECK(p["urgent"] == want["urgent"]);
    CHECK(p["prio"] == want["prio"]);
    CHECK(p["small_b"] == want["small_b"]);
    CHECK(p["v2"] == want["values2"]);
    CHECK(p["pair1"] == want["pair1len"]);
    CHECK(p["label"] == "\"" + want["label"] + "\"");
    CHECK(p["next_id"] == want["next_id"]);
    CHECK(p["factor"] == "3");

    // A source line found by a lazy pattern, with locals.
    REQUIRE(events["line"].size() == 1);
    CHECK(events["line"][0]["local"] == want["local"]);
    CHECK(events["line"][0]["result"] == want["result"]);
    REQUIRE(events["arr"].size() == 1);
    CHECK(events["arr"][0]["name"] == "{98,114,97,118}");  // "brav"
    long id = std::stol(want["id"]);
    CHECK(events["arr"][0]["values"] == "{" + std::to_string(1000) + "," + std::to_string(1000 + id % 7) + "," +
                                            std::to_string(1000 + 2 * (id % 7)) + "," +
                                            std::to_string(1000 + 3 * (id % 7)) + "}");
    CHECK(events["arr"][0]["first"] == "'b'");

    // The inlined helper: one probe per copy, each with its caller's values.
    REQUIRE(events["sc"].size() == 1);
    REQUIRE(events["sc_1"].size() == 1);
    std::set<std::string> values{events["sc"][0]["value"], events["sc_1"][0]["value"]};
    CHECK(values == std::set<std::string>{want["local"], printed["summarize"]["flags"]});
    CHECK(events["sc"][0]["factor"] == "3");
    CHECK(events["sc_1"][0]["factor"] == "3");

    // Globals, a static, a string global.
    REQUIRE(events["g"].size() == 1);
    CHECK(events["g"][0]["records_total"] == printed["summarize"]["total"]);
    CHECK(events["g"][0]["calls"] == "1");
    CHECK(events["g"][0]["banner"] == "\"" + printed["main"]["banner"] + "\"");

    // The clone (clamp.constprop.0 at -O2) with constant-propagated parameters.
    REQUIRE(events["cl"].size() == 1);
    CHECK(events["cl"][0]["x"] == printed["summarize"]["s"]);
    CHECK(events["cl"][0]["limit"] == "50");
    CHECK(events["cl"][0]["extra"] == "7");

    // Two static tally() functions, each hit once with s.
    REQUIRE(events["ta"].size() == 1);
    REQUIRE(events["ta_1"].size() == 1);
    CHECK(events["ta"][0]["x"] == printed["summarize"]["s"]);
    CHECK(events["ta_1"][0]["x"] == printed["summarize"]["s"]);

    // A struct on main's stack, at a line perf will not probe.
    REQUIRE(events["m"].size() == 1);
    CHECK(events["m"][0]["id"] == want["id"]);
    CHECK(events["m"][0]["name"] == "\"" + want["name"] + "\"");
    CHECK(events["m"][0]["len"] == want["pair1len"]);

    REQUIRE(events["ret__return"].size() == 1);
    CHECK(events["ret__return"][0]["retval"] == printed["main"]["s"]);
  }
}

TEST_CASE("dwarf: runs that start together with an empty cache all answer, and leave one valid index") {
  // Each builds the index and renames it into place; none may see a
  // half-written file, whatever the interleaving.
  RealTracefsOrSkip();
  TempDir dir;
  ScopedEnv env("XDG_CACHE_HOME", dir.path());
  std::string bin = FixturePath("records_O2");
  const std::string spec = "process:3 req->name:string req->hdr.len";
  std::vector<int> pids;
  for (int i = 0; i < 8; ++i)
    pids.push_back(Spawn({KP_KPROBECTL_BIN, "-x", bin, "-D", spec}, dir / ("out" + std::to_string(i))));
  for (int pid : pids) CHECK(Wait(pid) == 0);
  std::string first = ReadFile(dir / "out0");
  CHECK(first.starts_with("p:probe_records_O2/process_L3 "));
  for (int i = 1; i < 8; ++i) CHECK(ReadFile(dir / ("out" + std::to_string(i))) == first);
  int status = 0;
  CHECK(RunProgram({KP_KPROBECTL_BIN, "-x", bin, "-D", spec}, &status) == first);
  CHECK(status == 0);
  auto r = RunKprobectl({"-v", "-x", bin, "-D", spec});
  CHECK(r.out == first);
  CHECK(SplitLines(r.err).at(0).starts_with("kprobectl: debuginfo index: read from " + dir.path() + "/kprobectl/"));
  size_t files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir / "kprobectl")) ++files;
  CHECK(files == 1);  // no temporary files left
}

TEST_CASE("dwarf: a function split by partial inlining fires once per call and once per return") {
  // set_irq.part.0 is entered from set_irq's head only: three calls (two
  // through inlined heads, one out of line, two taking the slow path) are
  // three entry events and one return (the out-of-line call's); probing
  // the part too made five and two.
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("s");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  std::string bin = FixturePath("partial");
  int status = Wait(Spawn({KP_KPROBECTL_BIN, "trace", "-o", dir / "trace.txt", "-x", bin, "--probe",
                           group + ":in=set_irq d", "--probe", group + ":out=set_irq%return $retval", "--", bin},
                          dir / "out", dir / "err"));
  std::string err = ReadFile(dir / "err");
  INFO(err);
  CHECK(status == 0);
  CHECK(err.find("left out set_irq.part.0: the rest of set_irq's code") != std::string::npos);
  std::string trace = ReadFile(dir / "trace.txt");
  INFO(trace);
  size_t entries = 0, returns = 0;
  for (const std::string& line : SplitLines(trace)) {
    entries += line.find(group + ":in") != std::string::npos;
    returns += line.find(group + ":out") != std::string::npos;
    CHECK(line.find("set_irq.part") == std::string::npos);
  }
  CHECK(entries == 3);
  CHECK(returns == 1);
  CHECK(trace.find("retval=6") != std::string::npos);
  CHECK(GroupDefinitions(tracefs, group).empty());
}

TEST_CASE("dwarf: members of structs split over registers and stack slots record the values the program had") {
  // tests/fixtures/pieces.c: structs passed by value in two registers (a
  // DW_OP_piece each), members of several sizes and offsets read as the
  // registers' bits, a pointer member followed, a struct whose first
  // member is in a stack slot and the others in registers, and a struct
  // passed on the stack.
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("pc");
  GroupCleaner cleaner(tracefs, group);
  std::string bin = FixturePath("pieces");
  auto added = RunKprobectl({"-x",
                             bin,
                             "-q",
                             "-a",
                             group + ":so=setopt optval.user optval.is_kernel optlen",
                             "-a",
                             group + ":tp=take_pair $params",
                             "-a",
                             group + ":ts=take_small s.x s.y",
                             "-a",
                             group + ":tq=take_ptrs q.p->weight q.n",
                             "-a",
                             group + ":tt=take_text t.v[1] t.v[3] t.hi t.len",
                             "-a",
                             group + ":tu=take_quad $params",
                             "-a",
                             group + ":mx=mixed:1 s.a s.b s.c",
                             "-a",
                             group + ":st=stacked $params",
                             "-a",
                             group + ":tn=take_nested o.half o.half.hi o.tail"});
  INFO(added.err);
  REQUIRE(added.status == 0);
  TraceInstance instance(tracefs, group);
  for (const char* e : {"so", "tp", "ts", "tq", "tt", "tu", "mx", "st", "tn"}) instance.Enable(e);
  int status = 0;
  std::string output = RunProgram({bin}, &status);
  REQUIRE(status == 0);
  auto printed = Printed(output);
  auto events = TraceEvents(instance.Lines());

  REQUIRE(events["so"].size() == 1);
  CHECK(events["so"][0]["user"] == printed["setopt"]["user"]);  // %p and x64 print alike: 0x...
  CHECK(events["so"][0]["is_kernel"] == printed["setopt"]["is_kernel"]);
  CHECK(events["so"][0]["optlen"] == printed["setopt"]["optlen"]);
  REQUIRE(events["tp"].size() == 1);
  for (const char* m : {"a", "b", "c", "d", "e", "f"})
    CHECK(events["tp"][0]["p_" + std::string(m)] == printed["take_pair"][m]);
  REQUIRE(events["ts"].size() == 1);
  CHECK(events["ts"][0]["x"] == printed["take_small"]["x"]);
  // y, an int 4 bytes into RDI, is read as a bitfield (b32@32/64), which
  // the kernel prints unsigned: -1 is 4294967295.
  CHECK(static_cast<uint32_t>(std::stoul(events["ts"][0]["y"])) ==
        static_cast<uint32_t>(std::stoi(printed["take_small"]["y"])));
  REQUIRE(events["tq"].size() == 1);
  CHECK(events["tq"][0]["weight"] == printed["take_ptrs"]["weight"]);
  CHECK(events["tq"][0]["n"] == printed["take_ptrs"]["n"]);
  REQUIRE(events["tt"].size() == 1);
  CHECK(events["tt"][0]["v"] == printed["take_text"]["v1"]);
  CHECK(events["tt"][0]["v_1"] == printed["take_text"]["v3"]);
  CHECK(events["tt"][0]["hi"] == printed["take_text"]["hi"]);
  CHECK(events["tt"][0]["len"] == printed["take_text"]["len"]);
  REQUIRE(events["tu"].size() == 1);
  CHECK(events["tu"][0]["q_a"] == printed["take_quad"]["a"]);
  CHECK(events["tu"][0]["q_in_x"] == printed["take_quad"]["x"]);
  CHECK(events["tu"][0]["q_in_y"] == printed["take_quad"]["y"]);
  CHECK(events["tu"][0]["q_hi"] == printed["take_quad"]["hi"]);
  CHECK(events["tu"][0]["q_z"] == printed["take_quad"]["z"]);
  REQUIRE(events["mx"].size() == 1);
  CHECK(events["mx"][0]["a"] == printed["mixed"]["a"]);
  CHECK(events["mx"][0]["b"] == printed["mixed"]["b"]);
  CHECK(events["mx"][0]["c"] == printed["mixed"]["c"]);
  // A 16-byte struct passed on the stack: its members in the stack slots.
  REQUIRE(events["st"].size() == 1);
  CHECK(events["st"][0]["optlen_user"] == printed["stacked"]["user"]);
  CHECK(events["st"][0]["optlen_is_kernel"] == printed["stacked"]["is_kernel"]);
  CHECK(events["st"][0]["e"] == printed["stacked"]["e"]);
  // A nested struct in one piece, whole (x32) and by a member.
  REQUIRE(events["tn"].size() == 1);
  CHECK(events["tn"][0]["half"] == printed["take_nested"]["half"]);
  CHECK(events["tn"][0]["hi"] == printed["take_nested"]["hi"]);
  CHECK(events["tn"][0]["tail"] == printed["take_nested"]["tail"]);
}
