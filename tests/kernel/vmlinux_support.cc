// SPDX-License-Identifier: GPL-2.0-or-later
#include "vmlinux_support.h"

// For Catch's TestSpec: whether this run names the test cases it runs.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <catch2/catch.hpp>
#include <cstdlib>
#include <memory>
#include <set>

#include "kprobectl/strings.h"

namespace kprobectl::test {

std::string Vmlinux() {
  const char* info = std::getenv("KP_VM_KERNEL_INFO");
  std::string text = info ? ReadFile(info) : std::string();
  auto words = SplitWords(text);
  if (words.size() != 3) {
    if (std::getenv("CI") && std::string(std::getenv("CI")) == "true") FAIL("no VM kernel: " << (info ? info : ""));
    WARN("SKIPPED: the VM's kernel was not fetched (tests/vm/kernel-info)");
    std::exit(4);
  }
  return words[2];
}

const KernelFacts& Facts() {
  static std::unique_ptr<KernelFacts> facts = std::make_unique<KernelFacts>(Vmlinux());
  return *facts;
}

namespace {

// Every test gets the same index cache, built once.
struct Cache {
  ScopedEnv env{"XDG_CACHE_HOME", FixturePath("vmlinux-cache")};
};

}  // namespace

CliResult Run(const std::vector<std::string>& args) {
  static Cache cache;
  std::vector<std::string> all = {"-k", Vmlinux()};
  all.insert(all.end(), args.begin(), args.end());
  return RunKprobectl(all);
}

void SkipCase(const std::string& reason) {
  WARN("SKIPPED on " << Vmlinux() << ": " << reason);
  if (Catch::getCurrentContext().getConfig()->testSpec().hasFilters()) std::exit(4);
}

std::optional<std::string> Subject(const std::vector<std::string>& preferred,
                                   const std::function<bool(Dwarf_Die*, Dwarf_Die*)>& copy_wanted,
                                   const std::function<bool(const std::string&)>& fits) {
  for (const std::string& name : preferred)
    if (fits(name)) return name;
  std::set<std::string> tried(preferred.begin(), preferred.end());
  // Candidates in DIE order; a few dozen are enough to meet one that fits.
  for (Dwarf_Off copy : Facts().FindCopies(copy_wanted, 60)) {
    Dwarf_Die die = Facts().Die(copy);
    std::string name = KernelFacts::Name(&die);
    if (tried.insert(name).second && fits(name)) return name;
  }
  return std::nullopt;
}

std::string Stated(const Expected& expected, const std::string& what) {
  INFO("the oracle cannot state " << what << ": " << expected.unknown);
  REQUIRE(expected.unknown.empty());
  return expected.text;
}

std::vector<std::string> ListedLineNumbers(const std::string& out) {
  std::vector<std::string> numbers;
  for (const std::string& line : SplitLines(out))
    if (auto words = SplitWords(line); !words.empty() && !line.starts_with("<")) numbers.push_back(words[0]);
  return numbers;
}

}  // namespace kprobectl::test
