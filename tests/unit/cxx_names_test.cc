// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/cxx_names.h"

#include <catch2/catch.hpp>

using namespace kprobectl;

TEST_CASE("C++ names: demangled, split into the name a probe point matches and its parameters") {
  struct Row {
    const char* mangled;
    const char* qualified;
    const char* params;
    const char* qualifiers;
  } rows[] = {
      {"_ZN4shop4Cart3addERKNS_4ItemEi", "shop::Cart::add", "(shop::Item const&, int)", ""},
      {"_ZNK4shop4Cart5totalEv", "shop::Cart::total", "()", " const"},
      {"_ZN4shop7largestIiEET_S1_S1_", "shop::largest<int>", "(int, int)", ""},  // return type dropped
      {"_ZN4shop4CartD2Ev", "shop::Cart::~Cart", "()", ""},
      {"_ZN4shop4CartpLERKNS_4ItemE", "shop::Cart::operator+=", "(shop::Item const&)", ""},
      {"_ZN4shop4CartltERKS0_", "shop::Cart::operator<", "(shop::Cart const&)", ""},
      {"_ZN4shop4CartclEv", "shop::Cart::operator()", "()", ""},
      {"_ZZ4mainENKUllE_clEl", "main::{lambda(long)#1}::operator()", "(long)", " const"},
      {"_ZN12_GLOBAL__N_16helperEi", "(anonymous namespace)::helper", "(int)", ""},
      {"_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back", "(int const&)", ""},
      {"_ZN4shop5ApplyEPFllEl", "shop::Apply", "(long (*)(long), long)", ""},
      {"_ZN4shop8GiftCartC2EiPKc.cold", "shop::GiftCart::GiftCart", "(int, char const*)", " [clone .cold]"},
      {"_ZN4shop4CartcvbEv", "shop::Cart::operator bool", "()", ""},
      // An ABI tag (a std::string returned) is no part of the name as written.
      {"_ZNK4shop4Cart5labelB5cxx11Ei", "shop::Cart::label", "(int)", " const"},
  };
  for (const Row& row : rows) {
    INFO(row.mangled);
    auto demangled = Demangle(row.mangled);
    REQUIRE(demangled);
    CxxName name = SplitCxxName(*demangled);
    CHECK(name.qualified == row.qualified);
    CHECK(name.params == row.params);
    CHECK(name.qualifiers == row.qualifiers);
  }
  CHECK_FALSE(Demangle("compute"));
  CHECK_FALSE(Demangle("_Znot_a_name"));
  CHECK(SymbolCxxName("compute").qualified == "compute");
  CHECK(DisplaySymbol("_ZN4shop7largestIiEET_S1_S1_") == "shop::largest<int>(int, int)");
  CHECK(DisplaySymbol("main") == "main");
  // Code made for a function is not the function.
  auto thunk = Demangle("_ZThn8_N4shop8GiftCart4kindEv");
  REQUIRE(thunk);
  CHECK(MadeForAnother(*thunk));
  CHECK(SplitCxxName(*thunk).qualified == *thunk);
}

TEST_CASE("C++ names: written as a probe point") {
  CHECK(IsCxxName("shop::Cart::add"));
  CHECK(IsCxxName("shop::Cart::add(int)"));
  CHECK(IsCxxName("largest<int>"));
  CHECK(IsCxxName("operator new"));
  CHECK_FALSE(IsCxxName("do_sys_openat2"));
  CHECK_FALSE(IsCxxName("clamp.constprop.0"));
  CHECK(SplitCxxName("shop::Cart::add(const Item&, int)").qualified == "shop::Cart::add");
  CHECK(SplitCxxName("shop::Cart::add(const Item&, int)").params == "(const Item&, int)");
  CHECK(SplitCxxName("shop::Cart::add").params.empty());
  CHECK(SplitCxxName("main::{lambda(long)#1}::operator()").qualified == "main::{lambda(long)#1}::operator()");
  CHECK(SplitCxxName("main::{lambda(long)#1}::operator()").params.empty());
  CHECK(SplitCxxName("shop::F::operator()(long)").qualified == "shop::F::operator()");
  CHECK(SplitCxxName("shop::F::operator()(long)").params == "(long)");
  CHECK(LastScope("shop::Cart::add") == "add");
  CHECK(LastScope("shop::Box<ns::T>::get") == "get");
  CHECK(LastScope("shop::largest<int>") == "largest<int>");
  CHECK(LastScope("shop::Cart::operator<") == "operator<");
  CHECK(LastScope("main::{lambda(long)#1}::operator()") == "operator()");
  CHECK(LastScope("(anonymous namespace)::helper") == "helper");
  CHECK(LastScope("plain") == "plain");
}

TEST_CASE("C++ names: a written parameter list picks overloads") {
  CHECK(ParamsMatch("(int)", "(int)"));
  CHECK(ParamsMatch("(long)", "(long)"));
  CHECK_FALSE(ParamsMatch("(int)", "(long)"));
  CHECK(ParamsMatch("(const Item&, int)", "(shop::Item const&, int)"));
  CHECK(ParamsMatch("(shop::Item const &,int)", "(shop::Item const&, int)"));
  CHECK(ParamsMatch("(const char*)", "(char const*)"));
  CHECK(ParamsMatch("()", "()"));
  CHECK(ParamsMatch("(void)", "()"));
  CHECK_FALSE(ParamsMatch("(int)", "(int, int)"));
  CHECK_FALSE(ParamsMatch("(Item&)", "(shop::Item const&)"));
  CHECK_FALSE(ParamsMatch("(tem const&)", "(shop::Item const&)"));  // a scope, not any suffix
  CHECK(ParamsMatch("(unsigned long)", "(unsigned long)"));
  CHECK(ParamsMatch("(long (*)(long), long)", "(long (*)(long), long)"));
}
