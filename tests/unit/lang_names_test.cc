// SPDX-License-Identifier: GPL-2.0-or-later
//
// Go's and Rust's names (lang_names.h): Rust's manglings demangled through
// libiberty, Go's names as globs and event names, quoted probe points.
#include "kprobectl/lang_names.h"

#include <catch2/catch.hpp>

#include "kprobectl/cxx_names.h"
#include "kprobectl/glob.h"
#include "kprobectl/probe_spec.h"

using namespace kprobectl;

TEST_CASE("Rust: legacy and v0 symbols demangled without hashes, C++ left to libstdc++") {
  struct Row {
    std::string symbol, demangled;
  };
  // Symbols of rustc 1.63's builds (tests/fixtures/lang/rsfx.rs).
  std::vector<Row> rows = {
      {"_ZN4rsfx4shop4Cart3add17h605f5b2f04ee22b8E", "rsfx::shop::Cart::add"},
      {"_ZN4rsfx4main28_$u7b$$u7b$closure$u7d$$u7d$17h128105d761fc945bE", "rsfx::main::{{closure}}"},
      {"_ZN4core3fmt5write17h0123456789abcdefE.llvm.4242", "core::fmt::write"},
      {"_RNvMNtCsi7GFBnvyxwE_1r4shopNtB2_4Cart3add", "r::shop::Cart::add"},
      {"_RINvCsi7GFBnvyxwE_1r3genhEB2_", "r::gen::<u8>"},
      {"_RNCNvCsi7GFBnvyxwE_1r4main0B3_", "r::main::{closure#0}"},
      {"_ZN4shop4Cart3addEl", "shop::Cart::add(long)"},
      // Impls on types that are no path keep their brackets, which tell them apart.
      {"_RNvMNtNtCs6IL9ONYDOZW_4core3ptr7mut_ptrOh7is_nullCsj9RPml7LDWX_6ledger", "<*mut u8>::is_null"},
      {"_RNvMNtNtCs6IL9ONYDOZW_4core3ptr7mut_ptrORDNtCsj9RPml7LDWX_6ledger5ShapeEL_7is_nullBG_",
       "<*mut &dyn ledger::Shape>::is_null"},
  };
  for (const Row& row : rows) {
    INFO(row.symbol);
    auto demangled = Demangle(row.symbol);
    REQUIRE(demangled);
    CHECK(*demangled == row.demangled);
    CHECK(IsMangled(row.symbol));
  }
  CHECK_FALSE(IsRustSymbol("_ZN4shop4Cart3addEl"));
  CHECK_FALSE(IsRustSymbol("_ZN4shop17h0123456789abcdeXE"));
  CHECK_FALSE(DemangleRust("main.handle"));
  CHECK(SymbolCxxName("_ZN4rsfx4shop4Cart3add17h605f5b2f04ee22b8E").qualified == "rsfx::shop::Cart::add");
  CHECK(LastScope(*Demangle("_RNvMNtCsi7GFBnvyxwE_1r4shopNtB2_4Cart3add")) == "add");
}

TEST_CASE("Go: written names as globs, shapes as [...], event names") {
  struct Row {
    std::string written, symbol;
    bool matches;
  };
  std::vector<Row> rows = {
      {"main.(*Server).Serve", "main.(*Server).Serve", true},
      {"main.(*Server).Serve", "main.(xServer).Serve", false},
      {"main.Sum[...]", "main.Sum[go.shape.int_0]", true},
      {"main.Sum[...]", "main.Sum[go.shape.float64_0]", true},
      {"main.Sum[...]", "main.Summary", false},
      {"main.Sum[go.shape.int_0]", "main.Sum[go.shape.int_0]", true},
      {"main.Sum[go.shape.int_0]", "main.Sum[go.shape.float64_0]", false},
      {"main.*", "main.main.func1", true},
      {"net/http.(*Server).*", "net/http.(*Server).Serve", true},
      {"main.handle", "main.handle", true},
  };
  for (const Row& row : rows) {
    INFO(row.written << " ~ " << row.symbol << " (glob " << GoGlob(row.written) << ")");
    CHECK(GlobMatch(GoGlob(row.written), row.symbol) == row.matches);
  }
  CHECK_FALSE(IsGlob(GoGlob("main.(*Server).Serve")));
  CHECK_FALSE(IsGlob(GoGlob("main.Sum[go.shape.int_0]")));
  CHECK(IsGlob(GoGlob("main.Sum[...]")));

  CHECK(GoEventBase("main.(*Server).Serve") == "main__Server__Serve");
  CHECK(GoEventBase("net/http.HandleFunc") == "net__http__HandleFunc");
  CHECK(GoEventBase("main.Sum[go.shape.int_0]") == "main__Sum");
  CHECK(GoEventBase("main.main.func1") == "main__main__func1");
  CHECK(GoEventBase("example.com/x/y.T.M") == "example__com__x__y__T__M");
  CHECK(GoDisplayName("main.Sum[go.shape.int_0]") == "main.Sum[...]");
  CHECK(GoDisplayName("main.(*List[go.shape.int_0]).Len") == "main.(*List[...]).Len");
}

TEST_CASE("Quoted function names: taken verbatim, never a source file") {
  struct Row {
    std::string spec, function, described;
  };
  std::vector<Row> rows = {
      {"\"main.handle\":3", "main.handle", "main.handle:3"},
      {"\"net/http.(*Server).Serve\"%return", "net/http.(*Server).Serve", "net/http.(*Server).Serve%return"},
      {"\"<r::Cart as core::fmt::Debug>::fmt\" x", "<r::Cart as core::fmt::Debug>::fmt",
       "<r::Cart as core::fmt::Debug>::fmt"},
      {"ev=\"main.Sum[...]\"+4", "main.Sum[...]", "main.Sum[...]+4"},
      {"main.handle@*:3", "main.handle", "main.handle:3"},
  };
  for (const Row& row : rows) {
    INFO(row.spec);
    auto spec = ParseProbeSpec(row.spec);
    REQUIRE(spec);
    CHECK(spec->point.function == row.function);
    CHECK(spec->point.file.empty());
    CHECK(DescribePoint(spec->point) == row.described);
  }
  auto unclosed = ParseProbeSpec("\"main.handle");
  REQUIRE_FALSE(unclosed);
  CHECK(unclosed.error().message ==
        "invalid probe point: a quoted function name needs its closing '\"'\n    \"main.handle\n    ^");
  auto stuck = ParseProbeSpec("\"main.handle\"x");
  REQUIRE_FALSE(stuck);
  CHECK(stuck.error().message ==
        "invalid probe point: expected ':', '+', '@', '%' or ';' after the quoted function name\n"
        "    \"main.handle\"x\n" +
            std::string(4 + 13, ' ') + "^");
}
