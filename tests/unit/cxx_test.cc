// SPDX-License-Identifier: GPL-2.0-or-later
//
// C++ through every command, on the shop fixture (tests/fixtures/shop.cc):
// demangled names in probe points (overloads, templates, operators, a
// lambda, a destructor), DWARF variables (this->member, references,
// std::string), funcs, line and vars; the same with --no-cache (a scan per
// name) as with the index.
#include <catch2/catch.hpp>

#include "kprobectl/elf_image.h"
#include "kprobectl/strings.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

std::string Bin() { return FixturePath("shop"); }

// The file offset of a function symbol, by its mangled name.
std::string At(const std::string& mangled) {
  auto image = ElfImage::Open(Bin());
  REQUIRE(image);
  const ElfSymbol* s = image->Find(mangled);
  REQUIRE(s);
  return Hex(*image->FileOffset(s->value));
}

std::string Define(const std::string& spec, bool no_cache = false) {
  std::vector<std::string> args = {no_cache ? "--no-cache" : "-q", "-x", Bin(), "-D", spec};
  auto r = RunKprobectl(args);
  INFO(r.err);
  REQUIRE(r.status == 0);
  return Replace(r.out, Bin(), "BIN");
}

}  // namespace

TEST_CASE("C++: probe points by demangled name, with and without the index") {
  const std::string item = At("_ZN4shop4Cart3addERKNS_4ItemEi"), price = At("_ZN4shop4Cart3addEl");
  const std::string largest = At("_ZN4shop7largestIiEET_S1_S1_"), lambda = At("_ZZ4mainENKUllE_clEl");
  const std::string kind = At("_ZNK4shop8GiftCart4kindEv"), total = At("_ZNK4shop4Cart5totalEv");
  const std::string plus = At("_ZN4shop4CartpLERKNS_4ItemE");
  struct Row {
    std::string spec, expected;
  };
  std::vector<Row> rows;
  rows.push_back({"shop::Cart::add",
                  "p:probe_shop/shop__Cart__add BIN:" + item + "\np:probe_shop/shop__Cart__add_1 BIN:" + price + "\n"});
  rows.push_back({"shop::Cart::add(long) price", "p:probe_shop/shop__Cart__add BIN:" + price + " price=%si:s64\n"});
  // References are read through, std::string as its characters, members
  // of this by offset (total_ after the vtable pointer and id_).
  rows.push_back({"shop::Cart::add(const Item&, int) name=item.name:string price=item.price count before=this->total_",
                  "p:probe_shop/shop__Cart__add BIN:" + item +
                      " name=+0(+0(%si)):string price=+32(%si):s64 count=%dx:s32 before=+16(%di):s64\n"});
  rows.push_back(
      {"shop::largest<int> a b", "p:probe_shop/shop__largest_int_ BIN:" + largest + " a=%di:s32 b=%si:s32\n"});
  rows.push_back({"main::{lambda(long)#1}::operator() p",
                  "p:probe_shop/main___lambda_long__1___operator__ BIN:" + lambda + " p=%si:s64\n"});
  rows.push_back({"shop::GiftCart::kind this->note_:string",
                  "p:probe_shop/shop__GiftCart__kind BIN:" + kind + " note_=+0(+32(%di)):string\n"});
  rows.push_back({"shop::Cart::total%return $retval",
                  "r:probe_shop/shop__Cart__total__return BIN:" + total + " retval=$retval:s64\n"});
  rows.push_back({"shop::Cart::operator+= $params",
                  "p:probe_shop/shop__Cart__operator__ BIN:" + plus + " this=%di:x64 item=%si:x64\n"});
  rows.push_back({"_ZN4shop4Cart3addEl price", "p:probe_shop/shop__Cart__add BIN:" + price + " price=%si:s64\n"});
  for (const Row& row : rows) {
    INFO(row.spec);
    CHECK(Define(row.spec) == row.expected);
    CHECK(Define(row.spec, true) == row.expected);
  }
  // A method's line: relative to its declaration, "::" never a line separator.
  std::string line = Define("shop::Cart::add(long):2");
  CHECK(line == "p:probe_shop/shop__Cart__add_L2 BIN:0x1595\n");
  // A destructor has its complete and deleting variants: both probed.
  CHECK(SplitLines(Define("shop::Cart::~Cart")).size() == 2);
}

TEST_CASE("C++: what does not match says what does") {
  auto r = RunKprobectl({"-x", Bin(), "-D", "shop::Cart::add(Item&) price"});
  CHECK(r.status == 1);
  CHECK(Replace(r.err, Bin(), "BIN") ==
        "kprobectl: error: no overload of 'shop::Cart::add' takes (Item&) in BIN\n"
        "  hint: its overloads take (long), (shop::Item const&, int)\n");
  auto none = RunKprobectl({"-x", Bin(), "-D", "shop::Cart::remove"});
  CHECK(none.status == 1);
  CHECK(Replace(none.err, Bin(), "BIN") ==
        "kprobectl: error: no function 'shop::Cart::remove' in the debuginfo of BIN\n"
        "  hint: list its functions with 'kprobectl -x BIN funcs'\n");
}

TEST_CASE("C++: funcs, vars and line name functions as C++ does") {
  auto funcs = RunKprobectl({"-x", Bin(), "funcs", "shop::*"});
  REQUIRE(funcs.status == 0);
  CHECK(funcs.out ==
        "shop::Apply(long (*)(long), long)\n"
        "shop::Cart::Cart(int)\n"
        "shop::Cart::add(long)\n"
        "shop::Cart::add(shop::Item const&, int)\n"
        "shop::Cart::kind() const\n"
        "shop::Cart::operator+=(shop::Item const&)\n"
        "shop::Cart::total() const\n"
        "shop::Cart::~Cart()\n"
        "shop::GiftCart::GiftCart(int, char const*)\n"
        "shop::GiftCart::kind() const\n"
        "shop::GiftCart::~GiftCart()\n"
        "shop::largest<int>(int, int)\n"
        "shop::largest<long>(long, long)\n");
  auto vars = RunKprobectl({"-x", Bin(), "vars", "shop::Cart::add(const Item&, int)"});
  INFO(vars.err);
  REQUIRE(vars.status == 0);
  CHECK(vars.out ==
        "Available variables at shop::Cart::add(const Item&, int)\n"
        "\t@<shop::Cart::add(shop::Item const&, int)+0>\n"
        "\t\tconst class Cart*\tthis\n"
        "\t\tconst struct Item&\titem\n"
        "\t\tint\tcount\n");
  auto line = RunKprobectl({"-x", Bin(), "line", "shop::Cart::add(long)"});
  INFO(line.err);
  REQUIRE(line.status == 0);
  CHECK(line.out == "<shop::Cart::add(long)@" + FixtureSourceDir() +
                        "/shop.cc:0>\n"
                        "      0  KEEP long Cart::add(long price) {\n"
                        "      1    total_ += price;\n"
                        "      2    items_ += 1;\n"
                        "      3    std::printf(\"add %ld -> %ld\\n\", price, total_);\n"
                        "      4    return total_;\n"
                        "         }\n");
}

TEST_CASE("C++: a method whose symbol has an ABI tag is found by the name as written") {
  std::string bin = FixturePath("abi_tags");
  for (std::string flag : {"--no-cache", "-q"}) {  // a scan, then the index
    auto added = RunKprobectl({flag, "-x", bin, "-D", "shop::Cart::label(int) n this->label_:string"});
    INFO(added.err);
    REQUIRE(added.status == 0);
    // The std::string returned is in %di.
    CHECK(added.out == "p:probe_abi_tags/shop__Cart__label " + bin + ":0x16e0 n=%dx:s32 label_=+0(+0(%si)):string\n");
  }
  CHECK(RunKprobectl({"-x", bin, "funcs", "shop::*"}).out == "shop::Cart::label(int) const\n");
  CHECK(RunKprobectl({"-x", bin, "line", "shop::Cart::label"}).out ==
        "<shop::Cart::label@" + FixtureSourceDir() +
            "/abi_tags.cc:0>\n      0    __attribute__((noinline)) std::string label(int n) const { return label_ + "
            "std::to_string(n); }\n");
  CHECK(RunKprobectl({"-x", bin, "-D", "shop::Cart::label%return"}).status == 0);
}

TEST_CASE("an alias the DWARF does not name (glibc's malloc): the function DWARF has at its address") {
  std::string bin = FixturePath("alias");
  auto image = ElfImage::Open(bin);
  REQUIRE(image);
  const ElfSymbol* s = image->Find("scale");
  REQUIRE(s);
  std::string at = Hex(*image->FileOffset(s->value));
  for (bool no_cache : {false, true}) {
    auto r = RunKprobectl(
        {no_cache ? "--no-cache" : "-q", "-x", bin, "-D", "scale value factor", "-D", "scale%return $retval"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(Replace(r.out, bin, "BIN") == "p:probe_alias/scale BIN:" + at +
                                            " value=%di:s64 factor=%si:s32\n"
                                            "r:probe_alias/scale__return BIN:" +
                                            at + " retval=$retval:s64\n");
  }
  // FUNC@SRC asks for one file's function by its DWARF name: no symbol fallback.
  CHECK(RunKprobectl({"-q", "-x", bin, "-D", "scale@alias.c value"}).status != 0);
  auto r = RunKprobectl({"-q", "-x", bin, "-D", "scale:2"});
  CHECK(r.status != 0);  // lines need the function's own name, and the error gives it
  CHECK(r.err ==
        "kprobectl: error: 'scale' is '__impl_scale' in the debuginfo; its lines are known by that name\n"
        "  hint: write '__impl_scale:2'\n");
}
