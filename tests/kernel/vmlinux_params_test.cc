// SPDX-License-Identifier: GPL-2.0-or-later
//
// kprobectl on a real kernel image, offline: whose variables a probe at an
// inlined copy sees. Copies nested at the same address, copies folded into
// their caller, copies that begin with an empty range, values known only
// at the frame's entry, functions on the kprobe blacklist: each was a
// difference from perf on the 6.1 cloud kernel. Subjects and answers come
// from the image under test (kernel_facts.h, vmlinux_expect.h).
#include <dwarf.h>

#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "kernel_fetch.h"
#include "kprobectl/strings.h"
#include "vmlinux_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

std::set<std::string> ParameterNames(const KernelFacts& facts, Dwarf_Die* scope) {
  std::set<std::string> names;
  for (Dwarf_Die& var : facts.Variables(scope, true)) names.insert(KernelFacts::Name(&var));
  return names;
}

// A copy of another function nested in the site's copy that begins at the
// same address (at a later view) with a parameter located there (of a name
// the site's function has too, with `same_name`): what perf's $params
// takes in as well.
bool NestedAtEntry(const KernelFacts& facts, const Instance& site, bool same_name) {
  if (!site.inlined) return false;
  std::vector<Dwarf_Die> scopes = facts.ScopesAt(site.entry);
  Dwarf_Die die = facts.Die(site.die);
  std::set<std::string> own = ParameterNames(facts, &die);
  for (Dwarf_Die& inner : scopes) {
    if (dwarf_dieoffset(&inner) == site.die) break;
    if (dwarf_tag(&inner) != DW_TAG_inlined_subroutine || facts.EntryOf(&inner) != site.entry) continue;
    for (Dwarf_Die& var : facts.Variables(&inner, true))
      if (FetchAt(&var, site.entry, false).kind == Fetch::kFetched &&
          (!same_name || own.contains(KernelFacts::Name(&var))))
        return true;
  }
  return false;
}

// A copy with a copy nested in it that begins at the same address, with a
// parameter located there (of a name the outer copy has too, with `same_name`).
bool CopyNestedAtEntry(const KernelFacts& facts, Dwarf_Die* copy, bool same_name) {
  Dwarf_Die child;
  if (dwarf_child(copy, &child) != 0) return false;
  const uint64_t entry = facts.EntryOf(copy);
  std::set<std::string> own = ParameterNames(facts, copy);
  do {
    if (dwarf_tag(&child) != DW_TAG_inlined_subroutine || facts.EntryOf(&child) != entry) continue;
    for (Dwarf_Die& var : facts.Variables(&child, true))
      if (FetchAt(&var, entry, false).kind == Fetch::kFetched && (!same_name || own.contains(KernelFacts::Name(&var))))
        return true;
  } while (dwarf_siblingof(&child, &child) == 0);
  return false;
}

bool HasParameters(const KernelFacts& facts, Dwarf_Die* scope) { return !facts.Variables(scope, true).empty(); }

// A site the kernel takes where `check` holds, and whose parameters the
// oracle states; no more sites than kprobectl probes at once unless told
// (--max-probes, 128).
bool Fits(const KernelFacts& facts, const std::string& name, const std::function<bool(const Site&)>& check) {
  std::vector<Site> sites = Sites(facts, name);
  if (std::count_if(sites.begin(), sites.end(), [](const Site& s) { return s.refusal.empty(); }) > 128) return false;
  for (const Site& s : sites)
    if (s.refusal.empty() && check(s) && ParamsAt(facts, s.instance, s.instance.entry).unknown.empty()) return true;
  return false;
}

// kprobectl's -D 'NAME $params' (its stdout `out`) against the oracle: the
// whole output where the oracle reads every site's parameters; else site
// by site, the same places in the same order, named NAME, NAME_1..., and
// the parameters of every site the oracle reads, those where `check`
// holds among them.
void CheckParams(const KernelFacts& facts, const std::string& name, const std::string& out,
                 const std::function<bool(const Site&)>& check) {
  Expected whole = Definitions(facts, name, true);
  if (whole.unknown.empty()) {
    CHECK(out == whole.text);
    return;
  }
  std::vector<std::string> lines = SplitLines(out);
  std::vector<Site> sites;
  for (const Site& s : Sites(facts, name))
    if (s.refusal.empty()) sites.push_back(s);
  REQUIRE(lines.size() == sites.size());
  size_t compared = 0;
  for (size_t i = 0; i < sites.size(); ++i) {
    const std::string head = "p:probe/" + name + (i ? "_" + std::to_string(i) : "") + " " + sites[i].place;
    Expected args = ParamsAt(facts, sites[i].instance, sites[i].instance.entry);
    INFO(head << (args.unknown.empty() ? "" : " (the oracle does not read: " + args.unknown + ")"));
    CHECK(lines[i].starts_with(head));
    if (!args.unknown.empty()) continue;
    CHECK(lines[i] == head + args.text);
    compared += check(sites[i]);
  }
  CHECK(compared > 0);
}

// Why kprobectl refuses to fetch `var` at the first site (by address)
// where it cannot, as its error says it; empty when it can at every site;
// nothing when the oracle does not read its location there.
std::optional<std::string> FirstRefusal(const KernelFacts& facts, const std::string& name, const std::string& var) {
  for (const Site& site : Sites(facts, name)) {
    if (!site.refusal.empty()) continue;
    const uint64_t at = site.instance.entry;
    auto die = VariableAt(facts, site.instance, at, var);
    if (!die) return "no variable '" + var + "' at ";
    std::vector<Dwarf_Die> scopes = ProbeScopes(facts, site.instance, at);
    Fetch fetch = FetchAt(&*die, at, facts.EntryOf(&scopes.back()) == at);
    if (fetch.kind == Fetch::kFetched) continue;
    if (fetch.kind == Fetch::kUnknown) return std::nullopt;
    if (fetch.text == "no location in the debuginfo")
      return "variable '" + var + "' is optimized out (no location in the debuginfo)";
    if (fetch.text.starts_with("a register's value"))
      return "'" + var + "' is only known as the value a register had when " + KernelFacts::Name(&scopes.back()) +
             " was entered (DW_OP_entry_value)";
    return "variable '" + var + "' has no location at " + WhereText(facts, site.instance, at) +
           " (optimized out there)";
  }
  return "";
}

// -D 'NAME VAR' fails, saying why as FirstRefusal does.
void CheckRefusal(const KernelFacts& facts, const std::string& name, const std::string& var) {
  auto refusal = FirstRefusal(facts, name, var);
  INFO(name << " " << var);
  if (!refusal) {
    WARN("not checked: the oracle does not read " << var << "'s location at a site of " << name);
    return;
  }
  if (refusal->empty()) return;
  auto named = Run({"-D", name + " " + var});
  CHECK(named.status == 1);
  CHECK(named.err.find(*refusal) != std::string::npos);
}

// The subject (Subject: a function with a site where `check` holds) and
// its -D 'NAME $params' checked (CheckParams); nothing when the image has
// none, the case skipped saying it `lacks` one.
std::optional<std::string> CheckedSubject(const std::vector<std::string>& preferred,
                                          const std::function<bool(Dwarf_Die*, Dwarf_Die*)>& copy_wanted,
                                          const std::function<bool(const Site&)>& check, const std::string& lacks) {
  const KernelFacts& facts = Facts();
  auto fn = Subject(preferred, copy_wanted, [&](const std::string& name) { return Fits(facts, name, check); });
  if (!fn) {
    SkipCase(lacks);
    return std::nullopt;
  }
  auto result = Run({"-D", *fn + " $params"});
  INFO(*fn << ": " << result.err);
  CheckParams(facts, *fn, result.out, check);
  return fn;
}

}  // namespace

TEST_CASE("$params at an inlined copy are the probed function's, not those of a copy nested at its entry") {
  const KernelFacts& facts = Facts();
  // em_pd_get in em_cpu_get of 6.1: IS_ERR_OR_NULL's copy begins at the
  // same address, a later view; perf's $params add its 'ptr'.
  CheckedSubject(
      {"em_pd_get"}, [&](Dwarf_Die* copy, Dwarf_Die*) { return CopyNestedAtEntry(facts, copy, false); },
      [&](const Site& s) { return NestedAtEntry(facts, s.instance, false); },
      "no copy has another function's copy nested at its entry with a parameter located there");
}

TEST_CASE("$params at a copy folded whole into its caller are the copy's, located there or not at all") {
  const KernelFacts& facts = Facts();
  // A copy whose one range is empty, [P, P) (css_next_descendant_pre in
  // cgroup_save_control+5 of 6.1), holds no address, yet its parameters
  // are the probe's, not its caller's.
  auto is_folded = [&](const Site& s) {
    Dwarf_Die die = facts.Die(s.instance.die);
    return s.instance.inlined && s.instance.ranges.empty() && !s.instance.listed.empty() && HasParameters(facts, &die);
  };
  auto fn = CheckedSubject(
      {"css_next_descendant_pre"},
      [&](Dwarf_Die* copy, Dwarf_Die* holder) {
        return KernelFacts::RangesOf(copy, false).empty() && !KernelFacts::RangesOf(copy, true).empty() &&
               HasParameters(facts, copy) && HasParameters(facts, holder);
      },
      is_folded, "no copy with parameters is folded whole into a caller (all its ranges empty)");
  if (!fn) return;
  // A parameter the first site cannot fetch: the error says where.
  Dwarf_Die first = facts.Die(Sites(facts, *fn).front().instance.die);
  for (const std::string& param : ParameterNames(facts, &first)) CheckRefusal(facts, *fn, param);
}

TEST_CASE("$params at a copy that begins with an empty range are the copy's") {
  const KernelFacts& facts = Facts();
  // hrtimer_cancel in do_nanosleep of 6.1: [+56, +56), then [+123, +139),
  // no entry_pc: the probe is at +56, and do_nanosleep's 't' is not its.
  auto begins_empty = [&](Dwarf_Die* copy) {
    auto listed = KernelFacts::RangesOf(copy, true);
    return !dwarf_hasattr(copy, DW_AT_entry_pc) && !dwarf_hasattr(copy, DW_AT_low_pc) && listed.size() > 1 &&
           listed.front().start == listed.front().end && !KernelFacts::RangesOf(copy, false).empty();
  };
  auto site_begins_empty = [&](const Site& s) {
    Dwarf_Die die = facts.Die(s.instance.die);
    return s.instance.inlined && begins_empty(&die);
  };
  CheckedSubject(
      {"hrtimer_cancel"},
      [&](Dwarf_Die* copy, Dwarf_Die* holder) { return begins_empty(copy) && HasParameters(facts, holder); },
      site_begins_empty, "no copy begins with an empty range and has code later");
}

TEST_CASE("variables are the probed function's, not those of a copy inlined at a later view of its address") {
  const KernelFacts& facts = Facts();
  // At set_memory_wb+51 of 6.1 _set_memory_wb (view 0) and
  // change_page_attr_clear (view 2) both begin, both with an 'addr'.
  auto same_name = [&](const Site& s) { return NestedAtEntry(facts, s.instance, true); };
  auto fn = CheckedSubject(
      {"_set_memory_wb"}, [&](Dwarf_Die* copy, Dwarf_Die*) { return CopyNestedAtEntry(facts, copy, true); }, same_name,
      "no copy has a copy nested at its entry with a parameter of the same name");
  if (!fn) return;
  // The same place as FUNC+OFF of the function that holds the copy.
  for (const Site& site : Sites(facts, *fn)) {
    if (!site.refusal.empty() || !same_name(site)) continue;
    const uint64_t at = site.instance.entry;
    const std::string holder = facts.OutOfLineAt(at);
    std::vector<Instance> own = facts.Instances(holder);
    auto outer = std::find_if(own.begin(), own.end(), [&](const Instance& i) {
      return !i.inlined && std::any_of(i.ranges.begin(), i.ranges.end(), [&](const Range& r) { return r.Holds(at); });
    });
    REQUIRE(outer != own.end());
    if (!site.place.starts_with(holder + "+")) continue;  // in a part of its own (FUNC.cold)
    Dwarf_Die die = facts.Die(site.instance.die);
    for (const std::string& param : ParameterNames(facts, &die)) {
      Expected args = ArgsAt(facts, *outer, at, {param});
      if (!args.unknown.empty()) continue;
      INFO(site.place << " " << param);
      CHECK(Run({"-D", site.place + " " + param}).out == "p:probe/" + holder + " " + site.place + args.text + "\n");
    }
    break;
  }
}

TEST_CASE("a line where a copy begins is the function's, and so are its variables there") {
  const KernelFacts& facts = Facts();
  // vfs_read:20 of 6.1 is where new_sync_read's copy begins; both have a
  // 'ret', and vfs_read's is the one a probe on its line fetches.
  struct Found {
    std::string fn, var;
    int line = 0;
    uint64_t at = 0;
    Instance outer;
  };
  auto fits = [&](Dwarf_Die* copy, Dwarf_Die* holder) -> std::optional<Found> {
    std::string fn = KernelFacts::Name(holder);
    const uint64_t at = facts.EntryOf(copy);
    // A name both have, fetched differently there: the copy's would be a
    // wrong value, not the same one.
    std::map<std::string, std::string> outer;
    for (Dwarf_Die& v : facts.Variables(holder, false))
      if (Fetch f = FetchAt(&v, at, false); f.kind == Fetch::kFetched) outer[KernelFacts::Name(&v)] = f.text;
    // The copy's variables there: its own and its blocks' that hold the address.
    std::string shared;
    for (Dwarf_Die& scope : facts.ScopesAt(at)) {
      for (Dwarf_Die& v : facts.Variables(&scope, false))
        if (auto it = outer.find(KernelFacts::Name(&v)); it != outer.end() && FetchAt(&v, at, false).text != it->second)
          shared = it->first;
      if (dwarf_dieoffset(&scope) == dwarf_dieoffset(copy)) break;
    }
    if (shared.empty() || facts.Place(at).rfind(fn + "+", 0) != 0) return std::nullopt;
    Dwarf_Die cu = facts.CuOf(holder);
    const std::string file = facts.DeclFile(holder);
    const int decl = facts.DeclLine(holder), last = facts.LastOwnLine(&cu, file, decl);
    Instance outer_instance = facts.InstanceOf(holder);
    if (!facts.BlacklistedAs(at).empty() || !facts.Traceable(at) ||
        ArgsAt(facts, outer_instance, at, {shared}).text != " " + shared + "=" + outer[shared])
      return std::nullopt;
    // A line of the function's own that begins there, and only there.
    std::optional<int> line;
    for (const LineRow& row : facts.Lines(&cu))
      if (!line && row.address == at && row.stmt && row.file == file && row.line > decl && row.line <= last &&
          facts.LineBlocks(&cu, file, row.line, outer_instance.ranges) == std::vector<uint64_t>{at})
        line = row.line;
    if (!line) return std::nullopt;
    return Found{fn, shared, *line - decl, at, outer_instance};
  };
  std::optional<Found> found;
  for (const Instance& i : facts.Instances("new_sync_read")) {
    if (!i.inlined || i.holder != "vfs_read") continue;
    Dwarf_Die copy = facts.Die(i.die);
    std::vector<Dwarf_Die> scopes = facts.ScopesAt(i.entry);
    if (!scopes.empty()) found = fits(&copy, &scopes.back());
  }
  if (!found)
    for (Dwarf_Off off :
         facts.FindCopies([&](Dwarf_Die*copy, Dwarf_Die*holder) { return fits(copy, holder).has_value(); }, 1)) {
      Dwarf_Die copy = facts.Die(off);
      std::vector<Dwarf_Die> scopes = facts.ScopesAt(facts.EntryOf(&copy));
      found = fits(&copy, &scopes.back());
    }
  if (!found) return SkipCase("no line of a function begins a copy that has a variable of a name the function has too");
  std::string line = std::to_string(found->line);
  Expected args = ArgsAt(facts, found->outer, found->at, {found->var});
  CHECK(Run({"-D", found->fn + ":" + line + " " + found->var}).out ==
        "p:probe/" + found->fn + "_L" + line + " " + facts.Place(found->at) + Stated(args, found->var) + "\n");
}

TEST_CASE("a register's value at the frame's entry is no value at an inlined copy's entry") {
  const KernelFacts& facts = Facts();
  // opipe_prep's flags in do_splice of 6.1 is DW_OP_entry_value(DW_OP_reg9
  // R9), do_splice's %r9 on entry, overwritten by then.
  auto entry_value_at = [&](Dwarf_Die* copy, uint64_t at) {
    for (Dwarf_Die& var : facts.Variables(copy, true))
      if (FetchAt(&var, at, false).text.starts_with("a register's value")) return KernelFacts::Name(&var);
    return std::string();
  };
  auto site_entry_value = [&](const Site& s) {
    Dwarf_Die die = facts.Die(s.instance.die);
    return s.instance.inlined && !entry_value_at(&die, s.instance.entry).empty();
  };
  auto fn = CheckedSubject(
      {"opipe_prep"}, [&](Dwarf_Die* copy, Dwarf_Die*) { return !entry_value_at(copy, facts.EntryOf(copy)).empty(); },
      site_entry_value, "no copy has a parameter known only as a register's value at the frame's entry");
  if (!fn) return;
  for (const Site& site : Sites(facts, *fn)) {
    Dwarf_Die die = facts.Die(site.instance.die);
    std::string param = entry_value_at(&die, site.instance.entry);
    if (!site.instance.inlined || param.empty()) continue;
    CheckRefusal(facts, *fn, param);
    break;
  }
}

TEST_CASE("vars lists a function on the kprobe blacklist, saying a probe there would be refused") {
  const KernelFacts& facts = Facts();
  // NOKPROBE_SYMBOL(__die_body) in 6.1; the subject has parameters.
  auto fits = [&](const std::string& name) {
    std::vector<Site> sites = Sites(facts, name);
    if (std::none_of(sites.begin(), sites.end(),
                     [](const Site& s) { return s.refusal.find("blacklist") != std::string::npos; }))
      return false;
    Dwarf_Die die = facts.Die(sites.front().instance.die);
    return HasParameters(facts, &die) && Vars(facts, name).unknown.empty() &&
           Definitions(facts, name, true).unknown.empty();
  };
  std::optional<std::string> fn;
  if (fits("__die_body")) fn = "__die_body";
  for (size_t i = 0; !fn && i < facts.Functions().size(); ++i) {
    const std::string& name = facts.Functions()[i].name;
    if (facts.HasSymbol("_kbl_addr_" + name) && !facts.Named(name).empty() && fits(name)) fn = name;
  }
  if (!fn) return SkipCase("no function with parameters is on the kprobe blacklist (no _kbl_addr_FUNC symbol)");
  std::vector<Site> sites = Sites(facts, *fn);
  auto vars = Run({"vars", *fn});
  INFO(*fn << ": " << vars.err);
  CHECK(vars.status == 0);
  CHECK(vars.out == Stated(Vars(facts, *fn), "vars " + *fn));
  auto params = Run({"-D", *fn + " $params"});
  INFO(params.err);
  size_t refused = 0;
  for (const Site& site : sites) {
    if (site.refusal.empty()) continue;
    ++refused;
    CHECK(vars.err.find("kprobectl: a probe at " + site.described + " would be refused: " + site.refusal) !=
          std::string::npos);
    if (refused < sites.size())
      CHECK(params.err.find("kprobectl: left out " + site.described + ": " + site.refusal) != std::string::npos);
  }
  if (refused == sites.size()) {
    CHECK(params.status == 1);
    CHECK(params.err.starts_with("kprobectl: error: " + sites.front().refusal));
  } else {
    CHECK(params.out == Stated(Definitions(facts, *fn, true), *fn + " $params"));
  }
}
