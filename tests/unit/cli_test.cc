// SPDX-License-Identifier: GPL-2.0-or-later
//
// The whole CLI in-process, against a temporary tracefs directory: what it
// prints, what it writes, and how it fails.
#include <catch2/catch.hpp>
#include <filesystem>

#include "kprobectl/strings.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

TEST_CASE("cli: kernel probes on a kernel without kprobe_events") {
  FakeTracefs tracefs;
  auto r = RunKprobectl({"--tracefs", tracefs.path(), "add", "do_sys_open", "$arg1"});
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "kprobectl: error: this kernel has no kprobe_events (CONFIG_KPROBE_EVENTS)\n"
        "  hint: probe a user-space program with -x BINARY, or boot a kernel built with CONFIG_KPROBES=y and "
        "CONFIG_KPROBE_EVENTS=y\n");
}

TEST_CASE("cli: -D prints definitions and writes nothing") {
  FakeTracefs tracefs;
  std::string bin = FixturePath("target_O2");
  auto r = RunKprobectl(
      {"--tracefs", tracefs.path(), "-x", bin, "-D", "compute $arg1 $arg2", "-D", "compute%return $retval:s32"});
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK(r.out == "p:probe_target_O2/compute " + bin + ":0x1350 arg1=%di arg2=%si\nr:probe_target_O2/compute__return " +
                     bin + ":0x1350 retval=$retval:s32\n");
  CHECK(ReadFile(tracefs.dir / "uprobe_events").empty());
  // For the kernel with no tracefs at all.
  auto kernel = RunKprobectl({"--tracefs", tracefs.path(), "-D", "vfs_read%return $retval"});
  // Typed (":s64") where the machine's kernel has BTF, untyped without.
  CHECK((kernel.out == "r:probe/vfs_read__return vfs_read+0 retval=$retval\n" ||
         kernel.out == "r:probe/vfs_read__return vfs_read+0 retval=$retval:s64\n"));
}

TEST_CASE("cli: add writes every definition, list reads them back, perf style") {
  FakeTracefs tracefs;
  std::string bin = FixturePath("target_O2");
  auto r = RunKprobectl({"--tracefs", tracefs.path(), "-x", bin, "-a", "compute $arg1 $arg2", "-a", "helper"});
  CHECK(r.status == 0);
  CHECK(r.out.empty());  // what is said to the person goes to stderr, as perf's
  std::string written = "p:probe_target_O2/compute " + bin + ":0x1350 arg1=%di arg2=%si\np:probe_target_O2/helper " +
                        bin + ":0x1340\np:probe_target_O2/helper_1 " + bin + ":0x13b0\n";
  CHECK(ReadFile(tracefs.dir / "uprobe_events") == written);
  std::string src = FixtureSourceDir();
  CHECK(r.err ==
        "Added new events:\n"
        "  probe_target_O2:compute\t(on compute@" +
            src + "/target.c in " + bin +
            " with arg1 arg2)\n"
            "  probe_target_O2:helper\t(on helper@" +
            src + "/target.c in " + bin +
            ")\n"
            "  probe_target_O2:helper_1\t(on helper@" +
            src + "/other.c in " + bin +
            ")\n\nYou can now record them, e.g.:\n  kprobectl trace 'probe_target_O2:compute' -- COMMAND\n"
            "  echo 1 > " +
            tracefs.path() + "/events/probe_target_O2/compute/enable; cat " + tracefs.path() + "/trace_pipe\n");

  // list maps each event back to its source through the binary's DWARF.
  auto list = RunKprobectl({"--tracefs", tracefs.path(), "list"});
  CHECK(list.status == 0);
  CHECK(list.out == "  probe_target_O2:compute\t(on compute@" + src + "/target.c in " + bin +
                        " with arg1 arg2)\n"
                        "  probe_target_O2:helper\t(on helper@" +
                        src + "/target.c in " + bin +
                        ")\n"
                        "  probe_target_O2:helper_1\t(on helper@" +
                        src + "/other.c in " + bin + ")\n");
  auto filtered = RunKprobectl({"--tracefs", tracefs.path(), "-l", "probe_target_O2:help*"});
  CHECK(SplitLines(filtered.out).size() == 2);

  auto again = RunKprobectl({"--tracefs", tracefs.path(), "-x", bin, "add", "compute"});
  CHECK(again.status == 1);
  CHECK(again.err ==
        "kprobectl: error: event 'probe_target_O2:compute' already exists\n"
        "  hint: remove it with 'kprobectl del probe_target_O2:compute', name the new one with EVENT=..., "
        "or add -f to append a number\n");
  auto quiet = RunKprobectl({"--tracefs", tracefs.path(), "-x", bin, "-q", "-f", "add", "compute"});
  CHECK(quiet.status == 0);
  CHECK(quiet.out + quiet.err == "");
  CHECK(ReadFile(tracefs.dir / "uprobe_events") == written + "p:probe_target_O2/compute_1 " + bin + ":0x1350\n");
}

TEST_CASE("cli: list names the outermost of the inlined copies that begin at a probe's address, as add did") {
  // reader() is inlined in outer() after a call, and its first statement
  // is peek(), inlined too: both copies begin at outer+8 (Linux 5.10's
  // inode_permission inlined at vfs_tmpfile+27 and sb_rdonly at its start).
  FakeTracefs tracefs;
  std::string bin = FixturePath("nested_inline");
  std::string src = FixtureSourceDir() + "/nested_inline.c";
  auto add = RunKprobectl({"--tracefs", tracefs.path(), "-x", bin, "-a", "reader", "-a", "outer"});
  CHECK(add.status == 0);
  std::string events = "  probe_nested_inline:reader\t(on reader@" + src + " in " + bin + ")\n" +
                       "  probe_nested_inline:outer\t(on outer@" + src + " in " + bin + ")\n";
  CHECK(add.err == "Added new events:\n" + events +
                       "\nYou can now record them, e.g.:\n  kprobectl trace 'probe_nested_inline:reader' -- COMMAND\n"
                       "  echo 1 > " +
                       tracefs.path() + "/events/probe_nested_inline/reader/enable; cat " + tracefs.path() +
                       "/trace_pipe\n");
  auto list = RunKprobectl({"--tracefs", tracefs.path(), "list"});
  CHECK(list.status == 0);
  CHECK(list.out == events);
}

TEST_CASE("cli: list maps an arm64 kernel's return probe at the symbol, before ftrace's NOPs, to its function") {
  FakeTracefs tracefs;
  WriteFile(tracefs.dir / "kprobe_events", "p:kp/e process+8\nr:kp/e__return process+0\n");
  auto list = RunKprobectl({"--tracefs", tracefs.path(), "-k", FixturePath("arm64/kernel_like"), "list"});
  CHECK(list.status == 0);
  CHECK(list.out ==
        "  kp:e\t(on process@fixtures/records.c)\n"
        "  kp:e__return\t(on process%return@fixtures/records.c)\n");
}

TEST_CASE("cli: -v shows what is written, and how the debuginfo's names were found") {
  FakeTracefs tracefs;
  TempDir cache;
  ScopedEnv env("XDG_CACHE_HOME", cache.path());
  std::string bin = FixturePath("target_O2");
  auto r = RunKprobectl({"--tracefs", tracefs.path(), "-x", bin, "-v", "-q", "add", "compute"});
  CHECK(r.status == 0);
  // The index: the one file in the cache.
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(cache.path()))
    if (entry.is_regular_file()) files.push_back(entry.path());
  REQUIRE(files.size() == 1);
  CHECK(files[0].ends_with(".idx"));
  CHECK(r.err == "kprobectl: debuginfo index: built, written to " + files[0] + "\nwrite " + tracefs.path() +
                     "/uprobe_events: p:probe_target_O2/compute " + bin + ":0x1350\n");
  r = RunKprobectl({"--tracefs", tracefs.path(), "-x", bin, "-v", "-q", "-D", "c2=compute"});
  CHECK(r.err == "kprobectl: debuginfo index: read from " + files[0] + "\n");
  r = RunKprobectl({"--tracefs", tracefs.path(), "-x", bin, "-v", "-q", "--no-cache", "-D", "c3=compute"});
  CHECK(r.err == "kprobectl: debuginfo index: none; each name found by a scan of " + bin + "\n");
}

TEST_CASE("cli: del refuses enabled events, -f disables them first") {
  FakeTracefs tracefs;
  WriteFile(tracefs.dir / "uprobe_events", "p:probe_x/a /bin/true:0x0000000000001000\n");
  std::filesystem::create_directories(tracefs.dir / "events/probe_x/a");
  WriteFile(tracefs.dir / "events/probe_x/a/enable", "1\n");
  auto refused = RunKprobectl({"--tracefs", tracefs.path(), "del", "probe_x:*"});
  CHECK(refused.status == 1);
  CHECK(refused.err ==
        "kprobectl: error: enabled, so not deleted: probe_x:a\n"
        "  hint: stop the tracing session that uses them, or add -f to disable them first\n");
  CHECK(ReadFile(tracefs.dir / "uprobe_events") == "p:probe_x/a /bin/true:0x0000000000001000\n");
  auto forced = RunKprobectl({"--tracefs", tracefs.path(), "-d", "a", "-f"});
  CHECK(forced.status == 0);
  CHECK(forced.out.empty());
  CHECK(forced.err == "Removed event: probe_x:a\n");
  CHECK(ReadFile(tracefs.dir / "events/probe_x/a/enable") == "0");
  // A plain directory keeps what is appended: the deletion line is there.
  CHECK(ReadFile(tracefs.dir / "uprobe_events").ends_with("-:probe_x/a\n"));
  WriteFile(tracefs.dir / "uprobe_events", "");
  auto none = RunKprobectl({"--tracefs", tracefs.path(), "del", "nosuch:*"});
  CHECK(none.status == 1);
  CHECK(none.err ==
        "kprobectl: error: no probe event matches 'nosuch:*'\n  hint: see the events with 'kprobectl list'\n");
}

TEST_CASE("cli: funcs lists a binary's functions, with perf's filters") {
  std::string bin = FixturePath("target_O2");
  auto all = RunKprobectl({"-x", bin, "funcs"});
  CHECK(all.status == 0);
  auto names = SplitLines(all.out);
  for (const char* name : {"call_helper_here", "compute", "greet", "helper", "main", "many_args"})
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
  for (const std::string& name : names) CHECK_FALSE(name.starts_with("_"));
  auto filtered = RunKprobectl({"-x", bin, "-F", "c* & !call*"});
  CHECK(filtered.out == "compute\n");
  auto bad = RunKprobectl({"-x", bin, "funcs", "(c*"});
  CHECK(bad.status == 1);
  CHECK(bad.err ==
        "kprobectl: error: invalid filter: expected ')'\n    (c*\n       ^\n"
        "  hint: combine globs with '!', '&', '|' and parentheses, e.g. 'vfs_* & !vfs_read'\n");
}

TEST_CASE("cli: usage errors and bad binaries") {
  auto unknown = RunKprobectl({"--bogus"});
  CHECK(unknown.status == 2);
  CHECK(unknown.err ==
        "kprobectl: error: The following argument was not expected: --bogus\n  hint: see 'kprobectl --help'\n");
  auto missing = RunKprobectl({"-x", "/nonexistent/demo", "-D", "main"});
  CHECK(missing.status == 1);
  CHECK(missing.err ==
        "kprobectl: error: cannot find the binary '/nonexistent/demo'\n"
        "  hint: give -x a path to an executable or a shared library\n");
  auto syntax = RunKprobectl({"-x", FixturePath("target_O2"), "-D", "compute+x"});
  CHECK(syntax.status == 1);
  CHECK(syntax.err ==
        "kprobectl: error: invalid probe point: expected a byte offset after '+' (decimal or 0x hex)\n"
        "    compute+x\n"
        "            ^\n"
        "  hint: a probe point is [[GROUP:]EVENT=]FUNC[@SRC][:LINE|+OFFSET|%return|;PATTERN], "
        "SRC:LINE, SRC;PATTERN, 0xADDRESS, [sdt_]PROVIDER:NAME (a USDT marker), tp:TRACEPOINT or ev:SYSTEM:EVENT\n");
  auto help = RunKprobectl({"--help"});
  CHECK(help.status == 0);
  CHECK(help.out.find("add") != std::string::npos);
  auto version = RunKprobectl({"--version"});
  CHECK(version.status == 0);
  // The whole text, with libdw's version (the build machine's) as V.
  std::string text = version.out;
  std::size_t libdw = text.find("through libdw ");
  REQUIRE(libdw != std::string::npos);
  libdw += std::string_view("through libdw ").size();
  text.replace(libdw, text.find(' ', libdw) - libdw, "V");
  CHECK(text ==
        "kprobectl 0.1.0\n"
        "architectures: x86-64, arm64 (each target's own, from its ELF machine or the running kernel's)\n"
        "probes: kprobes, kretprobes, fprobes (--fprobe), tracepoint probes (tp:), event probes (ev:), uprobes, "
        "uretprobes, USDT markers with semaphores, boot-time definitions (--cmdline, --bootconfig); tracefs "
        "kprobe_events, uprobe_events, dynamic_events; each kernel feature as the kernel's tracefs README and config "
        "say\n"
        "user space: C, C++ (demangled names, overloads), Go (results by name, goroutines), Rust (demangled names, "
        "strings); binaries in containers (--target-ns)\n"
        "debuginfo: DWARF 2-5 through libdw V (split functions, inlined copies, clones), index cache, debuginfod "
        "(when DEBUGINFOD_URLS is set); kernel BTF through libbpf when there is no DWARF (--btf)\n"
        "kernel modules: .ko, .ko.xz, .ko.zst, also before they load; read against the kernel they were built for\n"
        "trace: libtracefs and libtraceevent (text, JSON, latency, stacks)\n"
        "hist: counts, sums and log2 latencies, in the kernel (hist triggers, synthetic events) where it can, else "
        "in kprobectl\n"
        "serve: the hist aggregations as Prometheus metrics (libmicrohttpd, loaded when serve runs)\n");
}

TEST_CASE("cli: a binary whose path has a blank cannot be probed") {
  TempDir dir;
  std::filesystem::create_directories(dir / "my dir");
  std::filesystem::copy_file(FixturePath("target_O2"), dir / "my dir/target");
  auto r = RunKprobectl({"-x", dir / "my dir/target", "-D", "compute"});
  CHECK(r.status == 1);
  CHECK(r.err == "kprobectl: error: the path '" + (dir / "my dir/target") +
                     "' has a blank, which uprobe_events cannot take\n"
                     "  hint: probe it through a symbolic link whose path has no blanks\n");
}

TEST_CASE("cli: a line whose code starts with a header's inline function belongs to the function of its file") {
  // header_inline.c:10 is `result = doubled(&seed)` in caller(): its first
  // instruction is doubled()'s, declared in header_inline.h. The probe is
  // caller's line 2, not doubled's line 7 (10 minus doubled's declaration).
  std::string bin = FixturePath("header_inline");
  for (const char* cache : {"--no-cache", "-q"}) {
    auto r = RunKprobectl({cache, "-x", bin, "-D", "header_inline.c:10"});
    CHECK(r.status == 0);
    CHECK(r.out == "p:probe_header_inline/caller_L2 " + bin + ":0x1150\n");
  }
}

TEST_CASE("cli: funcs through BTF says why it could not read available_filter_functions, and what that means") {
  FakeTracefs tracefs;
  std::string btf = FixturePath("kernel_btf.btf");
  // No such file: a kernel without dynamic ftrace.
  auto missing = RunKprobectl({"--tracefs", tracefs.path(), "--btf", btf, "funcs", "btf_*"});
  if (missing.out.find("btf_pair") == std::string::npos) {
    WARN("not tested: the running kernel's own debuginfo answered, not the BTF");
    return;
  }
  CHECK(missing.status == 0);
  CHECK(missing.err ==
        "kprobectl: note: tracefs has no available_filter_functions (a kernel without dynamic ftrace, "
        "CONFIG_DYNAMIC_FTRACE); so this list has every function of the BTF, also those ftrace cannot trace, which "
        "kprobes refuse\n");
  // There, but unreadable: the error says so (a directory stands in for
  // the file root cannot read; this machine's kernel answers EPERM).
  std::filesystem::create_directory(tracefs.dir / "available_filter_functions");
  auto unreadable = RunKprobectl({"--tracefs", tracefs.path(), "--btf", btf, "funcs", "btf_*"});
  CHECK(unreadable.status == 0);
  CHECK(unreadable.err == "kprobectl: note: cannot read " + tracefs.dir / "available_filter_functions" +
                              ": Is a directory; so this list has every function of the BTF, also those ftrace "
                              "cannot trace, which kprobes refuse\n");
  std::filesystem::remove(tracefs.dir / "available_filter_functions");
  WriteFile(tracefs.dir / "available_filter_functions", "btf_pair\nbtf_many [some_module]\n");
  auto read = RunKprobectl({"--tracefs", tracefs.path(), "--btf", btf, "funcs", "btf_*"});
  CHECK(read.err.empty());
  CHECK(read.out == "btf_many\nbtf_pair\n");
}
