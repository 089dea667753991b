// SPDX-License-Identifier: GPL-2.0-or-later
//
// Inputs the first fuzzing pass found mishandled (issue 15): each is refused
// with a message that names it, exit status 1 or 2, nothing written; none
// crashes, hangs, wraps around or is quietly ignored.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "kprobectl/probe_events.h"
#include "kprobectl/strings.h"
#include "kprobectl/tracefs_dir.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

// The first line of the error kprobectl printed for `-x FIXTURE -D SPEC`.
std::string Refusal(const std::string& fixture, const std::string& spec) {
  auto result = RunKprobectl({"--no-cache", "-x", FixturePath(fixture), "-D", spec});
  INFO(spec << "\n" << result.out << result.err);
  CHECK(result.status != 0);
  CHECK(result.out.empty());
  return result.err.substr(0, result.err.find('\n'));
}

// A copy of a fixture with `bytes` written at `offset`.
std::string Patched(const TempDir& dir, const std::string& fixture, size_t offset, const std::string& bytes) {
  std::string data = ReadFile(FixturePath(fixture));
  REQUIRE(offset + bytes.size() <= data.size());
  data.replace(offset, bytes.size(), bytes);
  std::string path = dir / fixture;
  WriteFile(path, data);
  return path;
}

}  // namespace

TEST_CASE("bad input: offsets and indexes beyond 64 bits either way are refused, not negated") {
  CHECK(Refusal("target_O2", "compute +0x8000000000000000(%di)") ==
        "kprobectl: error: invalid argument: an offset in +OFFSET(EXPR) out of range (at most 0x7fffffffffffffff "
        "either way)");
  CHECK(Refusal("target_O2", "compute -0x8000000000000000(%di)") ==
        "kprobectl: error: invalid argument: an offset in +OFFSET(EXPR) out of range (at most 0x7fffffffffffffff "
        "either way)");
  CHECK(Refusal("target_O2", "compute @compute+0x8000000000000000") ==
        "kprobectl: error: invalid argument: an offset after the symbol out of range (at most 0x7fffffffffffffff "
        "either way)");
  CHECK(Refusal("types", "main who[18446744073709551615]") ==
        "kprobectl: error: invalid argument: an array index out of range (at most 0x7fffffffffffffff either way)");
  auto ok = RunKprobectl({"--no-cache", "-x", FixturePath("target_O2"), "-D", "compute -0x7fffffffffffffff(%di)"});
  CHECK(ok.status == 0);
  CHECK(ok.out == "p:probe_target_O2/compute " + FixturePath("target_O2") + ":0x1350 arg1=-9223372036854775807(%di)\n");
}

TEST_CASE("bad input: deep nesting is bounded while parsing (no stack overflow)") {
  std::string deep;
  for (int i = 0; i < 8000; ++i) deep += "+0(";
  deep += "%di";
  for (int i = 0; i < 8000; ++i) deep += ")";
  CHECK(Refusal("target_O2", "compute " + deep) ==
        "kprobectl: error: invalid argument: more than 16 nested dereferences");
  std::string ok_nesting = "compute +0(+0(+0(%di)))";
  CHECK(RunKprobectl({"--no-cache", "-x", FixturePath("target_O2"), "-D", ok_nesting}).status == 0);
  std::string bangs(100000, '!');
  auto funcs = RunKprobectl({"--no-cache", "-x", FixturePath("target_O2"), "funcs", bangs + "c*"});
  CHECK(funcs.status == 1);
  CHECK(funcs.err == "kprobectl: error: invalid filter: nested too deeply (more than 100 '!' or '(')\n    " + bangs +
                         "c*\n" + std::string(104, ' ') +
                         "^\n  hint: combine globs with '!', '&', '|' and parentheses, e.g. 'vfs_* & !vfs_read'\n");
}

TEST_CASE("bad input: numbers that used to wrap around") {
  CHECK(Refusal("target_O2", "compute $arg4294967297") ==
        "kprobectl: error: invalid argument: invalid '$arg4294967297': expected $argN with 1 <= N <= 2048");
  CHECK(Refusal("target_O2", "compute $stack4294967296") ==
        "kprobectl: error: invalid argument: invalid '$stack4294967296': expected $stackN with 0 <= N <= 2048");
  CHECK(Refusal("target_O2", "compute+18446744073709551615") ==
        "kprobectl: error: invalid probe point: offset out of range (at most 0x7fffffff)");
  CHECK(Refusal("target_O2", "compute:4294967297") ==
        "kprobectl: error: invalid probe point: line number out of range (at most 2147483647)");
  // Past the function's end: refused on the DWARF path as on the symbol path.
  CHECK(Refusal("target_O2", "compute+16") ==
        "kprobectl: error: offset 16 is outside 'compute' (12 bytes) in " + FixturePath("target_O2"));
  CHECK(Refusal("target_nopie", "compute+4096") ==
        "kprobectl: error: offset 4096 is outside 'compute' (12 bytes) in " + FixturePath("target_nopie"));
}

TEST_CASE("bad input: $comm is a string") {
  CHECK(Refusal("target_O2", "compute $comm:u8") ==
        "kprobectl: error: invalid argument: $comm is a string; it takes no other type");
  CHECK(Refusal("target_O2", "compute +0($comm)") ==
        "kprobectl: error: invalid argument: $comm is a string and cannot be dereferenced");
  CHECK(RunKprobectl({"--no-cache", "-x", FixturePath("target_O2"), "-D", "compute $comm:string"}).status == 0);
}

TEST_CASE("bad input: silent no-ops are errors") {
  CHECK(Refusal("target_O2", "compute@GLIBC_2.2.5:3") ==
        "kprobectl: error: 'compute@GLIBC_2.2.5:3' names a source line, which needs debuginfo (DWARF) to resolve");
  CHECK(Refusal("target_O2", "compute@GLIBC_2.2.5 a") ==
        "kprobectl: error: invalid argument: variable 'a' needs debuginfo (DWARF) to be found");
  CHECK(Refusal("target_O2", "f@@@x") ==
        "kprobectl: error: 'f@@@x' names a source file, which needs debuginfo (DWARF) to resolve");
  auto funcs = RunKprobectl({"--no-cache", "-x", FixturePath("target_O2"), "funcs", "["});
  CHECK(funcs.status == 1);
  CHECK(funcs.err ==
        "kprobectl: error: invalid filter: '[' without its ']'\n    [\n    ^\n"
        "  hint: combine globs with '!', '&', '|' and parentheses, e.g. 'vfs_* & !vfs_read'\n");
  auto closed = RunKprobectl({"--no-cache", "-x", FixturePath("target_O2"), "funcs", "[]c]ompute"});
  CHECK(closed.status == 0);
  CHECK(closed.out == "compute\n");
}

TEST_CASE("bad input: two actions on one command line are an error, never a write") {
  // 'add greet' after -D used to add greet for real.
  auto both = RunKprobectl(
      {"--no-cache", "--tracefs", "/nonexistent", "-x", FixturePath("target_O2"), "-D", "compute", "add", "greet"});
  CHECK(both.status == 2);
  CHECK(both.out.empty());
  CHECK(both.err ==
        "kprobectl: error: the command 'add' cannot be used with switch -D\n"
        "  hint: one action at a time: run kprobectl once for each (several probes go in one -a/-D each, or one "
        "'add -a ... -a ...')\n");
  auto two = RunKprobectl({"-x", FixturePath("target_O2"), "-V", "compute", "-F"});
  CHECK(two.status == 2);
  CHECK(two.err ==
        "kprobectl: error: switch -F cannot be used with switch -V\n"
        "  hint: one action at a time: run kprobectl once for each (several probes go in one -a/-D each, or one "
        "'add -a ... -a ...')\n");
}

TEST_CASE("bad input: -x '', -k of a program, -k of a missing file") {
  auto empty = RunKprobectl({"-x", "", "-D", "compute"});
  CHECK(empty.status == 2);
  CHECK(empty.err ==
        "kprobectl: error: --exec was given an empty name\n"
        "  hint: give the file to probe (or leave the option out)\n");
  auto program = RunKprobectl({"--no-cache", "-k", FixturePath("target_O2"), "-D", "compute"});
  CHECK(program.status == 1);
  CHECK(program.err == "kprobectl: error: '" + FixturePath("target_O2") +
                           "' is not a kernel image: it has no _text symbol\n"
                           "  hint: -k takes a vmlinux; probe a program or library with -x\n");
  auto missing = RunKprobectl({"--no-cache", "-k", "/nonexistent/vmlinux", "-D", "f"});
  CHECK(missing.err ==
        "kprobectl: error: cannot open '/nonexistent/vmlinux': No such file or directory\n"
        "  hint: -k takes the kernel's image with its debuginfo, e.g. "
        "/usr/lib/debug/boot/vmlinux-VERSION\n");
}

TEST_CASE("bad input: every command refuses a binary for another machine, line included") {
  TempDir dir;
  // e_machine (offset 18) EM_RISCV = 243.
  std::string riscv = Patched(dir, "target_O2", 18, std::string("\xf3\x00", 2));
  for (std::vector<std::string> command :
       {std::vector<std::string>{"line", "compute"}, {"vars", "compute"}, {"-D", "compute"}, {"funcs"}}) {
    std::vector<std::string> args{"--no-cache", "-x", riscv};
    args.insert(args.end(), command.begin(), command.end());
    auto result = RunKprobectl(args);
    INFO(command[0]);
    CHECK(result.status == 1);
    CHECK(result.out.empty());
    CHECK(result.err == "kprobectl: error: '" + riscv +
                            "' is for RISC-V (EM_RISCV), an architecture kprobectl does not support\n"
                            "  hint: kprobectl reads x86-64 and arm64 files\n");
  }
}

TEST_CASE("bad input: sizes read from an ELF file are checked against the file") {
  TempDir dir;
  // The .symtab's sh_size made huge (it used to throw std::bad_alloc).
  std::string data = ReadFile(FixturePath("target_O2"));
  auto shoff = *reinterpret_cast<const uint64_t*>(data.data() + 0x28);
  auto shnum = *reinterpret_cast<const uint16_t*>(data.data() + 0x3c);
  bool patched = false;
  for (uint16_t i = 0; i < shnum; ++i) {
    size_t header = shoff + i * 64;
    if (*reinterpret_cast<const uint32_t*>(data.data() + header + 4) != 2 /* SHT_SYMTAB */) continue;
    uint64_t huge = 0x7fffffffffff0000ULL;
    data.replace(header + 32, 8, reinterpret_cast<const char*>(&huge), 8);
    patched = true;
  }
  REQUIRE(patched);
  WriteFile(dir / "huge", data);
  auto result = RunKprobectl({"--no-cache", "-x", dir / "huge", "-D", "compute"});
  CHECK(result.status == 1);
  CHECK(result.err ==
        "kprobectl: error: '" + dir / "huge" + "' is corrupt: its symbol table runs past the end of the file\n");
}

TEST_CASE("bad input: a FIFO in place of a binary or a cache file does not block") {
  TempDir dir;
  REQUIRE(mkfifo((dir / "fifo").c_str(), 0600) == 0);
  auto binary = RunKprobectl({"--no-cache", "-x", dir / "fifo", "-D", "main"});
  CHECK(binary.status == 1);
  CHECK(binary.err == "kprobectl: error: '" + dir / "fifo" +
                          "' is not an ELF file\n  hint: give -x an executable or a shared library\n");
  // The cache files of target_O2, made FIFOs: ignored and replaced.
  ScopedEnv env("XDG_CACHE_HOME", dir.path());
  REQUIRE(RunKprobectl({"-x", FixturePath("target_O2"), "-D", "compute"}).status == 0);
  std::vector<std::string> caches;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir / "kprobectl"))
    if (entry.is_regular_file()) caches.push_back(entry.path());
  REQUIRE_FALSE(caches.empty());
  for (const std::string& cache : caches) {
    std::filesystem::remove(cache);
    REQUIRE(mkfifo(cache.c_str(), 0600) == 0);
  }
  auto again = RunKprobectl({"-x", FixturePath("target_O2"), "-D", "compute"});
  CHECK(again.status == 0);
  CHECK(again.out == "p:probe_target_O2/compute " + FixturePath("target_O2") + ":0x1350\n");
}

TEST_CASE("bad input: a line list cannot read hides no other line from list or del") {
  TempDir dir;
  TracefsDir fs(dir.path());
  WriteFile(dir / "uprobe_events",
            "p:kpt/a /bin/true:0x0000000000001000\np:kpt/odd /bin/true:@@1000 x=%di\n"
            "p:kpt/b /bin/true:0x0000000000002000\n");
  auto listed = ProbeEvents(fs).List();
  REQUIRE(listed);
  REQUIRE(listed->size() == 3);
  CHECK((*listed)[1].FullName() == "kpt:odd");
  CHECK((*listed)[1].unread == "p:kpt/odd /bin/true:@@1000 x=%di");
  CHECK((*listed)[0].unread.empty());
  REQUIRE(ProbeEvents(fs).Remove((*listed)[1]));
  CHECK(ReadFile(dir / "uprobe_events").ends_with("-:kpt/odd\n"));
}
