// SPDX-License-Identifier: GPL-2.0-or-later
#include "vmlinux_expect.h"

#include <dwarf.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <set>

#include "kernel_fetch.h"
#include "kprobectl/strings.h"

namespace kprobectl::test {

namespace {

// A member's path as an argument's name: each run of characters that are
// not an identifier's one '_', none at the end ("bits[0]" -> "bits_0").
std::string Underscored(const std::string& path) {
  std::string out;
  for (char c : path) {
    bool ident = std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    if (ident)
      out += c;
    else if (!out.empty() && out.back() != '_')
      out += '_';
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

// A variable with a location that is no constant holds an aggregate vars
// can list (its members are read by name); a scalar must be fetchable.
bool Listed(Dwarf_Die* var, const Fetch& fetch, std::string* unknown) {
  if (fetch.kind != Fetch::kUnknown) return fetch.kind == Fetch::kFetched;
  if (fetch.text == "not a scalar") return true;
  *unknown = KernelFacts::Name(var) + ": " + fetch.text;
  return false;
}

}  // namespace

std::vector<Site> Sites(const KernelFacts& facts, const std::string& name) {
  std::vector<Site> out;
  std::set<uint64_t> seen;
  for (const Instance& instance : facts.Instances(name)) {
    if (!instance.part_of_itself.empty()) continue;
    const Symbol* symbol = facts.FunctionAt(instance.entry);
    if (!symbol) continue;  // a weak definition overridden: no symbol holds its code
    if (!instance.inlined && symbol->name.starts_with(name + ".part.")) continue;
    if (!seen.insert(instance.entry).second) continue;
    Site site{instance, facts.Place(instance.entry), "", ""};
    Dwarf_Die die = facts.Die(instance.die);
    site.described = instance.inlined ? name + " inlined in " + symbol->name : name + " of " + facts.DeclFile(&die);
    if (std::string listed = facts.BlacklistedAs(instance.entry); !listed.empty())
      site.refusal = "'" + symbol->name + "' is on the kernel's kprobe blacklist (" + listed + ")";
    else if (!facts.Traceable(instance.entry))
      site.refusal = "'" + symbol->name + "' cannot be kprobed: ftrace cannot trace it";
    out.push_back(std::move(site));
  }
  return out;
}

std::vector<Dwarf_Die> ProbeScopes(const KernelFacts& facts, const Instance& site, uint64_t address) {
  std::vector<Dwarf_Die> chain = facts.ScopesAt(address);
  auto probed = std::find_if(chain.begin(), chain.end(), [&](Dwarf_Die& d) { return dwarf_dieoffset(&d) == site.die; });
  if (probed != chain.end()) {
    const bool at_entry = site.entry == address;
    for (auto inner = probed; inner != chain.begin();) {
      --inner;
      if (dwarf_tag(&*inner) != DW_TAG_inlined_subroutine) continue;
      uint64_t entry = facts.EntryOf(&*inner);
      if (entry == address || (at_entry && entry > address)) {
        chain.erase(chain.begin(), inner + 1);
        break;
      }
    }
    return chain;
  }
  Dwarf_Die die = facts.Die(site.die);
  std::vector<Dwarf_Off> ancestors = facts.AncestorsOf(&die);
  std::vector<Dwarf_Die> folded = {die};
  for (Dwarf_Die& d : chain)
    if (std::find(ancestors.begin(), ancestors.end(), dwarf_dieoffset(&d)) != ancestors.end()) folded.push_back(d);
  return folded;
}

Expected ParamsAt(const KernelFacts& facts, const Instance& site, uint64_t address) {
  std::vector<Dwarf_Die> scopes = ProbeScopes(facts, site, address);
  if (scopes.empty()) return {"", "no scope holds " + facts.Place(address)};
  const bool frame_entry = facts.EntryOf(&scopes.back()) == address;
  Dwarf_Die die = facts.Die(site.die);
  Expected out;
  std::set<std::string> names;
  for (Dwarf_Die& var : facts.Variables(&die, true)) {
    std::string name = KernelFacts::Name(&var);
    if (!names.insert(name).second) continue;
    if (auto members = MembersInPieces(&var, address)) {
      for (const MemberFetch& m : *members) {
        if (m.fetch.kind == Fetch::kUnknown) return {"", name + "." + m.path + ": " + m.fetch.text};
        if (m.fetch.kind == Fetch::kFetched) out.text += " " + name + "_" + Underscored(m.path) + "=" + m.fetch.text;
      }
      continue;
    }
    Fetch fetch = FetchAt(&var, address, frame_entry);
    if (fetch.kind == Fetch::kUnknown) return {"", name + " at " + facts.Place(address) + ": " + fetch.text};
    if (fetch.kind == Fetch::kFetched) out.text += " " + name + "=" + fetch.text;
  }
  return out;
}

namespace {

// One definition per site the kernel takes, with `args` of each.
Expected DefinitionsWith(const KernelFacts& facts, const std::string& name,
                         const std::function<Expected(const Instance&)>& args) {
  Expected out;
  size_t n = 0;
  for (const Site& site : Sites(facts, name)) {
    if (!site.refusal.empty()) continue;
    Expected a = args(site.instance);
    if (!a.unknown.empty()) return {"", a.unknown};
    out.text += "p:probe/" + name + (n ? "_" + std::to_string(n) : "") + " " + site.place + a.text + "\n";
    ++n;
  }
  return out;
}

}  // namespace

Expected Definitions(const KernelFacts& facts, const std::string& name, bool params) {
  return DefinitionsWith(facts, name,
                         [&](const Instance& site) { return params ? ParamsAt(facts, site, site.entry) : Expected{}; });
}

Expected Definitions(const KernelFacts& facts, const std::string& name, const std::vector<std::string>& exprs) {
  return DefinitionsWith(facts, name, [&](const Instance& site) { return ArgsAt(facts, site, site.entry, exprs); });
}

std::optional<Dwarf_Die> VariableAt(const KernelFacts& facts, const Instance& site, uint64_t address,
                                    const std::string& name) {
  for (Dwarf_Die& scope : ProbeScopes(facts, site, address))
    for (Dwarf_Die& var : facts.Variables(&scope, false))
      if (KernelFacts::Name(&var) == name) return var;
  return std::nullopt;
}

Expected ArgsAt(const KernelFacts& facts, const Instance& site, uint64_t address,
                const std::vector<std::string>& exprs) {
  std::vector<Dwarf_Die> scopes = ProbeScopes(facts, site, address);
  if (scopes.empty()) return {"", "no scope holds " + facts.Place(address)};
  const bool frame_entry = facts.EntryOf(&scopes.back()) == address;
  Expected out;
  std::set<std::string> names;
  for (const std::string& expr : exprs) {
    size_t end = expr.find_first_of(".[");
    std::string var_name = expr.substr(0, end), path = end == std::string::npos ? "" : expr.substr(end);
    if (path.starts_with(".")) path.erase(0, 1);
    auto var = VariableAt(facts, site, address, var_name);
    if (!var) return {"", "no variable " + var_name + " at " + facts.Place(address)};
    Fetch fetch;
    if (path.empty()) {
      fetch = FetchAt(&*var, address, frame_entry);
    } else {
      auto members = MembersInPieces(&*var, address);
      auto m =
          members ? std::find_if(members->begin(), members->end(), [&](const MemberFetch& f) { return f.path == path; })
                  : std::vector<MemberFetch>::iterator();
      if (!members || m == members->end()) return {"", expr + " is no member in pieces at " + facts.Place(address)};
      fetch = m->fetch;
    }
    if (fetch.kind != Fetch::kFetched) return {"", expr + " at " + facts.Place(address) + ": " + fetch.text};
    std::string name = expr.substr(expr.find_last_of(".]") == std::string::npos ? 0 : expr.find_last_of(".]") + 1);
    std::string unique = name;
    for (int n = 1; !names.insert(unique).second; ++n) unique = name + "_" + std::to_string(n);
    out.text += " " + unique + "=" + fetch.text;
  }
  return out;
}

std::string WhereText(const KernelFacts& facts, const Instance& site, uint64_t address) {
  Dwarf_Die die = facts.Die(site.die);
  Dwarf_Die cu = facts.CuOf(&die);
  const std::string decl_file = facts.DeclFile(&die);
  const int decl = facts.DeclLine(&die);
  auto [file, line] = facts.LineAt(&cu, address, decl_file);
  std::string where = file == decl_file && line >= decl ? KernelFacts::Name(&die) + ":" + std::to_string(line - decl)
                                                        : file.substr(file.rfind('/') + 1) + ":" + std::to_string(line);
  return where + " (" + Hex(address) + ")";
}

OwnLines LinesOf(const KernelFacts& facts, const std::string& name) {
  OwnLines out;
  std::vector<Instance> instances = facts.Instances(name);
  std::erase_if(instances, [](const Instance& i) { return !i.part_of_itself.empty(); });
  if (instances.empty()) return out;
  // The first CU's; its out-of-line instance (else a copy) says where the
  // function is declared.
  Dwarf_Die first =
      facts.Die(std::min_element(instances.begin(), instances.end(), [](const Instance& a, const Instance& b) {
                  return a.die < b.die;
                })->die);
  const Dwarf_Off cu_offset = dwarf_dieoffset(&(first = facts.CuOf(&first)));
  std::erase_if(instances, [&](const Instance& i) {
    Dwarf_Die die = facts.Die(i.die);
    Dwarf_Die cu = facts.CuOf(&die);
    return dwarf_dieoffset(&cu) != cu_offset;
  });
  auto chosen = std::find_if(instances.begin(), instances.end(), [](const Instance& i) { return !i.inlined; });
  Dwarf_Die decl_die = facts.Die((chosen != instances.end() ? *chosen : instances.front()).die);
  out.file = facts.DeclFile(&decl_die);
  out.decl = facts.DeclLine(&decl_die);
  Dwarf_Die cu = facts.CuOf(&decl_die);
  const int last = facts.LastOwnLine(&cu, out.file, out.decl);
  for (const Instance& i : instances) {
    Dwarf_Die die = facts.Die(i.die);
    if (facts.DeclFile(&die) != out.file) continue;
    out.lines.insert(out.decl);  // line 0: the entry, whether or not a row says so
    for (const LineRow& row : facts.Lines(&cu))
      if (!row.end_sequence && row.stmt && row.file == out.file && row.line <= last &&
          std::any_of(i.ranges.begin(), i.ranges.end(), [&](const Range& r) { return r.Holds(row.address); }))
        out.lines.insert(row.line);
  }
  return out;
}

Expected VarsAt(const KernelFacts& facts, const Site& site) {
  const uint64_t address = site.instance.entry;
  Expected out;
  out.text = "\t@<" + site.place + ">";
  if (site.instance.inlined) out.text += " (" + site.described.substr(0, site.described.find(' ')) + " inlined)";
  out.text += "\n";
  std::vector<Dwarf_Die> scopes = ProbeScopes(facts, site.instance, address);
  if (scopes.empty()) return {"", "no scope holds " + site.place};
  const bool frame_entry = facts.EntryOf(&scopes.back()) == address;
  // Inner scopes first, a name once (the inner one hides the outer), then
  // printed outer scopes first.
  std::vector<std::vector<Dwarf_Die>> by_scope;
  std::set<std::string> names;
  for (Dwarf_Die& scope : scopes) {
    by_scope.emplace_back();
    for (Dwarf_Die& var : facts.Variables(&scope, false))
      if (names.insert(KernelFacts::Name(&var)).second) by_scope.back().push_back(var);
    if (dwarf_tag(&scope) == DW_TAG_subprogram) break;
  }
  bool any = false;
  for (auto scope = by_scope.rbegin(); scope != by_scope.rend(); ++scope) {
    for (Dwarf_Die& var : *scope) {
      std::string note;
      bool listed = false;
      if (auto members = MembersInPieces(&var, address)) {
        std::vector<std::string> readable;
        for (const MemberFetch& m : *members) {
          if (m.fetch.kind == Fetch::kUnknown)
            return {"", KernelFacts::Name(&var) + "." + m.path + ": " + m.fetch.text};
          if (m.fetch.kind == Fetch::kFetched) readable.push_back(KernelFacts::Name(&var) + "." + m.path);
        }
        listed = !readable.empty();
        std::string joined;
        for (const std::string& r : readable) joined += (joined.empty() ? "" : " ") + r;
        note = "\t(in pieces: " + joined + ")";
      } else {
        listed = Listed(&var, FetchAt(&var, address, frame_entry), &out.unknown);
        if (!out.unknown.empty()) return out;
      }
      if (!listed) continue;
      any = true;
      out.text += "\t\t" + TypeNameOf(&var) + "\t" + KernelFacts::Name(&var) + note + "\n";
    }
  }
  if (!any) out.text += "\t\t(No matched variables)\n";
  return out;
}

Expected Vars(const KernelFacts& facts, const std::string& name) {
  Expected out{"Available variables at " + name + "\n", ""};
  for (const Site& site : Sites(facts, name)) {
    Expected block = VarsAt(facts, site);
    if (!block.unknown.empty()) return block;
    out.text += block.text;
  }
  return out;
}

}  // namespace kprobectl::test
