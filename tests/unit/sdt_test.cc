// SPDX-License-Identifier: GPL-2.0-or-later
//
// USDT markers: the notes read from the fixtures (against readelf -n), the
// operands of their arguments, and the uprobes they resolve to.
#include <catch2/catch.hpp>

#include "kprobectl/cli.h"
#include "kprobectl/elf_image.h"
#include "kprobectl/kernel_features.h"
#include "kprobectl/resolve.h"
#include "kprobectl/strings.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

// readelf -n's account of the notes, as "PROVIDER:NAME LOCATION SEMAPHORE ARGS".
std::vector<std::string> ReadelfNotes(const std::string& fixture) {
  std::vector<std::string> out;
  std::string provider, name, location, semaphore;
  for (const std::string& raw : SplitLines(ReadFile(FixturePath(fixture) + ".notes"))) {
    std::string line(Trim(raw));
    auto value = [&](std::string_view key) { return line.substr(key.size()); };
    if (size_t at = line.find("Provider: "); at != std::string::npos) provider = line.substr(at + 10);
    if (line.starts_with("Name: ")) name = value("Name: ");
    if (line.starts_with("Location: ")) {
      auto fields = SplitWords(line);  // Location: 0x.., Base: 0x.., Semaphore: 0x..
      location = Hex(*ParseUnsigned(fields[1].substr(0, fields[1].size() - 1)));
      semaphore = Hex(*ParseUnsigned(fields[5]));
    }
    if (line.starts_with("Arguments:"))
      out.push_back(provider + ":" + name + " " + location + " " + semaphore + " " +
                    std::string(Trim(std::string_view(line).substr(10))));
  }
  return out;
}

std::vector<std::string> OurNotes(const std::string& fixture) {
  auto image = ElfImage::Open(FixturePath(fixture));
  REQUIRE(image);
  std::vector<std::string> out;
  for (const SdtNote& n : image->sdt_notes())
    out.push_back(n.provider + ":" + n.name + " " + Hex(n.address) + " " + Hex(n.semaphore) + " " + n.args);
  return out;
}

}  // namespace

TEST_CASE("SDT notes are read as readelf reads them, in a program and a library") {
  for (const char* fixture : {"sdt", "libsdtfx.so", "arm64/sdt", "arm64/libsdtfx.so"}) {
    INFO(fixture);
    auto expected = ReadelfNotes(fixture);
    CHECK(expected.size() >= 2);
    CHECK(OurNotes(fixture) == expected);
  }
  // A binary without markers has none.
  auto plain = ElfImage::Open(FixturePath("target_O2"));
  REQUIRE(plain);
  CHECK(plain->sdt_notes().empty());
}

namespace {

// The address of a marker's Nth site, from readelf's account.
uint64_t SiteAddress(const std::string& fixture, const std::string& marker, size_t nth = 0) {
  for (const std::string& note : ReadelfNotes(fixture)) {
    auto fields = SplitWords(note);
    if (fields[0] == marker && nth-- == 0) return *ParseUnsigned(fields[1]);
  }
  FAIL("no marker " + marker);
  return 0;
}

// Its file offset, as the uprobe names it.
std::string SiteOffset(const std::string& fixture, const std::string& marker, size_t nth = 0) {
  auto image = ElfImage::Open(FixturePath(fixture));
  REQUIRE(image);
  return Hex(*image->FileOffset(SiteAddress(fixture, marker, nth)));
}

std::string WithBin(std::string text, const std::string& fixture) { return Replace(text, FixturePath(fixture), "BIN"); }

}  // namespace

TEST_CASE("SDT: a marker becomes a uprobe at its site, its arguments typed by their sizes") {
  auto plain = RunKprobectl({"-x", FixturePath("sdt"), "-D", "sdt_sdtfx:plain"});
  INFO(plain.err);
  REQUIRE(plain.status == 0);
  std::string line = WithBin(plain.out, "sdt");
  // %rip-relative: @+ the global's address less the code segment's bias (0 in this PIE).
  auto image = ElfImage::Open(FixturePath("sdt"));
  REQUIRE(image);
  std::string global = Hex(image->Find("sdtfx_global")->value);
  CHECK(line == "p:sdt_sdtfx/plain BIN:" + SiteOffset("sdt", "sdtfx:plain") +
                    " arg1=%di:s32 arg2=%si:s64 arg3=%ax:u64 arg4=%dx:s64 arg5=@+" + global +
                    ":s64 arg6=\\1234:s32 arg7=-8(%sp):s64\n");
  // The same by every spelling perf and users have for it.
  for (const char* spelling : {"%sdt_sdtfx:plain", "sdtfx:plain", "%sdtfx:plain", "%plain", "sdt_sdtfx:pl*"}) {
    INFO(spelling);
    CHECK(RunKprobectl({"-x", FixturePath("sdt"), "-D", spelling}).out == plain.out);
  }
}

TEST_CASE("SDT: a marker at two sites, a semaphore, named and typed arguments, one left out") {
  std::string bin = FixturePath("sdt");
  auto twice = RunKprobectl({"-x", bin, "-D", "sdtfx:twice"});
  REQUIRE(twice.status == 0);
  CHECK(WithBin(twice.out, "sdt") == "p:sdt_sdtfx/twice BIN:" + SiteOffset("sdt", "sdtfx:twice", 0) +
                                         " arg1=%di:s32\n"
                                         "p:sdt_sdtfx/twice_1 BIN:" +
                                         SiteOffset("sdt", "sdtfx:twice", 1) + " arg1=\\2:s32\n");
  auto image = ElfImage::Open(bin);
  REQUIRE(image);
  std::string semaphore = Hex(*image->FileOffset(image->Find("sdtfx_counted_semaphore")->value));
  auto counted = RunKprobectl({"-x", bin, "-D", "sdtfx:counted name=arg2:string arg1 first=$arg1:u8"});
  INFO(counted.err);
  REQUIRE(counted.status == 0);
  CHECK(WithBin(counted.out, "sdt") == "p:sdt_sdtfx/counted BIN:" + SiteOffset("sdt", "sdtfx:counted") + "(" +
                                           semaphore + ") name=+0(%si):string arg1=%di:s32 first=%di:u8\n");
  // A scaled index is no fetcharg: left out of the default list, saying so.
  auto indexed = RunKprobectl({"-x", bin, "-D", "sdtfx:indexed"});
  REQUIRE(indexed.status == 0);
  CHECK(WithBin(indexed.out, "sdt") ==
        "p:sdt_sdtfx/indexed BIN:" + SiteOffset("sdt", "sdtfx:indexed") + " arg2=%di:s16\n");
  CHECK(indexed.err ==
        "kprobectl: note: arg1 of sdt_sdtfx:indexed (-4@(%rax,%rcx,4)) cannot be fetched: marker argument "
        "'-4@(%rax,%rcx,4)' is a memory reference with an index register (BASE + INDEX*SCALE), which the kernel's "
        "fetchargs cannot add; it is left out\n");
  // ... and an error when asked for by name.
  auto asked = RunKprobectl({"-x", bin, "-D", "sdtfx:indexed arg1"});
  CHECK(asked.status == 1);
  CHECK(asked.err ==
        "kprobectl: error: invalid argument: arg1 of sdt_sdtfx:indexed (-4@(%rax,%rcx,4)) cannot be fetched: marker "
        "argument '-4@(%rax,%rcx,4)' is a memory reference with an index register (BASE + INDEX*SCALE), which the "
        "kernel's fetchargs cannot add\n    sdtfx:indexed arg1\n                  ^\n"
        "  hint: fetch the other arguments; this one needs the program's registers at the marker (%REG)\n");
  // A marker's own library: its semaphore and a RIP-relative global.
  std::string lib = FixturePath("libsdtfx.so");
  auto libimage = ElfImage::Open(lib);
  REQUIRE(libimage);
  auto count = RunKprobectl({"-x", lib, "-D", "sdtlib:count"});
  INFO(count.err);
  REQUIRE(count.status == 0);
  CHECK(WithBin(count.out, "libsdtfx.so") ==
        "p:sdt_sdtlib/count BIN:" + SiteOffset("libsdtfx.so", "sdtlib:count") + "(" +
            Hex(*libimage->FileOffset(libimage->Find("sdtlib_count_semaphore")->value)) + ") arg1=%ax:s64 arg2=@+" +
            Hex(libimage->Find("sdtlib_limit")->value) + ":s64\n");
}

TEST_CASE("SDT: what cannot be probed says why") {
  std::string bin = FixturePath("sdt");
  struct Row {
    std::vector<std::string> args;
    std::string err;
  } rows[] = {
      {{"-x", bin, "-D", "sdtfx:nosuch"},
       "kprobectl: error: no USDT marker sdtfx:nosuch in BIN\n"
       "  hint: list its markers with 'kprobectl -x BIN funcs --sdt'\n"},
      {{"-x", FixturePath("target_O2"), "-D", "app:start"},
       "kprobectl: error: no USDT marker app:start in TARGET: it has no SDT notes (.note.stapsdt)\n"
       "  hint: a name followed by ':' and a name is a marker; a line of a function is FUNC:LINE, a C++ scope is "
       "NS::NAME\n"},
      {{"-x", bin, "-D", "sdtfx:plain nosuch"},
       "kprobectl: error: invalid argument: 'nosuch' is not an argument of sdt_sdtfx:plain\n"
       "    sdtfx:plain nosuch\n"
       "                ^\n"
       "  hint: its arguments are arg1..arg7; read memory with +OFF(argN)\n"},
      {{"-x", bin, "-D", "sdtfx:plain arg9"},
       "kprobectl: error: invalid argument: sdt_sdtfx:plain has 7 arguments, no arg9\n"
       "    sdtfx:plain arg9\n"
       "                ^\n"
       "  hint: its arguments are arg1..arg7\n"},
      {{"-D", "python:function__entry"},
       "kprobectl: error: 'python:function__entry' is a USDT marker, which user-space binaries have\n"
       "  hint: name the binary with -x: kprobectl -x /usr/bin/python3 add 'sdt_python:function__entry'\n"},
  };
  for (const Row& row : rows) {
    INFO(Join(row.args, " "));
    auto result = RunKprobectl(row.args);
    CHECK(result.status == 1);
    CHECK(Replace(Replace(result.err, bin, "BIN"), FixturePath("target_O2"), "TARGET") == row.err);
  }
}

TEST_CASE("SDT: funcs --sdt lists the markers, vars their arguments") {
  auto listed = RunKprobectl({"-x", FixturePath("sdt"), "funcs", "--sdt"});
  INFO(listed.err);
  REQUIRE(listed.status == 0);
  CHECK(listed.out ==
        "sdt_sdtfx:counted  arg1=-4@%edi arg2=8@%rsi  [semaphore]\n"
        "sdt_sdtfx:indexed  arg1=-4@(%rax,%rcx,4) arg2=-2@%di\n"
        "sdt_sdtfx:plain    arg1=-4@%edi arg2=-8@%rsi arg3=8@%rax arg4=-8@%rdx arg5=-8@sdtfx_global(%rip) "
        "arg6=-4@$1234 arg7=-8@-8(%rsp)\n"
        "sdt_sdtfx:twice    arg1=-4@%edi  [2 sites]\n");
  CHECK(RunKprobectl({"-x", FixturePath("sdt"), "funcs", "--sdt", "*tw*"}).out ==
        "sdt_sdtfx:twice  arg1=-4@%edi  [2 sites]\n");
  auto none = RunKprobectl({"-x", FixturePath("target_O2"), "funcs", "--sdt"});
  CHECK(none.status == 1);
  CHECK(none.err == "kprobectl: error: " + FixturePath("target_O2") + " has no USDT markers (no .note.stapsdt)\n");
  auto vars = RunKprobectl({"-x", FixturePath("sdt"), "vars", "sdtfx:counted"});
  INFO(vars.err);
  REQUIRE(vars.status == 0);
  CHECK(vars.out ==
        "Available variables at %sdtfx:counted\n"
        "\t@<counted+" +
            std::to_string(SiteAddress("sdt", "sdtfx:counted") -
                           ElfImage::Open(FixturePath("sdt"))->Find("counted")->value) +
            "> (sdt_sdtfx:counted)\n"
            "\t\ts32\targ1\t(%di)\n"
            "\t\tu64\targ2\t(%si)\n");
}

TEST_CASE("SDT: a marker with a semaphore on a kernel that cannot raise it is refused, the others are not") {
  auto image = ElfImage::Open(FixturePath("sdt"));
  REQUIRE(image);
  Target target;
  target.kind = Target::kUserBinary;
  target.arch = &X86_64Arch();
  target.path = image->path();
  target.image = std::make_unique<ElfImage>(std::move(*image));
  SystemView system;
  system.features = AllFeatures();
  system.features.ref_ctr_offset = false;
  auto counted = Resolve({*ParseProbeSpec("sdtfx:counted")}, target, system, {});
  REQUIRE_FALSE(counted);
  CHECK(counted.error().message ==
        "sdt_sdtfx:counted has a semaphore, which this kernel's uprobes cannot raise (its tracefs README has no "
        "ref_ctr_offset)");
  CHECK(Resolve({*ParseProbeSpec("sdtfx:plain")}, target, system, {}));
}

TEST_CASE("SDT on arm64: its operands, a semaphore, a stack slot and a constant, from an x86-64 host") {
  std::string bin = FixturePath("arm64/sdt");
  auto plain = RunKprobectl({"-x", bin, "-D", "sdtfx:plain"});
  INFO(plain.err);
  REQUIRE(plain.status == 0);
  CHECK(plain.err.empty());
  // -4@x0 -8@x1 8@x2 -8@x5 -8@[x4] -4@1234 -8@[sp, 8] (gcc 12's choices;
  // the note itself is checked against readelf above).
  CHECK(WithBin(plain.out, "arm64/sdt") == "p:sdt_sdtfx/plain BIN:" + SiteOffset("arm64/sdt", "sdtfx:plain") +
                                               " arg1=%x0:s32 arg2=%x1:s64 arg3=%x2:u64 arg4=%x5:s64 arg5=+0(%x4):s64 "
                                               "arg6=\\1234:s32 arg7=+8(%sp):s64\n");
  auto image = ElfImage::Open(bin);
  REQUIRE(image);
  std::string semaphore = Hex(*image->FileOffset(image->Find("sdtfx_counted_semaphore")->value));
  auto counted = RunKprobectl({"-x", bin, "-D", "sdtfx:counted name=arg2:string arg1"});
  REQUIRE(counted.status == 0);
  CHECK(WithBin(counted.out, "arm64/sdt") == "p:sdt_sdtfx/counted BIN:" + SiteOffset("arm64/sdt", "sdtfx:counted") +
                                                 "(" + semaphore + ") name=+0(%x1):string arg1=%x0:s32\n");
  auto twice = RunKprobectl({"-x", bin, "-D", "sdtfx:twice"});
  CHECK(WithBin(twice.out, "arm64/sdt") ==
        "p:sdt_sdtfx/twice BIN:" + SiteOffset("arm64/sdt", "sdtfx:twice", 0) +
            " arg1=%x0:s32\np:sdt_sdtfx/twice_1 BIN:" + SiteOffset("arm64/sdt", "sdtfx:twice", 1) + " arg1=\\2:s32\n");
  auto listed = RunKprobectl({"-x", bin, "funcs", "--sdt", "*plain"});
  CHECK(listed.out ==
        "sdt_sdtfx:plain  arg1=-4@x0 arg2=-8@x1 arg3=8@x2 arg4=-8@x5 arg5=-8@[x4] arg6=-4@1234 "
        "arg7=-8@[sp, 8]\n");
  // Adding them here is refused: this machine's kernel is x86-64.
  auto add = RunKprobectl({"-x", bin, "add", "sdtfx:plain"});
  CHECK(add.status == 1);
  CHECK(add.err == "kprobectl: error: '" + bin +
                       "' is for arm64, and this machine's kernel is x86-64: probes on it can be printed (-D), not "
                       "added here\n  hint: run kprobectl on an arm64 machine to add them; -D prints the definitions "
                       "anywhere\n");
}
