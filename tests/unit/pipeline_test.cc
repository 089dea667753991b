// SPDX-License-Identifier: GPL-2.0-or-later
//
// Every command resolves a probe point the same way: the places -D would
// probe, trace --probe would probe (its dry run), and vars lists are the
// same, clones, inlined copies, static duplicates, split parts and
// unoptimized prologues included; and every line `line` numbers is one -D
// can probe.
#include <catch2/catch.hpp>
#include <filesystem>
#include <set>

#include "kprobectl/elf_image.h"
#include "kprobectl/strings.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

// A definition's target as FUNC+OFF (decimal), from the fixture's symbols.
std::string PlaceOf(const ElfImage& image, const std::string& definition) {
  std::string target = SplitWords(definition)[1];
  std::optional<uint64_t> address;
  if (size_t colon = target.rfind(":0x"); colon != std::string::npos) {
    address = image.VirtualAddress(*ParseUnsigned(target.substr(colon + 1)));
  } else {
    size_t plus = target.find('+');
    const ElfSymbol* base = image.Find(target.substr(0, plus));
    if (base) address = base->value + *ParseUnsigned(target.substr(plus + 1));
  }
  REQUIRE(address);
  const ElfSymbol* f = image.FunctionAt(*address);
  REQUIRE(f);
  return f->name + "+" + std::to_string(*address - f->value);
}

struct Case {
  std::string fixture, spec;
};

std::vector<std::string> Args(const Case& c, std::vector<std::string> rest) {
  std::vector<std::string> args = {c.fixture.starts_with("kernel") ? "-k" : "-x", FixturePath(c.fixture)};
  args.insert(args.end(), rest.begin(), rest.end());
  return args;
}

}  // namespace

TEST_CASE("pipeline: -D, trace --probe and vars find the same places") {
  FakeTracefs tracefs;
  const Case cases[] = {
      {"records_O2", "process req->id"},
      {"records_O2", "scale value"},
      {"records_O2", "clamp.constprop.0 x"},
      {"records_O2", "tally x"},
      {"records_O2", "process:3 local"},
      {"records_O2", "records.c:59 req->id"},
      {"records_O0", "process req->id"},
      {"records_O0", "scale value"},
      {"split", "split_work code"},
      {"split", "release b"},
      {"split", "clampi v"},
      {"split", "split_work:4 it"},
      {"kernel_like", "process req->id"},
      {"kernel_like", "tally x"},
      {"kernel_like", "clamp.constprop.0 x"},
      {"kernel_split", "split_work:4 it"},
      {"partial", "set_irq d"},
      {"kernel_weak", "weak_allowed src"},
  };
  for (const Case& c : cases) {
    INFO(c.fixture << ": " << c.spec);
    auto image = ElfImage::Open(FixturePath(c.fixture));
    REQUIRE(image);
    auto defined = RunKprobectl(Args(c, {"--tracefs", tracefs.dir.path(), "-D", c.spec}));
    INFO(defined.err);
    REQUIRE(defined.status == 0);
    auto traced = RunKprobectl(Args(c, {"--tracefs", tracefs.dir.path(), "trace", "-n", "--probe", c.spec}));
    REQUIRE(traced.status == 0);
    // The same definitions, names and all: one resolver.
    CHECK(traced.out.starts_with(defined.out));
    std::set<std::string> places;
    for (const std::string& line : SplitLines(defined.out)) places.insert(PlaceOf(*image, line));
    std::string point = c.spec.substr(0, c.spec.find(' '));
    auto vars = RunKprobectl(Args(c, {"vars", point}));
    REQUIRE(vars.status == 0);
    std::set<std::string> listed;
    for (const std::string& line : SplitLines(vars.out))
      if (line.starts_with("\t@<")) listed.insert(line.substr(3, line.find('>') - 3));
    CHECK(listed == places);
  }
}

TEST_CASE("pipeline: a split-off part is no copy of its function, but an explicit name or a line in it is probed") {
  auto image = ElfImage::Open(FixturePath("partial"));
  REQUIRE(image);
  const ElfSymbol* part = image->Find("set_irq.part.0");
  REQUIRE(part);  // gcc 12 -O2 split it
  for (std::string spec : {"set_irq $params", "set_irq%return $retval"}) {
    INFO(spec);
    auto r = RunKprobectl({"-x", FixturePath("partial"), "-D", spec});
    REQUIRE(r.status == 0);
    auto lines = SplitLines(r.out);
    REQUIRE_FALSE(lines.empty());
    for (const std::string& line : lines) CHECK(PlaceOf(*image, line).find(".part") == std::string::npos);
    CHECK(r.err ==
          "kprobectl: left out set_irq.part.0: the rest of set_irq's code, split off by gcc and entered from its "
          "head only; a call of set_irq begins, and is probed, at the head\n");
  }
  auto named = RunKprobectl({"-x", FixturePath("partial"), "-D", "set_irq.part.0"});
  REQUIRE(named.status == 0);
  CHECK(PlaceOf(*image, named.out) == "set_irq.part.0+0");
  auto line = RunKprobectl({"-x", FixturePath("partial"), "-D", "set_irq:6"});  // the printf, in the part
  REQUIRE(line.status == 0);
  CHECK(PlaceOf(*image, line.out).starts_with("set_irq.part.0+"));
}

TEST_CASE("pipeline: every line that line numbers, -D can probe") {
  for (const Case& c :
       {Case{"records_O2", "process"}, Case{"records_O0", "process"}, Case{"split", "split_work"},
        Case{"split", "release"}, Case{"records_O2", "clamp.constprop.0"}, Case{"kernel_like", "process"}}) {
    INFO(c.fixture << ": line " << c.spec);
    auto listing = RunKprobectl(Args(c, {"line", c.spec}));
    REQUIRE(listing.status == 0);
    size_t numbered = 0;
    for (const std::string& line : SplitLines(listing.out)) {
      auto words = SplitWords(line);
      if (line.starts_with("<") || words.empty() || !ParseUnsigned(words[0]) || line[0] != ' ' || line[6] == ' ')
        continue;
      ++numbered;
      auto defined = RunKprobectl(Args(c, {"-D", c.spec + ":" + words[0]}));
      INFO(c.spec + ":" + words[0] << " " << defined.err);
      CHECK(defined.status == 0);
    }
    CHECK(numbered >= 2);
  }
}

TEST_CASE("pipeline: --fprobe folds a function's places into one fprobe per name") {
  std::string bin = FixturePath("kernel_like");
  auto run = [&](const std::string& spec) { return RunKprobectl({"--no-cache", "-k", bin, "--fprobe", "-D", spec}); };
  auto entry = run("process req->id");
  CHECK(entry.status == 0);
  // fprobes read no registers: the arguments are $argN.
  CHECK(entry.out == "f:probe/process process id=+0($arg1):s32\n");
  auto exit = run("process%return $retval");
  CHECK(exit.out == "f:probe/process__return process%return retval=$retval:s32\n");
  auto told = RunKprobectl({"--no-cache", "-k", bin, "--fprobe", "--maxactive", "8", "-D", "process%return"});
  CHECK(told.out == "f8:probe/process__return process%return\n");
  auto statics = run("tally x");  // two static functions named tally, x in %di in both
  CHECK(statics.out == "f:probe/tally tally x=$arg1:s32\n");
  auto clone = run("clamp.constprop.0 x");
  CHECK(clone.out == "f:probe/clamp clamp.constprop.0 x=$arg1:s32\n");
  auto reg = run("process %r12");
  CHECK(reg.err ==
        "kprobectl: error: 'r12' is in register %r12, which an fprobe cannot read (only the arguments at entry, "
        "$retval at return, and the stack)\n  hint: leave --fprobe out: kprobes read every register\n");
  // At the return, the argument the kernel kept at the entry ($argN).
  auto at_return = run("process%return req->id");
  CHECK(at_return.out == "f:probe/process__return process%return id=+0($arg1):s32\n");
  auto inlined = run("scale value");
  CHECK(inlined.status != 0);
  CHECK(inlined.err ==
        "kprobectl: error: 'scale' exists only as inlined copies, which fprobes cannot probe\n"
        "  hint: leave --fprobe out: kprobes probe inlined copies\n");
  auto line = run("process:3 local");
  CHECK(line.err ==
        "kprobectl: error: 'process:3': an fprobe probes a function's entry or return only\n"
        "  hint: probe FUNC or FUNC%return with --fprobe, or leave --fprobe out for lines and offsets\n");
  auto user = RunKprobectl({"--no-cache", "-x", FixturePath("target_O2"), "--fprobe", "-D", "compute"});
  CHECK(user.err == "kprobectl: error: --fprobe is for kernel functions\n  hint: user-space probes are uprobes\n");
}

TEST_CASE("pipeline: tp:NAME is a tracepoint probe with the tracepoint's arguments by name") {
  std::string bin = FixturePath("kernel_like");
  auto run = [&](std::vector<std::string> args) {
    std::vector<std::string> all{"--no-cache", "-k", bin};
    all.insert(all.end(), args.begin(), args.end());
    return RunKprobectl(all);
  };
  auto members = run({"-D", "tp:sched_switch prev->pid next->comm:string task=next $comm"});
  CHECK(members.err == "");
  CHECK(members.out ==
        "t:probe/sched_switch sched_switch pid=prev->pid comm=next->comm:string task=next comm_1=$comm\n");
  // With other probes and with --fprobe (which is for functions), it stays a t: probe.
  auto mixed = run({"--fprobe", "-D", "my:ev=tp:sched_switch prev", "process%return $retval"});
  CHECK(mixed.out == "t:my/ev sched_switch prev=prev\nf:probe/process__return process%return retval=$retval:s32\n");
  auto ret = run({"-D", "tp:sched_switch%return"});
  CHECK(ret.status != 0);
  CHECK(ret.err ==
        "kprobectl: error: invalid probe point: a tracepoint probe is tp:NAME; nothing follows the name\n"
        "    tp:sched_switch%return\n                   ^\n"
        "  hint: e.g. tp:sched_switch prev->pid next->comm (the kernel reads them by name through BTF)\n");
  const std::string tp_args =
      "  hint: a tracepoint probe's arguments are the tracepoint's parameters by name, with ->member and .member, or "
      "$comm\n";
  auto reg = run({"-D", "tp:sched_switch %di"});
  CHECK(reg.err ==
        "kprobectl: error: invalid argument: '%di' is not something a tracepoint probe can read\n"
        "    tp:sched_switch %di\n                    ^\n" +
            tp_args);
  auto index = run({"-D", "tp:sched_switch prev->comm[0]"});
  CHECK(index.err ==
        "kprobectl: error: invalid argument: the kernel reads a tracepoint's arguments by name, without [index]\n"
        "    tp:sched_switch prev->comm[0]\n                              ^\n" +
            tp_args);
  auto empty = run({"-D", "tp:"});
  CHECK(empty.err ==
        "kprobectl: error: invalid probe point: expected a tracepoint name after 'tp:'\n    tp:\n       ^\n"
        "  hint: a probe point is [[GROUP:]EVENT=]FUNC[@SRC][:LINE|+OFFSET|%return|;PATTERN], SRC:LINE, "
        "SRC;PATTERN, 0xADDRESS, [sdt_]PROVIDER:NAME (a USDT marker), tp:TRACEPOINT or ev:SYSTEM:EVENT\n");
  auto user = RunKprobectl({"--no-cache", "-x", FixturePath("target_O2"), "-D", "tp:sched_switch"});
  CHECK(user.err ==
        "kprobectl: error: 'tp:sched_switch' is a kernel tracepoint; -x probes user space\n"
        "  hint: leave -x out for tracepoints\n");
}
