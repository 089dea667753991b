// SPDX-License-Identifier: GPL-2.0-or-later
//
// kprobectl on a real kernel image, offline: variables whose DWARF
// location is more than a register. A value in memory behind a loaded
// pointer, structs split over registers and constants (DW_OP_piece,
// DW_OP_bit_piece), and where else a variable can be fetched when it has
// no location at the probe. Subjects and answers come from the image under
// test (kernel_facts.h, kernel_fetch.h, vmlinux_expect.h).
#include <dwarf.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "kernel_fetch.h"
#include "kprobectl/strings.h"
#include "vmlinux_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

// The variables of a scope that are fetched at `at` as `shape` says.
std::vector<std::string> VariablesFetched(const KernelFacts& facts, Dwarf_Die* scope, uint64_t at,
                                          const std::function<bool(const Fetch&)>& shape) {
  std::vector<std::string> out;
  for (Dwarf_Die& var : facts.Variables(scope, false))
    if (shape(FetchAt(&var, at, false))) out.push_back(KernelFacts::Name(&var));
  return out;
}

// A fetch of memory at an address loaded from memory: "+200(+112(%di))".
bool Nested(const Fetch& f) { return f.kind == Fetch::kFetched && std::count(f.text.begin(), f.text.end(), '(') >= 2; }

bool HasOp(const std::vector<Dwarf_Op>& ops, unsigned atom) {
  return std::any_of(ops.begin(), ops.end(), [&](const Dwarf_Op& op) { return op.atom == atom; });
}

// A variable somewhere in a scope's subtree, by name.
std::optional<Dwarf_Die> Descendant(Dwarf_Die* scope, const std::string& name) {
  Dwarf_Die child;
  if (dwarf_child(scope, &child) != 0) return std::nullopt;
  do {
    int tag = dwarf_tag(&child);
    if (tag == DW_TAG_variable && KernelFacts::Name(&child) == name) return child;
    if (tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine)
      if (auto found = Descendant(&child, name)) return found;
  } while (dwarf_siblingof(&child, &child) == 0);
  return std::nullopt;
}

}  // namespace

TEST_CASE("a variable in memory at a loaded pointer plus an offset is a nested fetch") {
  const KernelFacts& facts = Facts();
  // bpf_map_mmap_close's map in 6.1: DW_OP_breg5 RDI+112, DW_OP_deref,
  // DW_OP_plus_uconst 0xc8 (vma->vm_file->private_data).
  std::string var;
  auto fits = [&](const std::string& name) {
    for (const Site& site : Sites(facts, name)) {
      Dwarf_Die die = facts.Die(site.instance.die);
      for (const std::string& v : VariablesFetched(facts, &die, site.instance.entry, Nested)) {
        Expected all = Definitions(facts, name, std::vector<std::string>{v});
        if (all.unknown.empty() && !all.text.empty()) {
          var = v;
          return true;
        }
      }
    }
    return false;
  };
  std::optional<std::string> fn;
  if (fits("bpf_map_mmap_close")) fn = "bpf_map_mmap_close";
  // Else a function with one at its entry (all its sites must have it).
  if (!fn)
    facts.FindVariables(
        [&](Dwarf_Die* v, Dwarf_Die* holder) {
          if (!Nested(FetchAt(v, facts.EntryOf(holder), false)) || !fits(KernelFacts::Name(holder))) return false;
          fn = KernelFacts::Name(holder);
          return true;
        },
        1);
  if (!fn) return SkipCase("no variable is in memory at a loaded pointer plus an offset at a function's entry");
  auto result = Run({"-D", *fn + " " + var});
  INFO(*fn << " " << var << ": " << result.err);
  CHECK(result.out == Stated(Definitions(facts, *fn, std::vector<std::string>{var}), *fn + " " + var));
}

TEST_CASE("a struct passed in two registers is fetched member by member") {
  const KernelFacts& facts = Facts();
  // do_tcp_setsockopt's sockptr_t optval at the entry in 6.1: DW_OP_reg2
  // RCX, DW_OP_piece 0x8, DW_OP_reg8 R8, DW_OP_piece 0x8; its pointers (an
  // anonymous union) are RCX, is_kernel a 1-bit bitfield at bit 64: R8's bit 0.
  std::string param;
  auto in_registers = [&](const std::string& name) {
    std::vector<Instance> instances = facts.Instances(name);
    if (instances.empty() || instances.front().inlined) return false;
    const Instance& fn = instances.front();
    Dwarf_Die die = facts.Die(fn.die);
    for (Dwarf_Die& var : facts.Variables(&die, true)) {
      auto ops = LocationAt(&var, fn.entry);
      auto members = MembersInPieces(&var, fn.entry);
      if (!ops || !members || HasOp(*ops, DW_OP_bit_piece) || members->size() < 2) continue;
      auto in_regs = std::count_if(ops->begin(), ops->end(),
                                   [](const Dwarf_Op& op) { return op.atom >= DW_OP_reg0 && op.atom <= DW_OP_reg31; });
      bool all_read = std::all_of(members->begin(), members->end(),
                                  [](const MemberFetch& m) { return m.fetch.kind == Fetch::kFetched; });
      if (in_regs == 2 && all_read && Definitions(facts, name, true).unknown.empty() &&
          Vars(facts, name).unknown.empty()) {
        param = KernelFacts::Name(&var);
        return true;
      }
    }
    return false;
  };
  std::optional<std::string> fn;
  if (in_registers("do_tcp_setsockopt")) fn = "do_tcp_setsockopt";
  for (size_t i = 0; !fn && i < facts.Functions().size(); i += 7)
    if (const std::string& name = facts.Functions()[i].name; name.ends_with("setsockopt") && in_registers(name))
      fn = name;
  if (!fn) return SkipCase("no function's parameter is a struct in two registers at its entry");
  INFO(*fn << " " << param);
  const Instance entry = facts.Instances(*fn).front();
  Dwarf_Die var = *VariableAt(facts, entry, entry.entry, param);
  auto members = *MembersInPieces(&var, entry.entry);
  // Its last two members by name, then all of them through $params.
  std::vector<std::string> named = {param + "." + members[members.size() - 2].path, param + "." + members.back().path};
  CHECK(Run({"-D", *fn + " " + named[0] + " " + named[1]}).out ==
        "p:probe/" + *fn + " " + facts.Place(entry.entry) +
            Stated(ArgsAt(facts, entry, entry.entry, named), "members") + "\n");
  std::string params = Stated(Definitions(facts, *fn, true), "$params");
  CHECK(Run({"-D", *fn + " $params"}).out == params);
  // BTF, through the ABI: the same.
  CHECK(Run({"--btf", "-D", *fn + " $params"}).out == params);
  CHECK(Run({"vars", *fn}).out == Stated(Vars(facts, *fn), "vars"));
  auto whole = Run({"-D", *fn + " " + param});
  CHECK(whole.status == 1);
  std::string paths;
  for (const MemberFetch& m : members) paths += (paths.empty() ? "" : " ") + param + "." + m.path;
  CHECK(whole.err == "kprobectl: error: invalid argument: '" + param + "' is split over several places here (" +
                         PiecesText(&var, entry.entry) +
                         ": DW_OP_piece), and the kernel fetches one place per argument\n    " + *fn + " " + param +
                         "\n" + std::string(4 + fn->size() + 1, ' ') + "^\n  hint: fetch its members: " + paths + "\n");
}

namespace {

// A place where a variable is in pieces, one a member of the kind `wanted`
// (a constant's bits, DW_OP_bit_piece; a register's upper half,
// DW_OP_bregN 0, DW_OP_constNu 32, DW_OP_shr) reads, with a member of each
// other kind there is: as -D names them ("ld_addrs[0].code").
struct PiecesPlace {
  Instance holder;
  uint64_t at = 0;
  std::vector<std::string> exprs;
};

using Kind = std::pair<MemberFetch::Piece, bool>;  // its piece, and whether it is a bitfield

std::optional<PiecesPlace> PiecesWith(const KernelFacts& facts, Dwarf_Die* var, Dwarf_Die* holder, Kind wanted) {
  const std::string name = KernelFacts::Name(var);
  for (const LocationEntry& e : LocationList(var)) {
    auto pieces = std::count_if(e.ops.begin(), e.ops.end(), [](const Dwarf_Op& op) {
      return op.atom == DW_OP_piece || op.atom == DW_OP_bit_piece;
    });
    if (pieces < 2) continue;
    auto members = MembersInPieces(var, e.start);
    if (!members) continue;
    std::map<Kind, std::string> by_kind;
    for (const MemberFetch& m : *members)
      if (m.fetch.kind == Fetch::kFetched && m.piece != MemberFetch::kOther && !m.zero_extended)
        by_kind.try_emplace({m.piece, m.bitfield}, name + (m.path.starts_with("[") ? "" : ".") + m.path);
    if (!by_kind.contains(wanted) || !facts.Place(e.start).starts_with(KernelFacts::Name(holder) + "+") ||
        !facts.BlacklistedAs(e.start).empty() || !facts.Traceable(e.start))
      continue;
    Instance outer = facts.InstanceOf(holder);
    auto visible = VariableAt(facts, outer, e.start, name);
    if (!visible || dwarf_dieoffset(&*visible) != dwarf_dieoffset(var)) continue;
    PiecesPlace out{outer, e.start, {}};
    for (const auto& [kind, expr] : by_kind) out.exprs.push_back(expr);
    return out;
  }
  return std::nullopt;
}

// Such a place for do_misc_fixups's ld_addrs (6.1's subject), else anywhere.
std::optional<PiecesPlace> FindPieces(const KernelFacts& facts, Kind wanted) {
  std::optional<PiecesPlace> found;
  for (const Instance& i : facts.Instances("do_misc_fixups")) {
    Dwarf_Die die = facts.Die(i.die);
    auto var = i.inlined || found ? std::nullopt : Descendant(&die, "ld_addrs");
    if (var) found = PiecesWith(facts, &*var, &die, wanted);
  }
  if (!found)
    facts.FindVariables(
        [&](Dwarf_Die* var, Dwarf_Die* holder) { return (found = PiecesWith(facts, var, holder, wanted)).has_value(); },
        1);
  return found;
}

}  // namespace

TEST_CASE("pieces that are constants, bits, and parts of a register") {
  const KernelFacts& facts = Facts();
  // do_misc_fixups of 6.1 builds BPF_LD_IMM64(BPF_REG_3, addr) in
  // ld_addrs: code DW_OP_lit24, dst_reg DW_OP_lit3 (DW_OP_bit_piece 4), the
  // first imm DW_OP_reg0 RAX (4 bytes), the second DW_OP_breg0 RAX+0,
  // DW_OP_const1u 32, DW_OP_shr: RAX's upper half.
  std::vector<std::pair<Kind, std::string>> kinds = {
      {{MemberFetch::kConstant, true}, "a constant's bits"},
      {{MemberFetch::kRegisterShifted, false}, "a register's upper half"}};
  std::vector<std::string> missing;
  for (const auto& [kind, what] : kinds) {
    auto found = FindPieces(facts, kind);
    if (!found) {
      missing.push_back(what);
      continue;
    }
    std::string place = facts.Place(found->at), spec = place;
    for (const std::string& e : found->exprs) spec += " " + e;
    INFO(what << ": " << spec);
    CHECK(Run({"-D", spec}).out == "p:probe/" + place.substr(0, place.find('+')) + " " + place +
                                       Stated(ArgsAt(facts, found->holder, found->at, found->exprs), "the pieces") +
                                       "\n");
  }
  std::string lacking = "no variable is in pieces with a member in " + Join(missing, " or in ");
  if (missing.size() == kinds.size()) return SkipCase(lacking);
  if (!missing.empty()) WARN("not checked on this image: " << lacking);
}

TEST_CASE("a struct in pieces, one of them a register's bit") {
  const KernelFacts& facts = Facts();
  // copy_from_sockptr_offset inlined at sk_setsockopt+121 of 6.1:
  // src.is_kernel is DW_OP_breg0 RAX+0, DW_OP_lit1, DW_OP_and (DW_OP_bit_piece 1).
  auto anded = [&](Dwarf_Die* scope, uint64_t entry) {
    for (Dwarf_Die& var : facts.Variables(scope, true)) {
      auto members = MembersInPieces(&var, entry);
      if (members && std::any_of(members->begin(), members->end(),
                                 [](const MemberFetch& m) { return m.piece == MemberFetch::kRegisterBit; }))
        return true;
    }
    return false;
  };
  std::optional<Site> bit;
  auto fits = [&](const std::string& name) {
    for (const Site& s : Sites(facts, name)) {
      Dwarf_Die die = facts.Die(s.instance.die);
      if (s.refusal.empty() && anded(&die, s.instance.entry) &&
          ParamsAt(facts, s.instance, s.instance.entry).unknown.empty()) {
        bit = s;
        return true;
      }
    }
    return false;
  };
  auto fn = Subject(
      {"copy_from_sockptr_offset"}, [&](Dwarf_Die* copy, Dwarf_Die*) { return anded(copy, facts.EntryOf(copy)); },
      fits);
  if (!fn) return SkipCase("no parameter holds a register's bit 0 (DW_OP_and) in pieces at a copy's entry");
  auto result = Run({"-D", *fn + " $params"});
  INFO(*fn << " at " << bit->place << ": " << result.err);
  CHECK(result.out.find(" " + bit->place + Stated(ParamsAt(facts, bit->instance, bit->instance.entry), "$params") +
                        "\n") != std::string::npos);
}

TEST_CASE("where else a variable can be fetched, for lines before the function's own") {
  const KernelFacts& facts = Facts();
  // Inside new_sync_read's copy in vfs_read of 6.1 (from vfs_read+357):
  // its 'ret' has no location at +360.
  struct Found {
    Instance outer;
    uint64_t at = 0;
    std::string var;
  };
  // The first line of the copy (after its entry) where a variable of its,
  // with a location list, has no location.
  auto find_in = [&](Dwarf_Die* copy, Dwarf_Die* holder) -> std::optional<Found> {
    Instance outer = facts.InstanceOf(holder);
    Instance inner = facts.InstanceOf(copy);
    if (!facts.BlacklistedAs(inner.entry).empty() || !facts.Traceable(inner.entry)) return std::nullopt;
    Dwarf_Die cu = facts.CuOf(copy);
    for (const LineRow& row : facts.Lines(&cu)) {
      if (row.address == inner.entry || !row.stmt ||
          std::none_of(inner.ranges.begin(), inner.ranges.end(), [&](const Range& r) { return r.Holds(row.address); }))
        continue;
      for (Dwarf_Die& scope : facts.ScopesAt(row.address)) {
        for (Dwarf_Die& var : facts.Variables(&scope, false)) {
          std::vector<LocationEntry> list = LocationList(&var);
          if (list.empty() || (list.size() == 1 && list[0].end == static_cast<uint64_t>(-1))) continue;
          auto seen = VariableAt(facts, outer, row.address, KernelFacts::Name(&var));
          if (seen && dwarf_dieoffset(&*seen) == dwarf_dieoffset(&var) &&
              FetchAt(&var, row.address, false).text == "no location here")
            return Found{outer, row.address, KernelFacts::Name(&var)};
        }
        if (dwarf_dieoffset(&scope) == dwarf_dieoffset(copy)) break;
      }
    }
    return std::nullopt;
  };
  std::optional<Found> found;
  for (const Instance& i : facts.Instances("new_sync_read")) {
    if (found || !i.inlined || i.holder != "vfs_read") continue;
    Dwarf_Die copy = facts.Die(i.die);
    std::vector<Dwarf_Die> scopes = facts.ScopesAt(i.entry);
    found = find_in(&copy, &scopes.back());
  }
  if (!found)
    for (Dwarf_Off off : facts.FindCopies([&](Dwarf_Die*c, Dwarf_Die*h) { return find_in(c, h).has_value(); }, 1)) {
      Dwarf_Die copy = facts.Die(off);
      found = find_in(&copy, &facts.ScopesAt(facts.EntryOf(&copy)).back());
    }
  if (!found) return SkipCase("no copy has a variable without a location at one of its lines");
  // The lines of the function where the variable has a location.
  Dwarf_Die fn = facts.Die(found->outer.die);
  Dwarf_Die cu = facts.CuOf(&fn);
  const std::string file = facts.DeclFile(&fn), name = KernelFacts::Name(&fn);
  const int decl = facts.DeclLine(&fn), last = facts.LastOwnLine(&cu, file, decl);
  Dwarf_Die var = *VariableAt(facts, found->outer, found->at, found->var);
  std::set<int> code, lines;
  for (const LineRow& row : facts.Lines(&cu))
    if (!row.end_sequence && row.stmt && row.file == file && row.line <= last &&
        std::any_of(found->outer.ranges.begin(), found->outer.ranges.end(),
                    [&](const Range& r) { return r.Holds(row.address); }))
      code.insert(row.line);
  for (int line : code)
    for (uint64_t hit : facts.LineBlocks(&cu, file, line, found->outer.ranges))
      for (const LocationEntry& e : LocationList(&var))
        if (!e.ops.empty() && e.ops[0].atom != DW_OP_entry_value && e.ops[0].atom != DW_OP_GNU_entry_value &&
            hit >= e.start && hit < e.end)
          lines.insert(line);
  std::string hint;
  size_t n = 0;
  for (int l : lines) {
    if (n++ == 8) break;
    hint += (hint.empty() ? "" : " ") + (l >= decl ? name + ":" + std::to_string(l - decl)
                                                   : file.substr(file.rfind('/') + 1) + ":" + std::to_string(l));
  }
  std::string place = facts.Place(found->at);
  REQUIRE(place.starts_with(name + "+"));
  auto result = Run({"-D", place + " " + found->var});
  INFO(place << " " << found->var);
  CHECK(result.status == 1);
  CHECK(result.err.find("variable '" + found->var + "' has no location at " +
                        WhereText(facts, found->outer, found->at) + " (optimized out there)") != std::string::npos);
  CHECK(result.err.find(hint.empty() ? "  hint: it has no location anywhere in " + name + "\n"
                                     : "  hint: it can be fetched at " + hint + "\n") != std::string::npos);
}
