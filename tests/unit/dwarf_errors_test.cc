// SPDX-License-Identifier: GPL-2.0-or-later
//
// What kprobectl says when a DWARF probe cannot be made: whole messages,
// each naming the input and, where it can, where to look instead.
#include <catch2/catch.hpp>
#include <filesystem>

#include "kprobectl/strings.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {}  // namespace

TEST_CASE("dwarf errors name the input and say what to do") {
  std::string bin = FixturePath("records_O2");
  struct Row {
    std::vector<std::string> args;
    std::string err;
  } rows[] = {
      {{"-D", "process:7"},
       "kprobectl: error: line 7 of process (@SRC@/records.c:63) has no code; the nearest lines with code are 5 and 9\n"
       "  hint: list the lines that have code with 'kprobectl line process'\n"},
      {{"-D", "records.c:1"},
       "kprobectl: error: @SRC@/records.c:1 has no code; the nearest line with code is 43\n"
       "  hint: list the lines that have code with 'kprobectl line records.c:1'\n"},
      {{"-D", "process:2 result"},
       "kprobectl: error: invalid argument: variable 'result' has no location at process:2 (0x13bf) (optimized out "
       "there)\n    process:2 result\n              ^\n"
       "  hint: it can be fetched at process:3 process:4 process:5 process:9\n"},
      {{"-D", "process:3 nosuch"},
       "kprobectl: error: invalid argument: no variable 'nosuch' at process:3 (0x13c5)\n    process:3 nosuch\n"
       "              ^\n  hint: see the variables there with 'kprobectl vars process:3'\n"},
      {{"-D", "process req.id"},
       "kprobectl: error: invalid argument: 'req' is a pointer (struct request*)\n    process req.id\n            ^\n"
       "  hint: use '->' for what it points to: req->id\n"},
      {{"-D", "process factor->x"},
       "kprobectl: error: invalid argument: 'factor' (int) is not a pointer\n    process factor->x\n            ^\n"
       "  hint: use '.' for its members: factor.x\n"},
      {{"-D", "process req->nosuch"},
       "kprobectl: error: invalid argument: struct request has no member 'nosuch'\n    process req->nosuch\n"
       "            ^\n  hint: its members: id, hdr, name, small_a, small_b, values, pair, label, next\n"},
      // (A struct the size of a register is fetched as its bits: req->hdr is x32.)
      {{"-D", "process req[0]"},
       "kprobectl: error: invalid argument: 'req[0]' is a struct request, not a value the kernel can fetch\n"
       "    process req[0]\n            ^\n  hint: name one of its members: req[0].MEMBER\n"},
      {{"-D", "process req->name[0]:string"},
       "kprobectl: error: invalid argument: 'req->name[0]' (char) cannot be read as a string: only char arrays and "
       "char pointers can\n    process req->name[0]:string\n            ^\n"},
      {{"-D", "process req->id[1]"},
       "kprobectl: error: invalid argument: 'req->id' (int) is neither an array nor a pointer, so [1] means "
       "nothing\n    process req->id[1]\n            ^\n"},
      {{"-D", "nosuchfn"},
       "kprobectl: error: no function 'nosuchfn' in the debuginfo of @BIN@\n"
       "  hint: list its functions with 'kprobectl -x @BIN@ funcs'\n"},
      {{"-D", "proces"},
       "kprobectl: error: no function 'proces' in the debuginfo of @BIN@\n"
       "  hint: similar names: process\n"},
      {{"-D", "nosuch.c:3"},
       "kprobectl: error: no source file matching 'nosuch.c' in the debuginfo of @BIN@\n"
       "  hint: give the path as the build recorded it, or a suffix of it (e.g. fs/open.c)\n"},
      {{"-D", "process;zzz*"},
       "kprobectl: error: no line of process matches the pattern 'zzz*'\n"
       "  hint: see its lines with 'kprobectl line process'\n"},
      {{"--no-inlines", "-D", "scale"},
       "kprobectl: error: 'scale': scale exists only as inlined copies here, and --no-inlines leaves them out\n"
       "  hint: probe a line of it (FUNC:LINE), or drop --no-inlines\n"},
      {{"-D", "scale%return"},
       "kprobectl: error: 'scale%return': scale exists only as inlined copies here, and an inlined copy has no "
       "return to probe\n  hint: probe the lines after the call in its callers, or the call's line\n"},
      {{"-D", "process%return $arg1"},
       "kprobectl: error: invalid argument: '$arg1' is argument 1, and no kernel keeps a function's arguments for "
       "a user return probe (uprobes keep none)\n"
       "    process%return $arg1\n                   ^\n"
       "  hint: 'kprobectl trace --probe' and 'kprobectl hist --probe' can: they fetch it at the function's entry "
       "with a probe of their own and print it with the return; or probe the entry too ('process $arg1')\n"},
      {{"-D", "scale $arg1"},
       "kprobectl: error: invalid argument: $arg1 is only known at a function's entry; at scale the registers may "
       "hold other values\n    scale $arg1\n          ^\n"
       "  hint: probe the function itself (FUNC), or fetch the register that holds the value (%REG)\n"},
      {{"-L", "nosuch"},
       "kprobectl: error: no function 'nosuch' in the debuginfo of @BIN@\n"
       "  hint: list functions with 'kprobectl funcs'\n"},
      {{"-L", "process:9-3"},
       "kprobectl: error: invalid line range: the range ends (line 3) before it starts (line 9)\n"
       "    process:9-3\n              ^\n"
       "  hint: a line range is FUNC[@SRC][:START[+COUNT|-END]] or SRC[:START[+COUNT|-END]] (lines of FUNC count "
       "from its declaration)\n"},
  };
  for (const Row& row : rows) {
    std::vector<std::string> args = {"-x", bin};
    args.insert(args.end(), row.args.begin(), row.args.end());
    INFO(Join(row.args, " "));
    auto result = RunKprobectl(args);
    CHECK(result.status == 1);
    CHECK(result.out.empty());
    CHECK(Replace(Replace(result.err, bin, "@BIN@"), FixtureSourceDir(), "@SRC@") == row.err);
  }
}

TEST_CASE("without the source text, line still shows which lines have code, and -s finds it") {
  std::string bin = FixturePath("records_nosource");
  auto listing = RunKprobectl({"-x", bin, "line", "summarize"});
  CHECK(listing.status == 0);
  // The build compiled it from a directory it then removed.
  std::string gone = std::filesystem::path(FixturePath("../gone-sources/records.c")).lexically_normal();
  CHECK(listing.out == "<summarize@" + gone + ":0>\n      0  \n      1  \n      2  \n      3  \n");
  CHECK(listing.err == "kprobectl: the source of " + gone + " was not found (looked at " + gone +
                           "); showing the lines that have code\n  hint: give the source tree's top with -s DIR\n");
  auto found = RunKprobectl({"-x", bin, "-s", FixtureSourceDir(), "line", "summarize:1+1"});
  CHECK(found.status == 0);
  CHECK(SplitLines(found.out).at(1) == "      1    int s = scale(req->hdr.flags, 3);");
  // A lazy pattern needs the text.
  auto pattern = RunKprobectl({"-x", bin, "-D", "summarize;*printf*"});
  CHECK(pattern.status == 1);
  CHECK(pattern.err == "kprobectl: error: cannot find the source of " + gone + "; looked at " + gone +
                           "\n  hint: give the source tree's top with -s DIR\n");
  auto with_dir = RunKprobectl({"-x", bin, "-s", FixtureSourceDir(), "-D", "summarize;*printf*"});
  CHECK(with_dir.status == 0);
  CHECK(with_dir.out == "p:probe_records_nosource/summarize_L2 " + bin + ":0x145e\n");
}

TEST_CASE("$vars skips what it cannot fetch, and -v says why") {
  std::string bin = FixturePath("records_O2");
  auto r = RunKprobectl({"-x", bin, "-v", "-D", "scale $vars"});
  CHECK(r.status == 0);
  CHECK(Replace(r.out, bin, "BIN") ==
        "p:probe_records_O2/scale BIN:0x13bf req=%bx:x64 local=%dx:s32 factor=%bp:s32 value=%dx:s32\n"
        "p:probe_records_O2/scale_1 BIN:0x145a factor=\\3:s32 value=%si:s32\n");
  CHECK(WithoutIndexNote(r.err) ==
        "note: probe_records_O2:scale: skipped result: variable 'result' has no location at scale:15 (0x13bf) "
        "(optimized out there)\n"
        "note: probe_records_O2:scale: skipped scaled: 'scaled' is in a place the kernel cannot read (its location "
        "uses operation 0x76)\n"
        "note: probe_records_O2:scale_1: skipped req: 'req' is only known as the value a register had when summarize "
        "was entered (DW_OP_entry_value), which it may no longer hold here\n"
        "note: probe_records_O2:scale_1: skipped s: variable 's' has no location at scale:2 (0x145a) (optimized out "
        "there)\n"
        "note: probe_records_O2:scale_1: skipped scaled: 'scaled' is in a place the kernel cannot read (its location "
        "uses DW_OP_mul)\n");
}

TEST_CASE("a value computed from memory is dereferenced, not fetched") {
  // first_tfm's r is *(%di+32) - 72 (DW_OP_breg5 RDI+32, DW_OP_deref,
  // DW_OP_const1u 0x48, DW_OP_minus, DW_OP_stack_value).
  auto r = RunKprobectl({"-x", FixturePath("deref"), "-D", "first_tfm r"});
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "kprobectl: error: invalid argument: 'r' is computed (a value read from memory plus -72) and cannot be "
        "fetched as a value\n    first_tfm r\n              ^\n  hint: dereference it instead, e.g. 'r->MEMBER'\n");
  r = RunKprobectl({"-x", FixturePath("deref"), "-v", "-D", "first_tfm $vars"});
  CHECK(r.status == 0);
  CHECK(r.out == "p:probe_deref/first_tfm " + FixturePath("deref") + ":0x1230 h=%di:x64 x=%si:s32\n");
  CHECK(WithoutIndexNote(r.err) ==
        "note: probe_deref:first_tfm: skipped r: 'r' is computed (a value read from memory plus -72) and cannot be "
        "fetched as a value\n");
}

TEST_CASE("a register's value at the frame's entry is that register at the out-of-line function's entry only") {
  // inner's flags, and outer's after the call to sink, are
  // DW_OP_entry_value(DW_OP_reg4 RSI): outer's %rsi on entry, which sink
  // may overwrite. An inlined copy's entry is no entry of the frame.
  std::string bin = FixturePath("entry_value");
  auto entry = RunKprobectl({"-x", bin, "-D", "outer flags"});
  CHECK(entry.status == 0);
  CHECK(entry.out == "p:probe_entry_value/outer " + bin + ":0x1160 flags=%si:s64\n");
  auto copy = RunKprobectl({"-x", bin, "-D", "inner flags"});
  CHECK(copy.status == 1);
  CHECK(copy.out.empty());
  CHECK(copy.err ==
        "kprobectl: error: invalid argument: 'flags' is only known as the value a register had when outer was entered "
        "(DW_OP_entry_value), which it may no longer hold here\n    inner flags\n          ^\n"
        "  hint: see what outer's entry holds: kprobectl vars outer\n");
  auto params = RunKprobectl({"-x", bin, "-D", "inner $params"});
  CHECK(params.status == 0);
  CHECK(params.out == "p:probe_entry_value/inner " + bin + ":0x1169\n");  // no flags
  auto vars = RunKprobectl({"-x", bin, "vars", "inner"});
  CHECK(vars.status == 0);
  CHECK(vars.out == "Available variables at inner\n\t@<outer+9> (inner inlined)\n\t\t(No matched variables)\n");
  // outer's own flags at a line after the call: the same.
  CHECK(RunKprobectl({"-x", bin, "-D", "outer:2 flags"}).err ==
        "kprobectl: error: invalid argument: 'flags' is only known as the value a register had when outer was entered "
        "(DW_OP_entry_value), which it may no longer hold here\n    outer:2 flags\n            ^\n"
        "  hint: see what outer's entry holds: kprobectl vars outer\n");
}

TEST_CASE("a return probe's variables: the arguments the kernel keeps, nothing a return would overwrite") {
  // A return probe reads its fetches when the function returns; the
  // DWARF's locations are the entry's. The kernel keeps the argument
  // registers for the return ($argN, Linux 6.9: -k -D assumes a kernel
  // that has everything); uprobes keep nothing.
  std::string kernel = FixturePath("kernel_like");
  CHECK(RunKprobectl({"--no-cache", "-k", kernel, "-D", "process%return req->id factor records_total"}).out ==
        "r:probe/process__return process+0 id=+0($arg1):s32 factor=$arg2:s32 records_total=@records_total:s64\n");
  CHECK(RunKprobectl({"--no-cache", "-k", kernel, "-D", "process%return $params"}).out ==
        "r:probe/process__return process+0 req=$arg1:x64 factor=$arg2:s32\n");
  std::string user = FixturePath("entry_value");
  auto refused = RunKprobectl({"-x", user, "-D", "outer%return flags"});
  CHECK(refused.status == 1);
  CHECK(refused.out.empty());
  CHECK(refused.err ==
        "kprobectl: error: invalid argument: 'flags' is argument 2, and no kernel keeps a function's arguments for a "
        "user return probe (uprobes keep none)\n    outer%return flags\n"
        "                 ^\n  hint: 'kprobectl trace --probe' and 'kprobectl hist --probe' can: they fetch it at "
        "the function's entry with a probe of their own and print it with the return; or probe the entry too "
        "('outer flags')\n");
  auto params = RunKprobectl({"-x", user, "-v", "-D", "outer%return $params"});
  CHECK(params.status == 0);
  CHECK(params.out == "r:probe_entry_value/outer__return " + user + ":0x1160\n");  // no a, no flags
  CHECK(WithoutIndexNote(params.err) ==
        "note: probe_entry_value:outer__return: skipped a: 'a' is argument 1, and no kernel keeps a function's "
        "arguments for a user return probe (uprobes keep none)\n"
        "note: probe_entry_value:outer__return: skipped flags: 'flags' is argument 2, and no kernel keeps a "
        "function's arguments for a user return probe (uprobes keep none)\n");
}

TEST_CASE("an inline function with no code left says so, by index, by scan, and with --no-inlines") {
  std::string bin = FixturePath("split");
  std::string expected = "kprobectl: error: 'twice' exists only as inlined code in " + bin +
                         ": the compiler folded every call of it into its callers and left no address where one "
                         "begins\n  hint: probe the callers, or a line of theirs where it was called ('kprobectl "
                         "line CALLER')\n";
  for (std::vector<std::string> extra : {std::vector<std::string>{"--no-cache"}, std::vector<std::string>{}}) {
    TempDir cache;
    ScopedEnv env("XDG_CACHE_HOME", cache.path());
    std::vector<std::string> args = {"-x", bin};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"-D", "twice"});
    auto result = RunKprobectl(args);
    CHECK(result.status == 1);
    CHECK(result.err == expected);
    // A name that is nowhere is still "no function".
    args.back() = "thrice";
    CHECK(RunKprobectl(args).err == "kprobectl: error: no function 'thrice' in the debuginfo of " + bin +
                                        "\n"
                                        "  hint: list its functions with 'kprobectl -x " +
                                        bin + " funcs'\n");
  }
}

TEST_CASE("the lines of callers that hold an inlined copy are not the inlined function's") {
  // own_lines.c:19 and :26 (twice's lines 8 and 15 if they were its) are
  // rows at the first addresses of twice's copies in user and main.
  std::string bin = FixturePath("own_lines");
  auto past = RunKprobectl({"-x", bin, "-D", "twice:8"});
  CHECK(past.status == 1);
  CHECK(Replace(past.err, FixtureSourceDir(), "@SRC@") ==
        "kprobectl: error: line 8 of twice (@SRC@/own_lines.c:19) is past its end; the nearest line with code is 3\n"
        "  hint: list the lines that have code with 'kprobectl line twice'\n");
  auto pattern = RunKprobectl({"-x", bin, "-D", "twice;*+1*"});
  CHECK(pattern.status == 1);
  CHECK(pattern.err ==
        "kprobectl: error: no line of twice matches the pattern '*+1*'\n"
        "  hint: see its lines with 'kprobectl line twice'\n");
  // The caller's line is still the caller's.
  auto caller = RunKprobectl({"-x", bin, "-D", "user:2"});
  CHECK(caller.status == 0);
  CHECK(caller.out == "p:probe_own_lines/user_L2 " + bin + ":0x1197\n");
}

TEST_CASE("a struct split over several places is fetched member by member, and what cannot be says why") {
  // tests/fixtures/pieces.c: setopt's optval is RCX:R8 (DW_OP_piece),
  // take_quad's q RDI:RSI with q.in across both, spill's m at line 9 is
  // nothing:R12 (its first piece optimized out).
  std::string bin = FixturePath("pieces");
  struct Row {
    std::string spec;
    std::string err;
  } rows[] = {
      {"setopt optval",
       "kprobectl: error: invalid argument: 'optval' is split over several places here (bytes 0-7 and 8-15: "
       "DW_OP_piece), and the kernel fetches one place per argument\n    setopt optval\n           ^\n"
       "  hint: fetch its members: optval.kernel optval.user optval.is_kernel\n"},
      {"take_quad q.in",
       "kprobectl: error: invalid argument: 'q.in' lies across 2 pieces of 'q' (bytes 0-7 and 8-15, each in a place "
       "of its own: DW_OP_piece), which the kernel cannot read as one\n    take_quad q.in\n              ^\n"
       "  hint: fetch its members: q.in.x q.in.y\n"},
      {"spill:9 m.key",
       "kprobectl: error: invalid argument: 'm.key' is in bytes 0-7 of 'm', which are optimized out here\n"
       "    spill:9 m.key\n            ^\n"},
      {"spill:9 m",
       "kprobectl: error: invalid argument: 'm' is split over several places here (bytes 0-7 optimized out and 8-15: "
       "DW_OP_piece), and the kernel fetches one place per argument\n    spill:9 m\n            ^\n"
       "  hint: fetch its members: m.count\n"},
      {"take_text t.v",
       "kprobectl: error: invalid argument: 't.v' is an array kept in a register here, and the kernel reads arrays "
       "from memory\n    take_text t.v\n              ^\n  hint: fetch its elements: t.v[0] t.v[1] t.v[2] t.v[3]\n"},
      // The type would read the register's first bits: q.in.y's, not q.in.x's.
      {"take_quad x=q.in.x:s32",
       "kprobectl: error: invalid argument: 'q.in.x' is bits 32-63 of where it is kept (b32@32/64), and :s32 would "
       "read the bits from 0 instead\n    take_quad x=q.in.x:s32\n                       ^\n"
       "  hint: leave the type out\n"},
      {"take_pair p.e:u8",
       "kprobectl: error: invalid argument: 'p.e' is bits 56-58 of where it is kept (b3@56/64), and :u8 would "
       "read the bits from 0 instead\n    take_pair p.e:u8\n                  ^\n  hint: leave the type out\n"},
  };
  for (const Row& row : rows) {
    INFO(row.spec);
    auto r = RunKprobectl({"-x", bin, "-D", row.spec});
    CHECK(r.status == 1);
    CHECK(r.out.empty());
    CHECK(r.err == row.err);
  }
  // $vars takes what it can and says what it left out.
  auto vars = RunKprobectl({"-x", bin, "-v", "-D", "spill:9 $vars"});
  CHECK(vars.status == 0);
  CHECK(vars.out == "p:probe_pieces/spill_L9 " + bin +
                        ":0x16a7 m_count=%r12:s64 n_key=%r15:s64 n_count=%bp:s64 o_key=%r14:s64 o_count=%bx:s64 "
                        "p_key=%r13:s64\n");
  CHECK(WithoutIndexNote(vars.err) ==
        "note: probe_pieces:spill_L9: skipped k: 'k' is only known as the value a register had when spill was "
        "entered (DW_OP_entry_value), which it may no longer hold here\n"
        "note: probe_pieces:spill_L9: skipped m.key: 'm.key' is in bytes 0-7 of 'm', which are optimized out here\n"
        "note: probe_pieces:spill_L9: skipped p.count: 'p.count' is in bytes 8-15 of 'p', which are optimized out "
        "here\n");
}
