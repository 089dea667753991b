// SPDX-License-Identifier: GPL-2.0-or-later
//
// Go and Rust binaries through the commands, on the fixtures of
// tests/fixtures/lang built by Debian's golang-go and rustc: probe points
// by the names each language writes (Go's "main.(*Server).Serve" and
// "main.Sum[...]", Rust's demangled paths, legacy and v0), events named
// from them, funcs listing them, the nearest names for a typo.
#include <catch2/catch.hpp>

#include "kprobectl/cxx_names.h"
#include "kprobectl/elf_image.h"
#include "kprobectl/strings.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

// The file offsets of the function symbols shown as `name` (demangled for
// Rust), in address order.
std::vector<std::string> At(const std::string& bin, const std::string& name) {
  auto image = ElfImage::Open(bin);
  REQUIRE(image);
  std::vector<uint64_t> addresses;
  for (const ElfSymbol& s : image->symbols())
    if (s.type == ElfSymbol::kFunction && s.value && SymbolCxxName(s.name).qualified == name)
      addresses.push_back(s.value);
  std::sort(addresses.begin(), addresses.end());
  std::vector<std::string> out;
  for (uint64_t a : addresses) out.push_back(Hex(*image->FileOffset(a)));
  INFO(name << " in " << bin);
  REQUIRE(!out.empty());
  return out;
}

CliResult Run(const std::string& bin, std::vector<std::string> args) {
  args.insert(args.begin(), {"-q", "-x", bin});
  return RunKprobectl(args);
}

std::string Define(const std::string& bin, const std::string& spec) {
  auto r = Run(bin, {"-D", spec});
  INFO(spec << ": " << r.err);
  REQUIRE(r.status == 0);
  return Replace(r.out, bin, "BIN");
}

}  // namespace

TEST_CASE("Go: probe points by Go's names, events named from them") {
  for (std::string name : {"gofx", "gofx_noopt"}) {
    std::string bin = FixturePath(name);
    auto image = ElfImage::Open(bin);
    REQUIRE(image);
    CHECK(image->go_version().starts_with("go1."));
    std::string serve = At(bin, "main.(*Server).Serve")[0], handle = At(bin, "main.handle")[0];
    std::string sum_int = At(bin, "main.Sum[go.shape.int_0]")[0];
    std::string sum_float = At(bin, "main.Sum[go.shape.float64_0]")[0];
    std::string group = "probe_" + name;
    CHECK(Define(bin, "main.(*Server).Serve") == "p:" + group + "/main__Server__Serve BIN:" + serve + "\n");
    CHECK(Define(bin, "\"main.(*Server).Serve\"") == "p:" + group + "/main__Server__Serve BIN:" + serve + "\n");
    CHECK(Define(bin, "main.handle") == "p:" + group + "/main__handle BIN:" + handle + "\n");
    CHECK(Define(bin, "main.handle@*") == "p:" + group + "/main__handle BIN:" + handle + "\n");
    // Both instantiations, in address order (int's is linked first here).
    std::string first = std::min(sum_int, sum_float), second = std::max(sum_int, sum_float);
    CHECK(Define(bin, "main.Sum[...]") ==
          "p:" + group + "/main__Sum BIN:" + first + "\np:" + group + "/main__Sum_1 BIN:" + second + "\n");
    CHECK(Define(bin, "main.Sum[go.shape.int_0]") == "p:" + group + "/main__Sum BIN:" + sum_int + "\n");

    // A string named whole: its bytes up to a bound, and its length.
    CHECK_THAT(Define(bin, "main.(*Server).Serve path short=path:u8[3]"),
               Catch::EndsWith(" path=+0(%bx):u8[64] path__len=%cx:s64 short=+0(%bx):u8[3] short__len=%cx:s64\n"));
    CHECK_THAT(Define(bin, "main.handle tags=it.Tags"), Catch::EndsWith(" tags=+0(%di):u8[64] tags__len=%si:s64\n"));
    auto typed = Run(bin, {"-D", "main.(*Server).Serve path:string"});
    CHECK(typed.status != 0);
    CHECK(typed.err ==
          "kprobectl: error: invalid argument: 'path' is a Go string, a pointer and a length: its bytes are fetched "
          "as u8[N], N the bound (1 to 64), and cut at its length\n"
          "    main.(*Server).Serve path:string\n"
          "                              ^\n"
          "  hint: write :u8[N] to set the bound (64 without a type), or fetch its members\n");
    // FUNC%return: a probe on each return instruction, $retval in RAX.
    std::string returns = Define(bin, "main.(*Server).Serve%return $retval:s64");
    CHECK(returns.starts_with("p:" + group + "/main__Server__Serve__return BIN:0x"));
    CHECK_THAT(returns, Catch::EndsWith(" retval=%ax:s64\n"));
    CHECK(returns.find("r:") == std::string::npos);
    auto named = Run(bin, {"-D", "main.handle%return total"});
    CHECK(named.status != 0);
    CHECK(named.err.find("hint: at a Go function's return its results are in registers") != std::string::npos);
    // $argN in Go's register ABI (Go 1.17+ on x86-64), not System V's.
    CHECK(Define(bin, "main.handle $arg1 $arg2 $arg9") ==
          "p:" + group + "/main__handle BIN:" + handle + " arg1=%ax arg2=%bx arg9=%r11\n");
    auto stack = Run(bin, {"-D", "main.handle $arg10"});
    CHECK(stack.status != 0);
    CHECK(stack.err.find("$arg10 of a Go function: Go's register ABI has 9 integer argument registers on x86-64") !=
          std::string::npos);

    // Never a uretprobe on Go code: a function that leaves by a jump is refused.
    auto ret = Run(bin, {"-D", "runtime.morestack_noctxt.abi0%return"});
    CHECK(ret.status != 0);
    CHECK(ret.err.find("kprobectl: error: cannot find the returns of 'runtime.morestack_noctxt.abi0': it jumps out "
                       "of itself at 0x") != std::string::npos);

    auto typo = Run(bin, {"-D", "main.handel"});
    CHECK(typo.status != 0);
    CHECK(typo.err.find("no function 'main.handel'") != std::string::npos);
    CHECK(typo.err.find("similar names: main.handle") != std::string::npos);

    // Go writes no DW_AT_decl_line: a function begins at its entry's row.
    auto line = Run(bin, {"line", "main.handle"});
    REQUIRE(line.status == 0);
    CHECK(line.out.find("\n      1  \tfmt.Printf(\"handle name=") != std::string::npos);
    CHECK(Run(bin, {"line", "main.handle:0-0"}).out.find("      0  func handle(it Item, count int)") !=
          std::string::npos);

    auto funcs = Run(bin, {"funcs", "main.*"});
    REQUIRE(funcs.status == 0);
    for (std::string f : {"main.(*Server).Serve\n", "main.Sum[go.shape.int_0]\n", "main.handle\n", "main.main\n"})
      CHECK(funcs.out.find(f) != std::string::npos);
  }
}

TEST_CASE("Rust: probe points by demangled paths, legacy and v0 manglings") {
  for (std::string name : {"rsfx_O0", "rsfx_O2", "rsfx_v0"}) {
    std::string bin = FixturePath(name);
    std::string group = "probe_" + name;
    std::string add = At(bin, "rsfx::shop::Cart::add")[0], greet = At(bin, "rsfx::greet")[0];
    CHECK(Define(bin, "rsfx::shop::Cart::add") == "p:" + group + "/rsfx__shop__Cart__add BIN:" + add + "\n");
    CHECK(Define(bin, "rsfx::greet") == "p:" + group + "/rsfx__greet BIN:" + greet + "\n");
    auto typo = Run(bin, {"-D", "rsfx::shop::Cart::ad"});
    CHECK(typo.status != 0);
    CHECK(typo.err.find("rsfx::shop::Cart::add") != std::string::npos);
    auto funcs = Run(bin, {"funcs", "rsfx::*"});
    REQUIRE(funcs.status == 0);
    for (std::string f : {"rsfx::shop::Cart::add\n", "rsfx::greet\n", "rsfx::main\n"})
      CHECK(funcs.out.find(f) != std::string::npos);
    CHECK(funcs.out.find("17h") == std::string::npos);
  }
}
