// SPDX-License-Identifier: GPL-2.0-or-later
//
// kprobectl on a real kernel image, offline: a function's lines. Where a
// function's lines end (DWARF does not say: its inlined copies' ranges
// hold rows of their callers too), and line 0. Subjects and answers come
// from the image under test's line tables (kernel_facts.h).
#include <dwarf.h>

#include <catch2/catch.hpp>
#include <iomanip>
#include <sstream>

#include "kprobectl/strings.h"
#include "vmlinux_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

// `line NAME`'s numbers: the lines from the declaration on, relative to it.
std::vector<std::string> Numbered(const OwnLines& own, int from = 0) {
  std::vector<std::string> out;
  for (int l : own.lines)
    if (l >= own.decl + from) out.push_back(std::to_string(l - own.decl));
  return out;
}

// A line of the function's file past its end that a row in one of its
// instances' ranges has: its caller's, at a copy (the smallest).
std::optional<int> CallersLine(const KernelFacts& facts, const std::string& name, const OwnLines& own) {
  std::optional<int> out;
  for (const Instance& i : facts.Instances(name)) {
    if (!i.part_of_itself.empty()) continue;
    Dwarf_Die die = facts.Die(i.die);
    Dwarf_Die cu = facts.CuOf(&die);
    if (facts.DeclFile(&die) != own.file) continue;
    const int last = facts.LastOwnLine(&cu, own.file, own.decl);
    for (const LineRow& row : facts.Lines(&cu))
      if (!row.end_sequence && row.stmt && row.file == own.file && row.line > last && (!out || row.line < *out) &&
          std::any_of(i.ranges.begin(), i.ranges.end(), [&](const Range& r) { return r.Holds(row.address); }))
        out = row.line;
  }
  return out;
}

}  // namespace

TEST_CASE("line lists a function's own lines, not those of the callers that hold its inlined copies") {
  const KernelFacts& facts = Facts();
  // getname_flags (fs/namei.c) of 6.1 is inlined into the syscalls that
  // SYSCALL_DEFINE makes at the end of fs/namei.c; their lines (4121, its
  // "line 3992") are at its copies' first addresses.
  auto fn = Subject(
      {"getname_flags"},
      [&](Dwarf_Die* copy, Dwarf_Die* holder) {
        Dwarf_Die origin = facts.Die(facts.Origin(copy));
        return facts.DeclFile(&origin) == facts.DeclFile(holder) && facts.DeclLine(holder) > facts.DeclLine(&origin);
      },
      [&](const std::string& name) {
        OwnLines own = LinesOf(facts, name);
        return Numbered(own).size() > 2 && CallersLine(facts, name, own).has_value();
      });
  if (!fn) return SkipCase("no function has a copy whose ranges hold its caller's lines of the same file");
  OwnLines own = LinesOf(facts, *fn);
  std::vector<std::string> numbers = Numbered(own);
  INFO(*fn << " of " << own.file);
  REQUIRE(numbers.size() > 2);
  auto result = Run({"line", *fn});
  CHECK(result.status == 0);
  CHECK(Join(ListedLineNumbers(result.out), " ") == Join(numbers, " "));
  // From a line on (one in the middle), as FUNC@FILE:LINE.
  const std::string from = numbers[numbers.size() / 2], file = own.file;
  result = Run({"line", *fn + "@" + file + ":" + from});
  std::ostringstream first;
  first << std::setw(7) << from << "  ";
  CHECK(SplitLines(result.out).at(0) == "<" + *fn + "@" + file + ":" + from + ">");
  CHECK(SplitLines(result.out).at(1) == first.str());
  CHECK(Join(ListedLineNumbers(result.out), " ") == Join(Numbered(own, std::stoi(from)), " "));
  // The caller's line past the function's end, as a line of the function.
  const int past = *CallersLine(facts, *fn, own);
  const std::string relative = std::to_string(past - own.decl);
  result = Run({"-D", *fn + ":" + relative});
  CHECK(result.err == "kprobectl: error: line " + relative + " of " + *fn + " (" + own.file + ":" +
                          std::to_string(past) + ") is past its end; the nearest line with code is " + numbers.back() +
                          "\n  hint: list the lines that have code with 'kprobectl line " + *fn + "'\n");
}

TEST_CASE("line 0 is a function's entry, and a block's own declarations end no function") {
  const KernelFacts& facts = Facts();
  // ext4_mb_use_best_found's declaration line in 6.1 has no row of the
  // line table: its line 0 is its entry, as in perf (-L numbers it, FUNC:0
  // is FUNC). BUG_ON and min() declare __compiletime_assert_N inside its
  // body, which gcc also lists among the CU's functions: a declaration,
  // no end of this one.
  auto fits = [&](const std::string& name) {
    OwnLines own = LinesOf(facts, name);
    std::vector<Instance> instances = facts.Instances(name);
    if (own.lines.size() < 3 || instances.empty() || instances.front().inlined) return false;
    Dwarf_Die die = facts.Die(instances.front().die);
    Dwarf_Die cu = facts.CuOf(&die);
    for (const LineRow& row : facts.Lines(&cu))
      if (row.line == own.decl && row.file == own.file) return false;  // a row on the declaration line
    const int last = *own.lines.rbegin();
    Dwarf_Die child;
    if (dwarf_child(&cu, &child) == 0) do {
        int line = facts.DeclLine(&child);
        if (dwarf_tag(&child) == DW_TAG_subprogram && dwarf_hasattr(&child, DW_AT_declaration) && line > own.decl &&
            line < last && facts.DeclFile(&child) == own.file)
          return true;
      } while (dwarf_siblingof(&child, &child) == 0);
    return false;
  };
  std::optional<std::string> fn;
  if (fits("ext4_mb_use_best_found")) fn = "ext4_mb_use_best_found";
  // Else a function around one of those declarations.
  for (const std::string& assert : facts.NamesStartingWith("__compiletime_assert_")) {
    if (fn) break;
    Dwarf_Die decl = facts.Die(facts.Named(assert).front());
    Dwarf_Die cu = facts.CuOf(&decl), child;
    std::string around;
    int best = 0;
    if (dwarf_child(&cu, &child) == 0) do {
        int line = facts.DeclLine(&child);
        if (dwarf_tag(&child) == DW_TAG_subprogram && !dwarf_hasattr(&child, DW_AT_declaration) &&
            line < facts.DeclLine(&decl) && line > best && facts.DeclFile(&child) == facts.DeclFile(&decl)) {
          best = line;
          around = KernelFacts::Name(&child);
        }
      } while (dwarf_siblingof(&child, &child) == 0);
    if (!around.empty() && fits(around)) fn = around;
  }
  if (!fn) return SkipCase("no function without a row on its declaration line declares a function inside its body");
  OwnLines own = LinesOf(facts, *fn);
  INFO(*fn << " of " << own.file);
  auto result = Run({"line", *fn});
  CHECK(Join(ListedLineNumbers(result.out), " ") == Join(Numbered(own), " "));
  // FUNC:0 is where each instance begins, named FUNC.
  std::set<uint64_t> entries;
  for (const Site& site : Sites(facts, *fn))
    if (site.refusal.empty()) entries.insert(site.instance.entry);
  std::string expected;
  for (uint64_t at : entries)
    expected += "p:probe/" + *fn + (expected.empty() ? "" : "_" + std::to_string(SplitLines(expected).size())) + " " +
                facts.Place(at) + "\n";
  CHECK(Run({"-D", *fn + ":0"}).out == expected);
}
