// SPDX-License-Identifier: GPL-2.0-or-later
//
// Go and Rust binaries through the commands, on the fixtures of
// tests/fixtures/lang built by Debian's golang-go and rustc: probe points
// by the names each language writes (Go's "main.(*Server).Serve" and
// "main.Sum[...]", Rust's demangled paths, legacy and v0), events named
// from them, funcs listing them, the nearest names for a typo.

#include <catch2/catch.hpp>
#include <cstring>
#include <regex>

#include "kprobectl/arch.h"
#include "kprobectl/cxx_names.h"
#include "kprobectl/debuginfo.h"
#include "kprobectl/elf_image.h"
#include "kprobectl/resolve.h"
#include "kprobectl/strings.h"
#include "kprobectl/trace_event_def.h"
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

// The file offset past a Go function's stack check, where its entry is
// probed (its morestack path jumps back to the first instruction): the
// branch among its first bytes, x86-64's `jbe rel32` (0f 86), arm64's
// `b.ls` (0x54000009 under its mask); its first byte when it has none (a
// leaf that grows no stack).
std::string PastCheck(const std::string& bin, const std::string& name) {
  auto image = ElfImage::Open(bin);
  REQUIRE(image);
  const ElfSymbol* f = image->Find(name);
  REQUIRE(f);
  uint64_t offset = *image->FileOffset(f->value);
  std::string code = ReadFile(bin).substr(offset, 24);
  INFO(name);
  if (image->arch() == &Aarch64Arch()) {
    for (size_t at = 0; at + 4 <= code.size(); at += 4) {
      uint32_t word = 0;
      std::memcpy(&word, code.data() + at, 4);
      if ((word & 0xff00001f) == 0x54000009) return Hex(offset + at + 4);
    }
    return Hex(offset);
  }
  size_t jbe = code.find("\x0f\x86");
  return Hex(jbe == std::string::npos ? offset : offset + jbe + 6);
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

// Definitions with each address written ADDR and the fixture's group
// GROUP: the whole text but where the probes are (the tests pin those for
// the entries, PastCheck), so a check sees every probe, its event's name
// and every fetch.
std::string Shape(const std::string& definitions) {
  static const std::regex address("BIN:0x[0-9a-f]+"), group("([pr]):probe_[A-Za-z0-9_]+/");
  return std::regex_replace(std::regex_replace(definitions, address, "BIN:ADDR"), group, "$1:GROUP/");
}

struct Defined {
  const char* spec;
  const char* shape;  // Shape(its definitions)
};

// A message with each address written ADDR (Go's runtime moves with the
// toolchain that built the fixture).
std::string Unaddressed(const std::string& message) {
  static const std::regex address("0x[0-9a-f]+");
  return std::regex_replace(message, address, "ADDR");
}

}  // namespace

TEST_CASE("Go: probe points by Go's names, events named from them") {
  for (std::string name : {"gofx", "gofx_noopt"}) {
    std::string bin = FixturePath(name);
    auto image = ElfImage::Open(bin);
    REQUIRE(image);
    CHECK(image->go_version().starts_with("go1."));
    // Probed past the stack check, where the entry runs once a call.
    std::string serve = PastCheck(bin, "main.(*Server).Serve"), handle = PastCheck(bin, "main.handle");
    std::string sum_int = PastCheck(bin, "main.Sum[go.shape.int_0]");
    std::string sum_float = PastCheck(bin, "main.Sum[go.shape.float64_0]");
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
    CHECK(Shape(Define(bin, "main.(*Server).Serve path short=path:u8[3]")) ==
          "p:GROUP/main__Server__Serve BIN:ADDR path=+0(%bx):u8[64] path__len=%cx:s64 short=+0(%bx):u8[3] "
          "short__len=%cx:s64\n");
    CHECK(Shape(Define(bin, "main.handle tags=it.Tags")) ==
          "p:GROUP/main__handle BIN:ADDR tags=+0(%di):u8[64] tags__len=%si:s64\n");
    auto typed = Run(bin, {"-D", "main.(*Server).Serve path:string"});
    CHECK(typed.status != 0);
    CHECK(typed.err ==
          "kprobectl: error: invalid argument: 'path' is a Go string, a pointer and a length: its bytes are fetched "
          "as u8[N], N the bound (1 to 64), and cut at its length\n"
          "    main.(*Server).Serve path:string\n"
          "                              ^\n"
          "  hint: write :u8[N] to set the bound (64 without a type), or fetch its members\n");
    // FUNC%return: a probe on each return instruction, $retval in RAX.
    CHECK(Shape(Define(bin, "main.(*Server).Serve%return $retval:s64")) ==
          "p:GROUP/main__Server__Serve__return BIN:ADDR retval=%ax:s64\n");
    // The results where Go's ABI puts them, typed by the DWARF: $retval
    // is the first; a string is counted.
    CHECK(
        Shape(Define(bin, "main.handle%return total label $retval")) ==
        "p:GROUP/main__handle__return BIN:ADDR total=%ax:s64 label=+0(%bx):u8[64] label__len=%cx:s64 retval=%ax:s64\n");
    CHECK(Shape(Define(bin, "main.(*Server).Serve%return $retval")) ==
          "p:GROUP/main__Server__Serve__return BIN:ADDR retval=%ax:s64\n");
    auto real = Run(bin, {"-D", "main.Sum[go.shape.float64_0]%return $retval"});
    CHECK(real.status != 0);
    CHECK(real.err ==
          "kprobectl: error: invalid argument: '~r0' cannot be read here: it is in X0, a floating-point register: Go "
          "returns floating-point values there, and the kernel cannot fetch them\n"
          "    main.Sum[go.shape.float64_0]%return $retval\n"
          "                                        ^\n"
          "  hint: record it where the caller keeps it after the call, or fetch the function's other results\n");
    // $argN in Go's register ABI (Go 1.17+ on x86-64), not System V's.
    CHECK(Define(bin, "main.handle $arg1 $arg2 $arg9") ==
          "p:" + group + "/main__handle BIN:" + handle + " arg1=%ax arg2=%bx arg9=%r11\n");
    auto stack = Run(bin, {"-D", "main.handle $arg10"});
    CHECK(stack.status != 0);
    CHECK(stack.err ==
          "kprobectl: error: $arg10 of a Go function: Go's register ABI has 9 integer argument registers on x86-64, "
          "and puts an argument on the stack when it or one before it does not fit, which only the function's types "
          "tell\n  hint: fetch it by name through the DWARF (a Go binary has it unless built with -ldflags=-w)\n");

    // The ABI wrapper Go's DWARF names as its function calls it: one probe, not two.
    CHECK(SplitLines(Define(bin, "runtime.newstack")).size() == 1);
    // Never a uretprobe on Go code: a function that leaves by a jump is refused.
    auto ret = Run(bin, {"-D", "runtime.morestack_noctxt.abi0%return"});
    CHECK(ret.status != 0);
    CHECK(Unaddressed(ret.err) ==
          "kprobectl: error: cannot find the returns of 'runtime.morestack_noctxt.abi0': it jumps out of itself at "
          "ADDR (jmp ADDR), a tail call whose return is another function's\n"
          "  hint: probe the function it jumps to, or its last lines (kprobectl line FUNC)\n");

    auto typo = Run(bin, {"-D", "main.handel"});
    CHECK(typo.status != 0);
    CHECK(typo.err ==
          "kprobectl: error: no function 'main.handel' in " + bin + "\n  hint: similar names: main.handle\n");

    // Go writes no DW_AT_decl_line: a function begins at its entry's row.
    auto line = Run(bin, {"line", "main.handle"});
    REQUIRE(line.status == 0);
    std::string head = "<main.handle@" + FixtureSourceDir() +
                       "/lang/gofx.go:0>\n      0  func handle(it Item, count int) (total int64, label string) {\n";
    CHECK(line.out == head +
                          "      1  \tfmt.Printf(\"handle name=%q price=%d tags=%q count=%d\\n\", it.Name, it.Price, "
                          "it.Tags, count)\n"
                          "      2  \treturn it.Price * int64(count), it.Name + \"!\"\n"
                          "         }\n");
    CHECK(Run(bin, {"line", "main.handle:0-0"}).out == head);

    auto funcs = Run(bin, {"funcs", "main.*"});
    REQUIRE(funcs.status == 0);
    CHECK(funcs.out ==
          "main.(*Server).Serve\nmain.Sum[go.shape.float64_0]\nmain.Sum[go.shape.int_0]\nmain.handle\nmain.main\n"
          "main.main.func1\n");
  }
}

// Results on the stack at a return instruction: 8 bytes above the stack
// pointer (the return address at 0), the stack-assigned arguments first.
// Go's DWARF places shifted's stack argument p at the CFA (SP+8) and its
// stack result r 16 bytes above it: the same places.
TEST_CASE("Go: results on the stack and in registers at each return instruction") {
  for (std::string name : {"gorets", "gorets_noopt"}) {
    std::string bin = FixturePath(name);
    INFO(name);
    const Defined rows[] = {
        {"main.wide%return i j", "p:GROUP/main__wide__return BIN:ADDR i=%r11:s64 j=+8(%sp):s64\n"},
        {"main.row%return ~r0.A ~r0.J", "p:GROUP/main__row__return BIN:ADDR A=+8(%sp):s64 J=+80(%sp):s64\n"},
        {"main.shifted%return r[0] r[1] m",
         "p:GROUP/main__shifted__return BIN:ADDR r=+24(%sp):s64 r_1=+32(%sp):s64 m=%ax:s64\n"},
        {"main.small%return ok b u", "p:GROUP/main__small__return BIN:ADDR ok=%ax:u8 b=%bx:s8 u=%cx:u16\n"},
        // The dictionary of a shape instantiation takes RAX: h is at +8, r after it.
        {"main.spread[...]%return r[0] r[1] k",
         "p:GROUP/main__spread__return BIN:ADDR r=+16(%sp):s64 r_1=+24(%sp):s64 k=%ax:s64\n"},
        {"main.point%return ~r0.X ~r0.Y ~r0.Name",
         "p:GROUP/main__point__return BIN:ADDR X=%ax:s64 Y=%bx:s32 Name=+0(%cx):u8[64] Name__len=%di:s64\n"},
        // One probe per return instruction, each with the results.
        {"main.named%return n err.tab",
         "p:GROUP/main__named__return BIN:ADDR n=%ax:s64 tab=%di:x64\n"
         "p:GROUP/main__named__return_1 BIN:ADDR n=%ax:s64 tab=%di:x64\n"
         "p:GROUP/main__named__return_2 BIN:ADDR n=%ax:s64 tab=%di:x64\n"},
        // A result in a register after blank parameters is placed; one on the
        // stack after them is refused: Go's DWARF has no entry for a '_' one.
        {"main.blank%return n", "p:GROUP/main__blank__return BIN:ADDR n=%ax:s64\n"},
    };
    for (const Defined& row : rows) {
      INFO(row.spec);
      CHECK(Shape(Define(bin, row.spec)) == row.shape);
    }
    auto blank = Run(bin, {"-D", "main.blank%return r[0]"});
    CHECK(blank.status != 0);
    CHECK(blank.err ==
          "kprobectl: error: invalid argument: 'r' cannot be placed at the return: the DWARF does not describe all of "
          "main.blank's parameters (Go writes none for an unnamed or '_' one): Go's table gives its argument area 56 "
          "bytes, its DWARF's parameters 24\n    main.blank%return r[0]\n                      ^\n"
          "  hint: fetch the function's other results, or the value where its callers keep it\n");
    // div, inlined into main and called out of line: its own two returns,
    // none of main's; its results' flag read from the abstract entry.
    CHECK(Shape(Define(bin, "main.div%return q err.tab")) ==
          "p:GROUP/main__div__return BIN:ADDR q=%ax:s64 tab=%bx:x64\n"
          "p:GROUP/main__div__return_1 BIN:ADDR q=%ax:s64 tab=%bx:x64\n");
    auto local = Run(bin, {"-D", "main.named%return nosuch"});
    CHECK(local.status != 0);
    std::string at = name == "gorets" ? "main.named:6" : "main.named:3";  // its first return
    CHECK(Unaddressed(local.err) == "kprobectl: error: invalid argument: no variable 'nosuch' at " + at +
                                        " (ADDR)\n    main.named%return nosuch\n                      ^\n"
                                        "  hint: see the variables there with 'kprobectl vars " +
                                        at + "'\n");
  }
}

// trace --latency on Go's FUNC%return: each probe on a return instruction
// is known as one, with its function's entry; no other probe is.
TEST_CASE("Go: a probe on a return instruction is known as one, with its function's entry") {
  std::string bin = FixturePath("gorets");
  auto image = ElfImage::Open(bin);
  REQUIRE(image);
  const ElfSymbol* named = image->Find("main.named");
  REQUIRE(named);
  std::vector<std::string> lines = SplitLines(Run(bin, {"-D", "main.named%return"}).out);
  REQUIRE(lines.size() == 3);
  for (const std::string& line : lines) {
    auto def = ParseDefinition(line, ProbeKind::kUser);
    REQUIRE(def);
    auto site = GoReturnSite(*def, *image);
    REQUIRE(site);
    CHECK(Hex(site->entry.offset) == PastCheck(bin, "main.named"));
    CHECK(site->entry.path == def->target.path);
    CHECK(site->call_register == "r14");
  }
  auto at_entry = ParseDefinition(Run(bin, {"-D", "main.named"}).out, ProbeKind::kUser);
  REQUIRE(at_entry);
  CHECK_FALSE(GoReturnSite(*at_entry, *image));
  auto inside = ParseDefinition(Run(bin, {"-D", "main.named+4"}).out, ProbeKind::kUser);
  REQUIRE(inside);
  CHECK_FALSE(GoReturnSite(*inside, *image));
}

// arm64 Go, cross-built by Debian's go, read offline: Go's arm64 register
// ABI (R0-R15 are x0-x15, with and without DWARF), its RET instructions
// (Capstone arm64: calls and tbnz's bit number are no jumps out, the zero
// words after the code end it), a stack result after a stack argument
// (8(SP) is the argument area: the code stores r at [sp, #24]).
TEST_CASE("Go on arm64: register ABI, return instructions, results") {
  std::string bin = FixturePath("arm64/gorets");
  std::string nodwarf = FixturePath("arm64/gofx_nodwarf");
  const Defined rows[] = {
      {"main.wide%return a i j", "p:GROUP/main__wide__return BIN:ADDR a=%x0:s64 i=%x8:s64 j=%x9:s64\n"},
      {"main.shifted%return r[1] m", "p:GROUP/main__shifted__return BIN:ADDR r=+32(%sp):s64 m=%x0:s64\n"},
      {"main.pair%return $retval i=~r1",
       "p:GROUP/main__pair__return BIN:ADDR retval=+0(%x0):u8[64] retval__len=%x1:s64 i=%x2:s64\n"},
      {"main.named%return n s err.tab",
       "p:GROUP/main__named__return BIN:ADDR n=%x0:s64 s=+0(%x1):u8[64] s__len=%x2:s64 tab=%x3:x64\n"
       "p:GROUP/main__named__return_1 BIN:ADDR n=%x0:s64 s=+0(%x1):u8[64] s__len=%x2:s64 tab=%x3:x64\n"
       "p:GROUP/main__named__return_2 BIN:ADDR n=%x0:s64 s=+0(%x1):u8[64] s__len=%x2:s64 tab=%x3:x64\n"},
  };
  for (const Defined& row : rows) {
    INFO(row.spec);
    CHECK(Shape(Define(bin, row.spec)) == row.shape);
  }
  auto real = Run(bin, {"-D", "main.ratio%return $retval"});
  CHECK(real.err ==
        "kprobectl: error: invalid argument: '~r0' cannot be read here: it is in F0, a floating-point register: Go "
        "returns floating-point values there, and the kernel cannot fetch them\n    main.ratio%return $retval\n"
        "                      ^\n  hint: record it where the caller keeps it after the call, or fetch the "
        "function's other results\n");
  CHECK(Define(nodwarf, "main.handle $arg1 $arg16") ==
        "p:probe_gofx_nodwarf/main__handle BIN:" + PastCheck(nodwarf, "main.handle") + " arg1=%x0 arg16=%x15\n");
  CHECK(Shape(Define(nodwarf, "main.(*Server).Serve%return $retval:s64")) ==
        "p:GROUP/main__Server__Serve__return BIN:ADDR retval=%x0:s64\n");
  auto named_nodwarf = Run(nodwarf, {"-D", "main.handle%return total"});
  CHECK(named_nodwarf.status != 0);
  // Said of what was written, not of a return instruction (main.handle+308).
  CHECK(named_nodwarf.err ==
        "kprobectl: error: 'main.handle%return' needs debuginfo: '" + nodwarf +
            "' has no DWARF debuginfo (no DWARF information)\n  hint: build it without -ldflags=-w or -s (Go writes "
            "DWARF by default), or fetch $argN and $retval, which follow Go's ABI without it\n");
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
    CHECK(typo.err == "kprobectl: error: no function 'rsfx::shop::Cart::ad' in the debuginfo of " + bin +
                          "\n  hint: similar names: rsfx::shop::Cart::add\n");
    // Demangled (no legacy "17h<hash>E"); v0 keeps a generic's arguments.
    auto funcs = Run(bin, {"funcs", "rsfx::*"});
    REQUIRE(funcs.status == 0);
    CHECK(funcs.out == (name == "rsfx_v0" ? "rsfx::greet\nrsfx::largest::<f64>\nrsfx::largest::<u32>\nrsfx::main\n"
                                            "rsfx::main::{closure#0}\nrsfx::shop::Cart::add\n"
                                          : "rsfx::greet\nrsfx::largest\nrsfx::main\nrsfx::main::{{closure}}\n"
                                            "rsfx::shop::Cart::add\n"));
  }
}

// Go's ABI as kprobectl assigns it (arch/go_abi.cc) against the compiler's
// own figure: for every Go function of the fixtures whose DWARF lists its
// parameters, the argument area its types add up to is the one Go's
// .gopclntab gives (_func.args). Those whose DWARF leaves a parameter out
// differ: main.blank's blank ('_') ones, and in the runtime and reflect
// the receivers of generated (*T).M wrappers and a closure's (a few
// dozen); for their results on the stack kprobectl refuses, saying why,
// rather than read the wrong slot. (Assembly functions list none.)
TEST_CASE("Go: the DWARF's parameters add up to Go's own argument area, function by function") {
  struct Fixture {
    std::string name;
    const Arch* arch;
  };
  for (const Fixture& f : {Fixture{"gorets", &X86_64Arch()}, Fixture{"gorets_noopt", &X86_64Arch()},
                           Fixture{"gofx", &X86_64Arch()}, Fixture{"arm64/gorets", &Aarch64Arch()}}) {
    INFO(f.name);
    std::string bin = FixturePath(f.name);
    auto image = ElfImage::Open(bin);
    REQUIRE(image);
    auto debuginfo = Debuginfo::Open(bin);
    REQUIRE(debuginfo);
    size_t compared = 0;
    std::vector<std::string> differ;
    for (const ElfSymbol& s : image->symbols()) {
      if (s.type != ElfSymbol::kFunction || s.size == 0 || s.name.find("[go.shape.") != std::string::npos) continue;
      auto area = image->GoArgumentAreaSize(s.value);
      auto at = (*debuginfo)->AtAddress(s.value);
      if (!area || !at || at->address != s.value || at->inlined ||
          (*debuginfo)->LanguageAt(*at) != Debuginfo::Language::kGo)
        continue;
      auto values = (*debuginfo)->GoValues(*at);
      if (!values || values->empty()) continue;
      std::vector<GoAbiType> args, results;
      bool placeable = true;
      for (const GoValue& v : *values) {
        placeable &= v.unplaceable.empty();
        (v.result ? results : args).push_back(v.type);
      }
      if (!placeable) continue;
      ++compared;
      if (f.arch->PlaceGoValues(args, results, image->go_register_abi()).argument_area != *area)
        differ.push_back(s.name);
    }
    INFO(compared << " compared; differ: " << Join(differ, " "));
    CHECK(compared > 1000);
    if (f.name.find("gorets") != std::string::npos)
      CHECK(std::find(differ.begin(), differ.end(), "main.blank") != differ.end());
    for (const std::string& name : differ) CHECK((!name.starts_with("main.") || name == "main.blank"));
    CHECK(differ.size() * 30 < compared);
  }
}

// At a Go function's first instruction its arguments are where Go's ABI
// puts them, which Go 1.19's own DWARF gets wrong in optimised code: a
// []byte's location list has four 8-byte pieces (RAX, RAX, RBX, RCX) for
// its three words, so its length read RAX; a struct's pieces leave out its
// padding, so c.VIP (byte 40) was "left out"; a tenth int lies at
// DW_OP_call_frame_cfa, which was no place kprobectl read. A generic
// function's string shape is a string; a function inlined into every
// caller is found by its DWARF; an array of strings' elements are strings,
// named apart; -N -l code's locals at a line (frame base in DW_FORM_block1).
TEST_CASE("Go: arguments at the entry where Go's ABI puts them, whatever Go's DWARF says") {
  for (std::string name : {"goargs", "goargs_noopt"}) {
    std::string bin = FixturePath(name);
    INFO(name);
    const Defined rows[] = {
        {"main.checksum data seed",
         "p:GROUP/main__checksum BIN:ADDR data=+0(%ax):u8[64] data__len=%bx:s64 seed=%di:u32\n"},
        {"main.greet c.Name c.Home.Zip c.VIP c.Age times",
         "p:GROUP/main__greet BIN:ADDR Name=+0(%ax):u8[64] Name__len=%bx:s64 Zip=%si:s32 VIP=%r8:u8 Age=%r9:s8 "
         "times=%r10:s64\n"},
        {"main.many a9 a10 a12", "p:GROUP/main__many BIN:ADDR a9=%r11:s64 a10=+8(%sp):s64 a12=+24(%sp):s64\n"},
        {"main.total $params",
         "p:GROUP/main__total BIN:ADDR prefix=+0(%ax):u8[64] prefix__len=%bx:s64 nums_array=%cx:x64 nums_len=%di:s64 "
         "nums_cap=%si:s64\n"},
        // The dictionary in RAX, the map in RBX, then k and def.
        {"main.Lookup[go.shape.string_0,go.shape.int_1] k def",
         "p:GROUP/main__Lookup BIN:ADDR k=+0(%cx):u8[64] k__len=%di:s64 def=%si:s64\n"},
        {"main.pair%return r[0] r[1] n",
         "p:GROUP/main__pair__return BIN:ADDR r=+0(+8(%sp)):u8[64] r__len=+16(%sp):s64 r_1=+0(+24(%sp)):u8[64] "
         "r_1__len=+32(%sp):s64 n=%ax:s64\n"},
    };
    for (const Defined& row : rows) {
      INFO(row.spec);
      CHECK(Shape(Define(bin, row.spec)) == row.shape);
    }
    auto whole = Run(bin, {"-D", "main.pair%return r"});
    CHECK(whole.err ==
          "kprobectl: error: invalid argument: 'r' is an array of 2 struct string, and the kernel fetches arrays of "
          "numbers only\n    main.pair%return r\n                     ^\n"
          "  hint: fetch its elements one by one: r[0] r[1]\n");
    // What cannot be fetched says why, naming what was written.
    auto typed = Run(bin, {"-D", "main.greet c.Home.City:string"});
    CHECK(typed.err ==
          "kprobectl: error: invalid argument: 'c.Home.City' is a Go string, a pointer and a length: its bytes are "
          "fetched as u8[N], N the bound (1 to 64), and cut at its length\n    main.greet c.Home.City:string\n"
          "                           ^\n  hint: write :u8[N] to set the bound (64 without a type), or fetch its "
          "members\n");
    auto array = Run(bin, {"-D", "main.greet times:u8[3]"});
    CHECK(array.err ==
          "kprobectl: error: invalid argument: 'times' is kept in a register here, and the kernel reads u8[3] (an "
          "array) from memory only\n    main.greet times:u8[3]\n                     ^\n"
          "  hint: leave the type out, or give a number's (:u64, :s32, ...)\n");
    // Only the arguments have values at the entry.
    auto local = Run(bin, {"-D", "main.checksum h"});
    CHECK(local.status != 0);
    CHECK(local.err ==
          "kprobectl: error: invalid argument: 'h' has no value yet at the entry of main.checksum, where only its "
          "arguments have one\n    main.checksum h\n                  ^\n"
          "  hint: probe a line of it (kprobectl line main.checksum)\n");
  }
  // Inlined into both its callers, it has no symbol: the DWARF's copies.
  CHECK(SplitLines(Define(FixturePath("goargs"), "main.shout")).size() == 2);
  // -N -l: locals at a line, from the frame base (DW_OP_call_frame_cfa in a DW_FORM_block1).
  CHECK_THAT(Define(FixturePath("goargs_noopt"), "main.split:6 i head"),
             Catch::Matches(".* i=\\+[0-9]+\\(%sp\\):s64 head=\\+0\\(\\+[0-9]+\\(%sp\\)\\):u8\\[64\\] "
                            "head__len=\\+[0-9]+\\(%sp\\):s64\n"));
  // arm64: R0-R15, the stack's arguments from 8(SP).
  std::string arm64 = FixturePath("arm64/goargs");
  const Defined rows[] = {
      {"main.checksum data seed",
       "p:GROUP/main__checksum BIN:ADDR data=+0(%x0):u8[64] data__len=%x1:s64 seed=%x3:u32\n"},
      {"main.many a12", "p:GROUP/main__many BIN:ADDR a12=%x11:s64\n"},
      {"main.greet c.VIP c.Age times", "p:GROUP/main__greet BIN:ADDR VIP=%x5:u8 Age=%x6:s8 times=%x7:s64\n"},
  };
  for (const Defined& row : rows) {
    INFO(row.spec);
    CHECK(Shape(Define(arm64, row.spec)) == row.shape);
  }
}

// A floating-point result is in a floating-point register (XMM0, V0), not
// the one $retval reads: refused with the reason, for Rust as for C; an
// integer instantiation of the same generic keeps its type.
TEST_CASE("Rust: $retval of a floating-point result refused, of an integer one typed") {
  std::string bin = FixturePath("rsfx_v0");
  auto f64 = Run(bin, {"-D", "rsfx::largest::<f64>%return $retval"});
  CHECK(f64.status != 0);
  CHECK(f64.err ==
        "kprobectl: error: invalid argument: rsfx::largest::<f64> returns a f64, in a floating-point register, which "
        "the kernel cannot fetch ($retval reads the integer return register)\n"
        "    rsfx::largest::<f64>%return $retval\n                                ^\n"
        "  hint: record the value where the caller keeps it after the call\n");
  CHECK(Shape(Define(bin, "rsfx::largest::<u32>%return $retval")) ==
        "r:GROUP/rsfx__largest___u32___return BIN:ADDR retval=$retval:u32\n");
}
