// SPDX-License-Identifier: GPL-2.0-or-later
//
// perf probe's spellings and what scripts written for perf expect of them
// (tools/perf/tests/shell/base_probe: test_basic, test_invalid_options,
// test_adding_kernel): which stream says what, dry runs, values options
// require, options that exclude each other, --max-probes, --filter.
// In-process, against a temporary tracefs directory.
#include <catch2/catch.hpp>

#include "kprobectl/strings.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

const char* const kOneAction =
    "  hint: one action at a time: run kprobectl once for each (several probes go in one -a/-D each, or one "
    "'add -a ... -a ...')\n";

}  // namespace

TEST_CASE("cli: perf's dry run (-n) says on stderr what add would add, and writes nothing") {
  FakeTracefs tracefs;
  std::string bin = FixturePath("target_O2");
  std::string src = FixtureSourceDir();
  WriteFile(tracefs.dir / "uprobe_events", "p:probe_target_O2/compute " + bin + ":0x0000000000001000\n");
  // The name an add with -f would give, as perf's test_adding_kernel expects.
  auto dry = RunKprobectl({"--tracefs", tracefs.path(), "-x", bin, "-n", "-f", "--add", "compute"});
  CHECK(dry.status == 0);
  CHECK(dry.out.empty());
  CHECK(dry.err == "Added new event:\n  probe_target_O2:compute_1\t(on compute@" + src + "/target.c in " + bin +
                       ")\n\nYou can now record them, e.g.:\n  kprobectl trace 'probe_target_O2:compute_1' -- "
                       "COMMAND\n  echo 1 > " +
                       tracefs.path() + "/events/probe_target_O2/compute_1/enable; cat " + tracefs.path() +
                       "/trace_pipe\n");
  CHECK(ReadFile(tracefs.dir / "uprobe_events") == "p:probe_target_O2/compute " + bin + ":0x0000000000001000\n");
  // Without -f the name is taken: the same error as add's.
  auto taken = RunKprobectl({"--tracefs", tracefs.path(), "-x", bin, "--dry-run", "add", "compute"});
  CHECK(taken.status == 1);
  CHECK(taken.err ==
        "kprobectl: error: event 'probe_target_O2:compute' already exists\n  hint: remove it with 'kprobectl del "
        "probe_target_O2:compute', name the new one with EVENT=..., or add -f to append a number\n");
  // -v shows the definitions it did not write; -q silences the account.
  auto verbose = RunKprobectl({"--tracefs", tracefs.path(), "-x", bin, "-n", "-v", "-q", "-a", "greet"});
  CHECK(verbose.out.empty());
  CHECK(WithoutIndexNote(verbose.err) == "dry run, not written: p:probe_target_O2/greet " + bin + ":0x1380\n");
}

TEST_CASE("cli: --quiet --add and --quiet --del print nothing at all") {
  // perf's test_basic "quiet switch".
  FakeTracefs tracefs;
  std::string bin = FixturePath("target_O2");
  auto add = RunKprobectl({"--tracefs", tracefs.path(), "-x", bin, "--quiet", "--add", "compute"});
  CHECK(add.status == 0);
  CHECK(add.out + add.err == "");
  auto del = RunKprobectl({"--tracefs", tracefs.path(), "--quiet", "--del", "compute"});
  CHECK(del.status == 0);
  CHECK(del.out + del.err == "");
  CHECK(ReadFile(tracefs.dir / "uprobe_events").ends_with("-:probe_target_O2/compute\n"));
}

TEST_CASE("cli: without arguments, the usage goes to stderr") {
  // perf's test_basic "usage message" reads it there.
  auto r = RunKprobectl({});
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("Usage: kprobectl [OPTIONS]") != std::string::npos);
  for (const char* word : {"--verbose", "--quiet", "--add", "--del", "--force", "--line", "--vars", "--externs",
                           "--range", "--max-probes", "--filter", "--dry-run", "--demangle-kernel", "--no-inlines",
                           "--funcs", "--exec", "--vmlinux", "--module", "--source"})
    CHECK(r.err.find(word) != std::string::npos);
  // Asked for, it is no error: stdout.
  auto help = RunKprobectl({"--help"});
  CHECK(help.status == 0);
  CHECK(help.out.find("Usage: kprobectl [OPTIONS]") != std::string::npos);
}

TEST_CASE("cli: -a, -d, -L and -V without a value are refused, naming the switch") {
  // perf's test_invalid_options "missing argument".
  for (const char* option : {"-a", "-d", "-L", "-V"}) {
    INFO(option);
    auto r = RunKprobectl({option});
    CHECK(r.status == 2);
    CHECK(r.err ==
          "kprobectl: error: switch " + std::string(option) + " requires a value\n  hint: see 'kprobectl --help'\n");
  }
  auto long_name = RunKprobectl({"--max-probes"});
  CHECK(long_name.err == "kprobectl: error: switch --max-probes requires a value\n  hint: see 'kprobectl --help'\n");
}

TEST_CASE("cli: -F and -l take no value") {
  // perf's test_invalid_options "unnecessary argument".
  FakeTracefs tracefs;
  auto funcs = RunKprobectl({"-x", FixturePath("target_O2"), "-F"});
  CHECK(funcs.status == 0);
  CHECK(funcs.err.empty());
  CHECK(SplitLines(funcs.out).size() > 5);
  auto list = RunKprobectl({"--tracefs", tracefs.path(), "-l"});
  CHECK(list.status == 0);
  CHECK(list.err.empty());
}

TEST_CASE("cli: perf's mutually exclusive options cannot be used together") {
  // perf's test_invalid_options "mutually exclusive options", every pair.
  struct Row {
    std::vector<std::string> args;
    const char* message;
  } rows[] = {
      {{"-a", "xxx", "-d", "xxx"}, "switch -d cannot be used with switch -a"},
      {{"-a", "xxx", "-L", "foo"}, "switch -L cannot be used with switch -a"},
      {{"-a", "xxx", "-V", "foo"}, "switch -V cannot be used with switch -a"},
      {{"-a", "xxx", "-l"}, "switch -l cannot be used with switch -a"},
      {{"-a", "xxx", "-F"}, "switch -F cannot be used with switch -a"},
      {{"-d", "xxx", "-L", "foo"}, "switch -L cannot be used with switch -d"},
      {{"-d", "xxx", "-V", "foo"}, "switch -V cannot be used with switch -d"},
      {{"-d", "xxx", "-l"}, "switch -l cannot be used with switch -d"},
      {{"-d", "xxx", "-F"}, "switch -F cannot be used with switch -d"},
      {{"-L", "foo", "-V", "bar"}, "switch -V cannot be used with switch -L"},
      {{"-L", "foo", "-l"}, "switch -l cannot be used with switch -L"},
      {{"-L", "foo", "-F"}, "switch -F cannot be used with switch -L"},
      {{"-V", "foo", "-l"}, "switch -l cannot be used with switch -V"},
      {{"-V", "foo", "-F"}, "switch -F cannot be used with switch -V"},
      {{"-l", "-F"}, "switch -F cannot be used with switch -l"},
      {{"-F", "-l"}, "switch -l cannot be used with switch -F"},
      {{"-D", "x", "-a", "y"}, "switch -a cannot be used with switch -D"},
      {{"line", "foo", "-a", "x"}, "the command 'line' cannot be used with switch -a"},
      {{"-l", "foo", "vfs_read"}, "a probe ('vfs_read') cannot be used with switch -l"},
  };
  for (const Row& row : rows) {
    INFO(Join(row.args, " "));
    auto r = RunKprobectl(row.args);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err == "kprobectl: error: " + std::string(row.message) + "\n" + kOneAction);
  }
  // -a before 'add' adds one more probe with it; -n and -f go with anything.
  FakeTracefs tracefs;
  auto both = RunKprobectl(
      {"--tracefs", tracefs.path(), "-x", FixturePath("target_O2"), "-n", "-f", "-a", "greet", "add", "compute"});
  CHECK(both.status == 0);
  std::string src = FixtureSourceDir(), bin = FixturePath("target_O2");
  CHECK(both.err == "Added new events:\n  probe_target_O2:greet\t(on greet@" + src + "/target.c in " + bin +
                        ")\n  probe_target_O2:compute\t(on compute@" + src + "/target.c in " + bin +
                        ")\n\nYou can now record them, e.g.:\n  kprobectl trace 'probe_target_O2:greet' -- COMMAND\n"
                        "  echo 1 > " +
                        tracefs.path() + "/events/probe_target_O2/greet/enable; cat " + tracefs.path() +
                        "/trace_pipe\n");
}

TEST_CASE("cli: --max-probes is the most probes one spec may make") {
  std::string bin = FixturePath("records_O2");
  auto over = RunKprobectl({"-x", bin, "--max-probes", "1", "-D", "tally x"});
  CHECK(over.status == 1);
  CHECK(over.err ==
        "kprobectl: error: 'tally x' makes 2 probes, more than the limit of 1\n"
        "  hint: raise the limit with --max-probes 2 (as perf's), or narrow the probe point\n");
  CHECK(RunKprobectl({"-x", bin, "--max-probes=2", "-D", "tally x"}).status == 0);
  CHECK(RunKprobectl({"-x", bin, "--max-probes", "0", "-D", "tally x"}).status == 0);  // no limit
  // perf's default, 128: libc's functions are many more.
  auto libc = RunKprobectl({"-x", "libc.so.6", "-D", "*"});
  CHECK(libc.status == 1);
  CHECK(libc.err.starts_with("kprobectl: error: '*' makes "));
  CHECK(libc.err.find(" probes, more than the limit of 128\n") != std::string::npos);
  // vars counts the places it lists too.
  auto vars = RunKprobectl({"-x", bin, "--max-probes", "1", "vars", "tally"});
  CHECK(vars.status == 1);
  CHECK(vars.err ==
        "kprobectl: error: 'tally' makes 2 probes, more than the limit of 1\n"
        "  hint: raise the limit with --max-probes 2 (as perf's), or narrow the probe point\n");
}

TEST_CASE("cli: --filter, perf's spelling of funcs' filter, and vars' variables") {
  std::string bin = FixturePath("target_O2");
  for (auto args :
       {std::vector<std::string>{"-F", "--filter", "c* & !call*"},
        std::vector<std::string>{"funcs", "--filter", "c* & !call*"},
        std::vector<std::string>{"--filter=c* & !call*", "funcs"}, std::vector<std::string>{"funcs", "c* & !call*"}}) {
    args.insert(args.begin(), {"-x", bin});
    INFO(Join(args, " "));
    auto r = RunKprobectl(args);
    CHECK(r.status == 0);
    CHECK(r.out == "compute\n");
  }
  auto two = RunKprobectl({"-x", bin, "funcs", "c*", "--filter", "g*"});
  CHECK(two.status == 2);
  CHECK(two.err == "kprobectl: error: two filters: 'c*' and --filter 'g*'\n  hint: give one\n");
  auto elsewhere = RunKprobectl({"-x", bin, "--filter", "c*", "-D", "compute"});
  CHECK(elsewhere.status == 2);
  CHECK(elsewhere.err ==
        "kprobectl: error: --filter is for funcs (-F) and vars (-V)\n"
        "  hint: trace's event filter is 'trace --filter EXPR'\n");
  auto vars = RunKprobectl({"-x", FixturePath("records_O2"), "-V", "process", "--filter", "f*"});
  CHECK(vars.status == 0);
  CHECK(vars.out == "Available variables at process\n\t@<process+0>\n\t\tint\tfactor\n");
}

TEST_CASE("cli: --demangle-kernel is accepted, and kernel names stay as funcs lists them") {
  std::string image = FixturePath("kernel_like");
  auto plain = RunKprobectl({"-k", image, "funcs", "p*"});
  auto demangled = RunKprobectl({"-k", image, "--demangle-kernel", "funcs", "p*"});
  CHECK(plain.status == 0);
  CHECK(demangled.status == 0);
  CHECK_FALSE(plain.out.empty());
  CHECK(demangled.out == plain.out);
}
