// SPDX-License-Identifier: GPL-2.0-or-later
//
// What kprobectl should print about a function of the kernel image under
// test, computed from the oracle's facts (kernel_facts.h, kernel_fetch.h)
// by the rules README states: which instances a probe reaches, the
// parameters $params fetches at each, the variables vars lists. In: the
// facts and a function's name. Out: whole outputs, or why the oracle
// cannot state one (a form it does not read), which the test reports.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kernel_facts.h"

namespace kprobectl::test {

// A place a probe on a function reaches.
struct Site {
  Instance instance;
  std::string place;      // SYMBOL+OFFSET
  std::string described;  // "F inlined in G", "F of FILE", as kprobectl's messages name it
  std::string refusal;    // why the kernel refuses a probe there ("'G' is on the kernel's kprobe blacklist"), or empty
};

// The sites of a probe on `name`, by address: its instances, less the
// copies that are parts of itself (Instance::part_of_itself), out-of-line
// code that is a split part (FUNC.part.N, entered from FUNC's head only)
// or that no symbol holds (a weak definition another file overrides).
std::vector<Site> Sites(const KernelFacts& facts, const std::string& name);

// An answer the oracle computed, or why it could not.
struct Expected {
  std::string text;
  std::string unknown;  // non-empty: the oracle does not read what the image has here
};

// The parameters $params fetches at `address` in the site: " a=%di:x64
// b=\0:u64" (a struct in pieces member by member, " b_m=..."), leaving out
// those with no location there.
Expected ParamsAt(const KernelFacts& facts, const Instance& site, uint64_t address);
// What -D 'NAME $params' (or -D NAME, without `params`) prints: one
// definition per site the kernel takes, named NAME, NAME_1...
Expected Definitions(const KernelFacts& facts, const std::string& name, bool params);
// What -D 'NAME EXPR...' prints: each site's fetches (ArgsAt) at its entry.
Expected Definitions(const KernelFacts& facts, const std::string& name, const std::vector<std::string>& exprs);
// One site's block of `vars NAME`: "\t@<PLACE>[ (NAME inlined)]\n" and a
// line per variable that can be fetched there, "\t\tTYPE\tNAME".
Expected VarsAt(const KernelFacts& facts, const Site& site);
// What `vars NAME` prints: every site's block, refused ones too.
Expected Vars(const KernelFacts& facts, const std::string& name);

// What -D 'NAME EXPR...' fetches at `address` in the site: each EXPR a
// variable ("ret") or a member path of one in pieces ("optval.user",
// "ld_addrs[1].imm"), named by its last member, a repeated name with _1:
// " user=%cx:x64 is_kernel=%r8:b1@0/8".
Expected ArgsAt(const KernelFacts& facts, const Instance& site, uint64_t address,
                const std::vector<std::string>& exprs);
// The variable `name` a probe at `address` in the site sees, if any.
std::optional<Dwarf_Die> VariableAt(const KernelFacts& facts, const Instance& site, uint64_t address,
                                    const std::string& name);

// Where kprobectl's messages say a probe at `address` in the site is:
// "FUNC:LINE (0xADDR)", or "FILE:LINE (0xADDR)" for a line outside the
// function's own text (its caller's, a macro's).
std::string WhereText(const KernelFacts& facts, const Instance& site, uint64_t address);

// The lines `line NAME` lists (relative to the declaration, line 0 the
// entry), from every instance in the first CU that holds one: the is_stmt
// rows of the function's file in their ranges, up to its last own line
// (KernelFacts::LastOwnLine). Absolute line numbers.
struct OwnLines {
  std::string file;
  int decl = 0;
  std::set<int> lines;
};
OwnLines LinesOf(const KernelFacts& facts, const std::string& name);

// The scopes whose variables a probe at `address` in `site` sees,
// innermost first, up to the out-of-line function: those the DWARF says
// hold the address, less the copies nested in the probed one that begin
// there (at a later view: they have not begun when the probe fires); a
// copy that begins with an empty range holds no address, yet it is the
// probed function there, so it comes first.
std::vector<Dwarf_Die> ProbeScopes(const KernelFacts& facts, const Instance& site, uint64_t address);

}  // namespace kprobectl::test
