// SPDX-License-Identifier: GPL-2.0-or-later
//
// Go and Rust programs traced for real (uprobes): the fixtures of
// tests/fixtures/lang, built by Debian's go and rustc, each printing what
// its functions were given and returned, and the records must equal it.
#include <algorithm>

#include "e2e_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

// Go's and Rust's programs (tests/fixtures/lang), each printing what its
// functions were given: the records equal it, by DWARF names, members
// (a Go string's .len, a Rust &str's .length) and, for Go, $argN in Go's
// register ABI (Serve's receiver, path's pointer and length, then n).
TEST_CASE("trace: Go and Rust functions' arguments equal what the programs printed") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("lang");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  for (std::string name : {"gofx", "gofx_noopt"}) {
    INFO(name);
    auto [trace, out] = TraceFixture(name, dir,
                                     {group + ":serve=main.(*Server).Serve n plen=path.len",
                                      group + ":raw=main.(*Server).Serve argn=$arg4 alen=$arg3",
                                      group + ":handle=main.handle count price=it.Price nlen=it.Name.len"});
    CHECK(Values(trace, "n") == std::vector<std::string>{"3", "3", "3"});
    CHECK(Values(trace, "argn") == std::vector<std::string>{"0x3", "0x3", "0x3"});
    CHECK(Values(trace, "plen") == std::vector<std::string>{"6", "0", "300"});
    CHECK(Values(trace, "alen") == std::vector<std::string>{"0x6", "0x0", "0x12c"});
    CHECK(Values(trace, "count") == std::vector<std::string>{"2"});
    CHECK(Values(trace, "price") == std::vector<std::string>{"7"});
    CHECK(Values(trace, "nlen") == std::vector<std::string>{"5"});
    CHECK(out.find("handle name=\"apple\" price=7 tags=\"ab\" count=2\n") != std::string::npos);
    CheckNothingLeft(tracefs, group);
  }
  for (std::string name : {"rsfx_O0", "rsfx_O2", "rsfx_v0"}) {
    INFO(name);
    auto [trace, out] = TraceFixture(name, dir, {group + ":add=rsfx::shop::Cart::add price nlen=name.length"});
    CHECK(Values(trace, "price") == std::vector<std::string>{"5", "5", "5"});
    CHECK(Values(trace, "nlen") == std::vector<std::string>{"4", "0", "300"});
    CHECK(out.find("add name=\"pear\" price=5\n") != std::string::npos);
    CheckNothingLeft(tracefs, group);
  }
}

TEST_CASE("trace: Go and Rust strings and slices cut at their length equal what the programs printed") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("lstr");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  for (std::string name : {"gofx", "gofx_noopt"}) {
    INFO(name);
    auto [trace, out] = TraceFixture(name, dir,
                                     {group + ":serve=main.(*Server).Serve path short=path:u8[3]",
                                      group + ":handle=main.handle nm=it.Name tags=it.Tags"});
    CHECK(Values(trace, "path") == PrintedCut(out, "Serve path=", 64));
    CHECK(PrintedCut(out, "Serve path=", 64).size() == 3);
    CHECK(Values(trace, "path__len") == std::vector<std::string>{"6", "0", "300"});
    CHECK(Values(trace, "short") == PrintedCut(out, "Serve path=", 3));
    CHECK(Values(trace, "nm") == PrintedCut(out, "handle name=", 64));
    CHECK(Values(trace, "tags") == std::vector<std::string>{"\"ab\""});
    CheckNothingLeft(tracefs, group);
  }
  for (std::string name : {"rsfx_O0", "rsfx_O2", "rsfx_v0"}) {
    INFO(name);
    auto [trace, out] = TraceFixture(
        name, dir,
        {group + ":add=rsfx::shop::Cart::add name short=name:u8[2]", group + ":greet=rsfx::greet name bytes owned"});
    std::vector<std::string> names = PrintedCut(out, "add name=", 64);
    CHECK(names.size() == 3);
    std::vector<std::string> recorded;
    for (const std::string& v : Values(trace, "name"))
      if (v != "\"bob\"") recorded.push_back(v);
    CHECK(recorded == names);
    CHECK(Values(trace, "short") == PrintedCut(out, "add name=", 2));
    CHECK(trace.find(" name=\"bob\" name__len=3 bytes=\"xyz\" bytes__len=3 owned=\"owned string\" owned__len=12\n") !=
          std::string::npos);
    CHECK(out.find("greet name=\"bob\" bytes=[120, 121, 122] owned=\"owned string\"\n") != std::string::npos);
    CheckNothingLeft(tracefs, group);
  }
}

// FUNC%return on Go: a probe on each return instruction, never a
// uretprobe (whose return address on a goroutine's stack Go would copy
// and unwind). 40 goroutines recurse 100 to 139 deep with 256-byte frames,
// so Go grows (copies) their stacks while the probes fire: the program
// must exit 0, and work's results equal what it printed.
TEST_CASE("trace: Go FUNC%return at return instructions while goroutines' stacks grow") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("gret");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  for (std::string name : {"gostack", "gostack_noopt"}) {
    INFO(name);
    auto [trace, out] = TraceFixture(name, dir,
                                     {group + ":work=main.work%return $retval:s64",
                                      group + ":depth=main.depth%return $retval:s64", group + ":enter=main.depth n"});
    std::vector<std::string> printed, recorded;
    for (const std::string& line : SplitLines(out))
      if (line.starts_with("work(")) printed.push_back(line.substr(line.find('=') + 1));
    size_t depth_returns = 0, depth_entries = 0;
    for (const std::string& line : SplitLines(trace)) {
      if (line.find(" " + group + ":work: ") != std::string::npos) recorded.push_back(Values(line, "retval").at(0));
      depth_returns += line.find(" " + group + ":depth") != std::string::npos;
      depth_entries += line.find(" " + group + ":enter: ") != std::string::npos;
    }
    std::sort(printed.begin(), printed.end());
    std::sort(recorded.begin(), recorded.end());
    CHECK(printed.size() == 40);
    CHECK(recorded == printed);
    CHECK(depth_returns == 4820);  // 101 + 102 + ... + 140 returns of depth
    // Each call entered once, also those that grew the stack (the morestack
    // path jumps back to the function's first instruction, before the probe).
    CHECK(depth_entries == 4820);
    CheckNothingLeft(tracefs, group);
  }
}

// A Go return's $argN, which no kernel keeps for it: fetched by a hidden
// entry, paired by goroutine and by the stack pointer's distance from the
// top of the goroutine's stack, which Go moves while the calls are open.
// depth(n) returns n and work(id) 2 * (100 + id): every return's argument
// is its own call's, none unknown.
TEST_CASE("trace: Go returns' arguments, kept by the entry, while goroutines' stacks grow") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("gkept");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  auto [trace, out] = TraceFixture("gostack", dir,
                                   {group + ":depth=main.depth%return $arg1:s64 $retval:s64",
                                    group + ":work=main.work%return $arg1:s64 $retval:s64"});
  size_t depths = 0, works = 0;
  for (const std::string& line : SplitLines(trace)) {
    std::vector<std::string> arg = Values(line, "arg1"), retval = Values(line, "retval");
    REQUIRE(arg.size() == 1);
    REQUIRE(retval.size() == 1);
    if (line.find(" " + group + ":depth") != std::string::npos) {
      ++depths;
      CHECK(arg[0] == retval[0]);
    } else {
      ++works;
      CHECK(retval[0] == std::to_string(2 * (100 + std::stol(arg[0]))));
    }
  }
  CHECK(depths == 4820);
  CHECK(works == 40);
  CheckNothingLeft(tracefs, group);
}

// trace --latency on Go's FUNC%return: each call timed from its entry to
// the return instruction it left by, paired by its goroutine (40 of them,
// on however many threads Go runs them).
TEST_CASE("trace: --latency on a Go function's returns, one per call, paired by goroutine") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("glat");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  std::string bin = FixturePath("gostack");
  int status = Wait(Spawn({kKprobectl, "trace", "--latency", "-o", dir / "l.txt", "-x", bin, "--probe",
                           group + ":work=main.work%return $retval:s64", "--", bin},
                          dir / "out", dir / "err"));
  CHECK(status == 0);
  std::string err = ReadFile(dir / "err");
  INFO(err);
  auto lines = SplitLines(ReadFile(dir / "l.txt"));
  CHECK(lines.size() == 40);
  for (const std::string& line : lines) CHECK(line.find(" latency=") != std::string::npos);
  CHECK(err.find("\nmain.work: 40 calls, min ") != std::string::npos);
  CheckNothingLeft(tracefs, group);
}

// FUNC%return on Go with the results where Go's ABI puts them at each
// return instruction: by name, ~rN and $retval, typed by the DWARF
// (signed, unsigned, bool, strings cut at their length), members of a
// struct in registers and of one on the stack, a tenth integer on the
// stack, results on the stack after an argument there; functions with
// several return instructions. Optimised and -N -l builds.
TEST_CASE("trace: Go results at every return instruction equal what the program printed") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("gres");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  for (std::string name : {"gorets", "gorets_noopt"}) {
    INFO(name);
    auto [trace, out] = TraceFixture(
        name, dir,
        {group + ":lookup=main.lookup%return n=$retval tab=~r1.tab", group + ":pair=main.pair%return $retval i=~r1",
         group + ":named=main.named%return nn=n s etab=err.tab",
         group + ":point=main.point%return x=~r0.X y=~r0.Y pname=~r0.Name", group + ":ratio=main.ratio%return m=~r1",
         group + ":small=main.small%return ok b u", group + ":wide=main.wide%return i j",
         group + ":row=main.row%return ra=~r0.A rj=~r0.J", group + ":shifted=main.shifted%return r0=r[0] r1=r[1] sm=m",
         group + ":spread=main.spread[...]%return g0=r[0] g1=r[1] k", group + ":blank=main.blank%return bn=n",
         group + ":div=main.div%return q dtab=err.tab"});
    INFO(trace);
    INFO(out);
    auto nil = [](const std::vector<std::string>& tabs) {
      std::vector<std::string> nils;
      for (const std::string& t : tabs) nils.push_back(t == "0x0" ? "true" : "false");
      return nils;
    };
    CHECK(Values(trace, "n") == Printed(out, "lookup ", "n"));
    CHECK(nil(Values(trace, "tab")) == Printed(out, "lookup ", "nilerr"));
    CHECK(Values(trace, "retval") == Printed(out, "pair ", "s"));
    CHECK(Values(trace, "retval__len") == std::vector<std::string>{"3"});
    CHECK(Values(trace, "nn") == Printed(out, "named ", "n"));
    CHECK(Values(trace, "s") == Printed(out, "named ", "s"));
    CHECK(nil(Values(trace, "etab")) == Printed(out, "named ", "nilerr"));
    CHECK(Values(trace, "x") == Printed(out, "point ", "x"));
    CHECK(Values(trace, "y") == Printed(out, "point ", "y"));
    CHECK(Values(trace, "pname") == Printed(out, "point ", "name"));
    CHECK(Values(trace, "m") == Printed(out, "ratio ", "m"));
    CHECK(Values(trace, "ok") == std::vector<std::string>{Printed(out, "small ", "ok").at(0) == "true" ? "1" : "0"});
    CHECK(Values(trace, "b") == Printed(out, "small ", "b"));
    CHECK(Values(trace, "u") == Printed(out, "small ", "u"));
    CHECK(Values(trace, "i") ==
          std::vector<std::string>{Printed(out, "pair ", "i").at(0), Printed(out, "wide ", "i").at(0)});
    CHECK(Values(trace, "j") == Printed(out, "wide ", "j"));
    CHECK(Values(trace, "ra") == Printed(out, "row ", "a"));
    CHECK(Values(trace, "rj") == Printed(out, "row ", "j"));
    CHECK(Values(trace, "r0") == Printed(out, "shifted ", "r0"));
    CHECK(Values(trace, "r1") == Printed(out, "shifted ", "r1"));
    CHECK(Values(trace, "sm") == Printed(out, "shifted ", "m"));
    CHECK(Values(trace, "g0") == Printed(out, "spread ", "r0"));
    CHECK(Values(trace, "g1") == Printed(out, "spread ", "r1"));
    CHECK(Values(trace, "k") == Printed(out, "spread ", "k"));
    CHECK(Values(trace, "bn") == Printed(out, "blank ", "n"));
    // div's own returns only: optimised, main's call of it is inlined (and
    // main's returns no returns of div's), -N -l inlines nothing.
    auto div_q = Printed(out, "divide ", "q"), div_nil = Printed(out, "divide ", "nilerr");
    if (name == "gorets_noopt") {
      div_q.insert(div_q.begin(), Printed(out, "div ", "q").at(0));
      div_nil.insert(div_nil.begin(), Printed(out, "div ", "nilerr").at(0));
    }
    CHECK(Values(trace, "q") == div_q);
    CHECK(nil(Values(trace, "dtab")) == div_nil);
    // Several return instructions: each of named's three fired, once.
    for (std::string event : {":named: ", ":named_1: ", ":named_2: ", ":lookup: ", ":lookup_1: "})
      CHECK(trace.find(group + event) != std::string::npos);
    CheckNothingLeft(tracefs, group);
  }
}

// Arguments at a Go function's entry where Go's ABI puts them (goargs.go):
// a []byte whose optimised DWARF gave its length the pointer's register,
// struct members after padding, ints on the stack, a variadic slice's
// length, strings through a generic function's shapes, the elements of an
// array of strings at a return, $params' strings whole; optimised and -N -l.
TEST_CASE("trace: Go arguments at the entry equal what the program printed, where Go's DWARF is wrong") {
  std::string tracefs = RealTracefsOrSkip();
  std::string group = UniqueGroup("garg");
  GroupCleaner cleaner(tracefs, group);
  TempDir dir;
  for (std::string name : {"goargs", "goargs_noopt"}) {
    INFO(name);
    auto [trace, out] =
        TraceFixture(name, dir,
                     {group + ":sum=main.checksum data seed",
                      group + ":greet=main.greet c.Name c.Home.City c.Home.Zip vip=c.VIP age=c.Age times",
                      group + ":many=main.many a1 a9 a10 a11 a12", group + ":total=main.total $params",
                      group + ":lookup=main.Lookup[...] k def", group + ":pair=main.pair%return r[0] r[1] rn=n"});
    INFO(trace);
    INFO(out);
    CHECK(Values(trace, "data") ==
          std::vector<std::string>{"\"a\\x00b\\xff\"", PrintedCut(out, "checksum data=", 64)[1]});
    CHECK(Values(trace, "data__len") == Printed(out, "checksum ", "len"));
    CHECK(Values(trace, "seed") == Printed(out, "checksum ", "seed"));
    CHECK(Values(trace, "Name") == Printed(out, "greet ", "name"));
    CHECK(Values(trace, "City") == Printed(out, "greet ", "city"));
    CHECK(Values(trace, "Zip") == Printed(out, "greet ", "zip"));
    CHECK(Values(trace, "vip") == std::vector<std::string>{Printed(out, "greet ", "vip").at(0) == "true" ? "1" : "0"});
    CHECK(Values(trace, "age") == Printed(out, "greet ", "age"));
    CHECK(Values(trace, "times") == Printed(out, "greet ", "times"));
    for (std::string a : {"a1", "a9", "a10", "a11", "a12"}) CHECK(Values(trace, a) == Printed(out, "many ", a));
    CHECK(Values(trace, "prefix") == Printed(out, "total ", "prefix"));
    CHECK(Values(trace, "nums_len") == Printed(out, "total ", "n"));
    // Lookup[string, int]'s k is a string, Lookup[int, string]'s def.
    CHECK(Values(trace, "k") == std::vector<std::string>{"\"a\"", "2"});
    CHECK(Values(trace, "def") == std::vector<std::string>{"0", "\"none\""});
    CHECK(Values(trace, "r") == Printed(out, "pair ", "r0"));
    CHECK(Values(trace, "r_1") == Printed(out, "pair ", "r1"));
    CHECK(Values(trace, "r_1__len") == std::vector<std::string>{"4"});
    CHECK(Values(trace, "rn") == Printed(out, "pair ", "n"));
    CheckNothingLeft(tracefs, group);
  }
}
