// SPDX-License-Identifier: GPL-2.0-or-later
//
// kprobectl on a real kernel image, offline (-k -D), for what only a
// kernel's size and gcc's treatment of it show: functions split in a hot
// and a cold part, split parts inlined back into their own function, code
// that stands for another function's tail. Each was a difference from perf
// on a sample of the 6.1 cloud kernel's functions. The subjects and every
// expected answer come from the image under test (kernel_facts.h): the
// 6.1 subject first when it still has the pattern, else one found in the
// DWARF, else the test skips saying what the image lacks.
#include <dwarf.h>

#include <catch2/catch.hpp>
#include <set>

#include "kernel_fetch.h"
#include "kprobectl/strings.h"
#include "vmlinux_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

// A function gcc split in a hot and a cold part (-freorder-blocks-and-
// partition): symbols FUNC and FUNC.cold, its DWARF's DW_AT_ranges the
// hot part first, with no DW_AT_low_pc.
struct Split {
  std::string name;
  Instance instance;
  Range cold;
};

std::vector<Split> SplitFunctions(const KernelFacts& facts) {
  std::vector<Split> out;
  for (const Symbol& cold : facts.Functions()) {
    if (!cold.name.ends_with(".cold")) continue;
    std::string name = cold.name.substr(0, cold.name.size() - 5);
    const Symbol* hot = facts.Function(name);
    if (!hot) continue;
    for (const Instance& i : facts.Instances(name)) {
      if (i.inlined || i.ranges.size() < 2 || i.listed.front().start != hot->value) continue;
      for (const Range& r : i.ranges)
        if (r.start == cold.value) out.push_back({name, i, r});
    }
  }
  // The 6.1 subject first, the rest by address.
  std::stable_partition(out.begin(), out.end(), [](const Split& s) { return s.name == "do_exit"; });
  return out;
}

// A line of the function whose code is only in its cold part, beginning
// it: FUNC:LINE, relative to the declaration.
std::optional<int> ColdLine(const KernelFacts& facts, const Split& split) {
  Dwarf_Die die = facts.Die(split.instance.die);
  Dwarf_Die cu = facts.CuOf(&die);
  const std::string file = facts.DeclFile(&die);
  const int decl = facts.DeclLine(&die);
  const int last = facts.LastOwnLine(&cu, file, decl);
  std::set<int> lines;
  for (const LineRow& row : facts.Lines(&cu))
    if (row.file == file && row.line > decl && row.line <= last && split.cold.Holds(row.address))
      lines.insert(row.line);
  for (int line : lines)
    if (facts.LineBlocks(&cu, file, line, split.instance.ranges) == std::vector<uint64_t>{split.cold.start})
      return line - decl;
  return std::nullopt;
}

}  // namespace

TEST_CASE("a hot/cold split function has an entry, variables and lines in both parts") {
  const KernelFacts& facts = Facts();
  std::vector<Split> splits = SplitFunctions(facts);
  if (splits.empty())
    return SkipCase(
        "no function of this image is split in hot and cold parts (no FUNC.cold symbol whose code "
        "FUNC's DW_AT_ranges holds)");
  // The subject: one with no other instance, a parameter in a register at
  // its entry and a line whose code is only in the cold part.
  const Split* subject = nullptr;
  std::string param;
  std::optional<int> cold_line;
  for (const Split& s : splits) {
    if (Sites(facts, s.name).size() != 1) continue;
    Dwarf_Die die = facts.Die(s.instance.die);
    for (Dwarf_Die& var : facts.Variables(&die, true)) {
      Fetch fetch = FetchAt(&var, s.instance.entry, true);
      if (fetch.kind == Fetch::kFetched && fetch.text.starts_with("%")) {
        param = KernelFacts::Name(&var) + "=" + fetch.text;
        break;
      }
    }
    cold_line = ColdLine(facts, s);
    if (!param.empty() && cold_line) {
      subject = &s;
      break;
    }
    param.clear();
  }
  if (!subject)
    return SkipCase("no split function has both a parameter in a register and a line only in its cold part");
  const std::string& fn = subject->name;
  INFO("subject " << fn << ", " << splits.size() << " split functions");
  // The entry is the hot part's first instruction, not the lowest address:
  // .text.unlikely, where the cold part goes, can come first in the image.
  CHECK(facts.Place(subject->instance.entry) == fn + "+0");
  auto result = Run({"-D", fn + " " + param.substr(0, param.find('='))});
  INFO(result.err);
  CHECK(result.out == "p:probe/" + fn + " " + fn + "+0 " + param + "\n");
  CHECK(Run({"vars", fn}).out == Stated(Vars(facts, fn), "vars " + fn));
  // A line in the cold part: a probe there names that part, which the
  // kernel takes (it checks FUNC, the name without its suffix).
  std::string line = std::to_string(*cold_line);
  CHECK(facts.Place(subject->cold.start) == fn + ".cold+0");
  CHECK(Run({"-D", fn + ":" + line}).out == "p:probe/" + fn + "_L" + line + " " + fn + ".cold+0\n");
  // Others, spread over the image: $params at the hot part's entry.
  size_t step = std::max<size_t>(1, splits.size() / 8), compared = 0;
  for (size_t i = 1; i < splits.size(); i += step) {
    const std::string& other = splits[i].name;
    Expected expected = Definitions(facts, other, true);
    if (!expected.unknown.empty() || expected.text.empty()) continue;  // forms the oracle does not read, or refused
    INFO(other);
    CHECK(Run({"-D", other + " $params"}).out == expected.text);
    ++compared;
  }
  CHECK(compared >= std::min<size_t>(4, splits.size() - 1));
}

namespace {

// Instances of `name` that are no copies of it for the reason `why` begins with.
size_t PartsOfItself(const KernelFacts& facts, const std::string& name, std::string_view why) {
  size_t n = 0;
  for (const Instance& i : facts.Instances(name)) n += i.part_of_itself.starts_with(why);
  return n;
}

// A copy called from its function's declaration line.
bool CalledFromDeclaration(const KernelFacts& facts, Dwarf_Die* copy) {
  Dwarf_Attribute attr;
  Dwarf_Word line = 0;
  Dwarf_Die origin = facts.Die(facts.Origin(copy));
  return dwarf_formudata(dwarf_attr(copy, DW_AT_call_line, &attr), &line) == 0 &&
         static_cast<int>(line) == facts.DeclLine(&origin);
}

// -D NAME as the oracle states it, none of `name`'s parts of itself probed.
void CheckDefinitions(const KernelFacts& facts, const std::string& name) {
  auto result = Run({"-D", name});
  INFO(name << ": " << result.err);
  CHECK(result.out == Stated(Definitions(facts, name, false), "-D " + name));
  for (const Instance& i : facts.Instances(name))
    if (!i.part_of_itself.empty()) CHECK(result.out.find(" " + facts.Place(i.entry) + "\n") == std::string::npos);
}

}  // namespace

TEST_CASE("a split part inlined back into its own function is no copy of it") {
  const KernelFacts& facts = Facts();
  // gcc's function splitting can inline a function's split-off part back
  // into the function itself, "called" from its declaration line:
  // __brelse+21 of 6.1. Probing it would fire twice per call.
  const std::string why = "a split part";
  auto fn = Subject(
      {"__brelse", "d_same_name"},
      [&](Dwarf_Die* copy, Dwarf_Die* holder) {
        return facts.Origin(copy) == facts.Origin(holder) && CalledFromDeclaration(facts, copy);
      },
      [&](const std::string& name) { return PartsOfItself(facts, name, why) > 0; });
  if (!fn) return SkipCase("no function has a split part inlined back into itself");
  CheckDefinitions(facts, *fn);
}

TEST_CASE("a split part standing for another function's tail is no copy") {
  const KernelFacts& facts = Facts();
  // acpi_subsys_poweroff_late+40 of 6.1 is acpi_subsys_suspend_late's
  // tail, an inlined_subroutine "called" from that function's declaration
  // line (device_pm.c:1166) by a function declared elsewhere: perf has
  // acpi_subsys_suspend_late+0 only.
  const std::string why = "code the same";
  auto fn = Subject(
      {"acpi_subsys_suspend_late"},
      [&](Dwarf_Die* copy, Dwarf_Die* holder) {
        return facts.Origin(copy) != facts.Origin(holder) && CalledFromDeclaration(facts, copy);
      },
      [&](const std::string& name) { return PartsOfItself(facts, name, why) > 0; });
  if (!fn) return SkipCase("no copy stands for another function's tail (called from its declaration line)");
  CheckDefinitions(facts, *fn);
}

TEST_CASE("a copy called from its function's declaration line by a macro's caller is a copy") {
  const KernelFacts& facts = Facts();
  // SYSCALL_DEFINE declares __do_sys_openat and its callers on one line
  // (fs/open.c): those copies are real calls.
  auto from_declaration = [&](const std::string& name) {
    size_t n = 0;
    for (const Site& s : Sites(facts, name)) n += s.refusal.empty() && s.instance.called_from_decl;
    return n;
  };
  auto fn = Subject(
      {"__do_sys_openat"},
      [&](Dwarf_Die* copy, Dwarf_Die* holder) {
        Dwarf_Die origin = facts.Die(facts.Origin(copy));
        return CalledFromDeclaration(facts, copy) && facts.DeclLine(holder) == facts.DeclLine(&origin);
      },
      [&](const std::string& name) { return from_declaration(name) > 0; });
  if (!fn) return SkipCase("no copy is called from its function's declaration line by a function declared there too");
  CheckDefinitions(facts, *fn);
  CHECK(SplitLines(Run({"-D", *fn}).out).size() >= from_declaration(*fn));
}
