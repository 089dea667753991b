// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/resolve.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <memory>

#include "kprobectl/btf.h"
#include "kprobectl/strings.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

const ElfImage& Fixture(const std::string& name) {
  static std::map<std::string, ElfImage> images;  // read once per test run
  auto it = images.find(name);
  if (it == images.end()) {
    auto image = ElfImage::Open(FixturePath(name));
    REQUIRE(image);
    it = images.emplace(name, std::move(*image)).first;
  }
  return it->second;
}

uint64_t SymbolOffset(const ElfImage& image, const std::string& name, size_t nth = 0) {
  for (const ElfSymbol& s : image.symbols())
    if (s.name == name && nth-- == 0) return *image.FileOffset(s.value);
  FAIL("no symbol " + name);
  return 0;
}

// Definitions for specs on a fixture through the symbol table, as lines,
// with the fixture's path replaced by BIN so expectations read well.
Result<std::vector<std::string>> Define(const std::string& fixture, std::vector<std::string> texts,
                                        std::set<std::string> existing = {}, bool force = false) {
  const ElfImage& image = Fixture(fixture);
  std::vector<ProbeSpec> specs;
  for (const std::string& text : texts) specs.push_back(KP_TRY(ParseProbeSpec(text)));
  Target target;
  target.kind = Target::kUserBinary;
  target.arch = &X86_64Arch();
  target.path = image.path();
  target.image = std::make_unique<ElfImage>(image);
  SystemView system;
  system.features = AllFeatures();
  Resolution resolution = KP_TRY(Resolve(specs, target, system, {}));
  EventNamer namer(std::move(existing), force);
  KP_TRY_VOID(NameEvents(resolution, namer));
  auto defs = KP_TRY(Synthesize(resolution, target));
  std::vector<std::string> lines;
  for (const TraceEventDef& def : defs) {
    std::string line = FormatDefinition(def);
    size_t at = line.find(image.path());
    if (at != std::string::npos) line.replace(at, image.path().size(), "BIN");
    lines.push_back(line);
  }
  return lines;
}

std::string At(const std::string& fixture, const std::string& symbol, uint64_t plus = 0, size_t nth = 0) {
  return "BIN:" + Hex(SymbolOffset(Fixture(fixture), symbol, nth) + plus);
}

}  // namespace

TEST_CASE("entry probes with $argN map to the ABI registers and stack") {
  for (const char* fixture : {"target_O0", "target_O2", "target_nopie"}) {
    INFO(fixture);
    auto lines = Define(fixture, {"compute $arg1 $arg2:s32", "many_args $arg6 $arg7 $arg8:s64"});
    REQUIRE(lines);
    CHECK(*lines ==
          std::vector<std::string>{
              "p:probe_" + std::string(fixture) + "/compute " + At(fixture, "compute") + " arg1=%di arg2=%si:s32",
              "p:probe_" + std::string(fixture) + "/many_args " + At(fixture, "many_args") +
                  " arg6=%r9 arg7=+8(%sp) arg8=+16(%sp):s64"});
  }
}

TEST_CASE("return probes, strings, registers, symbols, immediates") {
  const std::string f = "target_O2";
  const ElfImage& image = Fixture(f);
  // @SYMBOL: the symbol's address relative to the probed segment's base
  // (vaddr - offset), as the kernel's translate_user_vaddr() wants it.
  std::string counter;
  uint64_t compute = 0;
  for (const ElfSymbol& s : image.symbols())
    if (s.name == "compute") compute = s.value;
  for (const ElfSymbol& s : image.symbols())
    if (s.name == "fixture_counter") counter = Hex(s.value - (compute - *image.FileOffset(compute)));
  REQUIRE_FALSE(counter.empty());
  auto lines = Define(f, {"compute%return $retval:s32 $comm", "greet name=$arg1:string times=%si:s32",
                          "greet%return +0($retval):string", "compute @fixture_counter:s32 \\7:u8 %r12 $stack2"});
  REQUIRE(lines);
  CHECK(*lines == std::vector<std::string>{
                      "r:probe_target_O2/compute__return " + At(f, "compute") + " retval=$retval:s32 comm=$comm",
                      "p:probe_target_O2/greet " + At(f, "greet") + " name=+0(%di):string times=%si:s32",
                      "r:probe_target_O2/greet__return " + At(f, "greet") + " arg1=+0($retval):string",
                      "p:probe_target_O2/compute " + At(f, "compute") + " fixture_counter=@+" + counter +
                          ":s32 arg2=\\7:u8 r12=%r12 stack2=$stack2"});
}

TEST_CASE("static functions of one name all get probes: EV, EV_1") {
  auto lines = Define("target_O2", {"helper $arg1:s32"});
  REQUIRE(lines);
  REQUIRE(lines->size() == 2);
  CHECK((*lines)[0] == "p:probe_target_O2/helper " + At("target_O2", "helper", 0, 0) + " arg1=%di:s32");
  CHECK((*lines)[1] == "p:probe_target_O2/helper_1 " + At("target_O2", "helper", 0, 1) + " arg1=%di:s32");
}

TEST_CASE("offsets, addresses, globs, group and event names") {
  const std::string f = "target_O2";
  const ElfImage& image = Fixture(f);
  uint64_t compute_vaddr = 0;
  for (const ElfSymbol& s : image.symbols())
    if (s.name == "compute") compute_vaddr = s.value;
  auto lines = Define(f, {"compute+4 %di", "grp:ev=compute", Hex(compute_vaddr) + " $arg1", "comp*%return"});
  REQUIRE(lines);
  CHECK(*lines == std::vector<std::string>{
                      "p:probe_target_O2/compute " + At(f, "compute", 4) + " di=%di", "p:grp/ev " + At(f, "compute"),
                      "p:probe_target_O2/abs_" + Hex(compute_vaddr).substr(2) + " " + At(f, "compute") + " arg1=%di",
                      "r:probe_target_O2/compute__return " + At(f, "compute")});
}

TEST_CASE("names that exist: an error, or numbered with -f") {
  auto clash = Define("target_O2", {"compute"}, {"probe_target_O2/compute"});
  REQUIRE_FALSE(clash);
  CHECK(clash.error().message == "event 'probe_target_O2:compute' already exists");
  auto forced = Define("target_O2", {"compute"}, {"probe_target_O2/compute"}, true);
  REQUIRE(forced);
  CHECK(*forced == std::vector<std::string>{"p:probe_target_O2/compute_1 " + At("target_O2", "compute")});
}

TEST_CASE("symbol versions pick the right definition") {
  auto lines = Define("libfx.so", {"a=fx_lookup@FX_1", "b=fx_lookup@@FX_2", "c=fx_lookup@FX_2", "fx_plain@FX_1"});
  REQUIRE(lines);
  const ElfImage& lib = Fixture("libfx.so");
  uint64_t v1 = 0, v2 = 0;
  for (const ElfSymbol& s : lib.symbols()) {
    if (s.name == "fx_lookup" && s.version == "FX_1") v1 = *lib.FileOffset(s.value);
    if (s.name == "fx_lookup" && s.version == "FX_2") v2 = *lib.FileOffset(s.value);
  }
  CHECK(*lines == std::vector<std::string>{"p:probe_libfx/a BIN:" + Hex(v1), "p:probe_libfx/b BIN:" + Hex(v2),
                                           "p:probe_libfx/c BIN:" + Hex(v2),
                                           "p:probe_libfx/fx_plain " + At("libfx.so", "fx_plain")});
  auto wrong = Define("libfx.so", {"fx_lookup@@FX_1"});
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().message == "no function 'fx_lookup' with version @FX_1 in " + lib.path());
}

TEST_CASE("resolution errors name the input and say what to do") {
  const std::string bin = Fixture("target_O2").path();
  struct Row {
    const char* spec;
    std::string message;
    std::string hint;
  } rows[] = {
      {"nosuch", "no function 'nosuch' in " + bin, "list its functions with 'kprobectl -x " + bin + " funcs'"},
      {"comput", "no function 'comput' in " + bin, "similar names: compute"},
      {"compute+100000", "offset 100000 is outside 'compute' (12 bytes) in " + bin,
       "give an offset below the function's size"},
      {"0x10", "address 0x10 is not in the code of '" + bin + "' (no executable segment holds it)",
       "addresses are virtual addresses as 'nm' or 'objdump -d' print them"},
      {"compute+4 $arg1",
       "invalid argument: $arg1 is only known at a function's entry; at compute+4 the registers may hold other "
       "values\n    compute+4 $arg1\n              ^",
       "probe the function itself (FUNC), or fetch the register that holds the value (%REG)"},
      {"compute%return $arg1",
       "invalid argument: '$arg1' is argument 1, and no kernel keeps a function's arguments for a user return "
       "probe (uprobes keep none)\n"
       "    compute%return $arg1\n                   ^",
       "'kprobectl trace --probe' and 'kprobectl hist --probe' can: they fetch it at the function's entry with a "
       "probe of their own and print it with the return; or probe the entry too ('compute $arg1')"},
      {"compute $retval",
       "invalid argument: $retval is only available in return probes\n    compute $retval\n"
       "            ^",
       "add %return to the probe point: compute%return"},
      {"compute %rdi", "invalid argument: unknown register '%rdi' on x86-64\n    compute %rdi\n            ^",
       "the kernel names it %di"},
      {"compute %xmm0", "invalid argument: unknown register '%xmm0' on x86-64\n    compute %xmm0\n            ^",
       "x86-64 registers: %ax %bx %cx %dx %si %di %bp %sp %r8..%r15 %ip %flags"},
      {"compute @nosuch", "invalid argument: no symbol 'nosuch' in " + bin + "\n    compute @nosuch\n            ^",
       "list the binary's data symbols with 'nm " + bin + "'"},
      {"compute %di:symstr",
       "invalid argument: type 'symstr' is for kernel probes; user probes cannot use it\n"
       "    compute %di:symstr\n                ^",
       "fetch the value as an integer (:x64) instead"},
      {"compute x=%di x=%si",
       "invalid argument: two arguments are named 'x'\n    compute x=%di x=%si\n"
       "                  ^",
       ""},
      {"compute:3", "'compute:3' names a source line, which needs debuginfo (DWARF) to resolve",
       "probe FUNC, FUNC+OFFSET, FUNC%return or 0xADDRESS; source-level probe points need debuginfo support "
       "(see kprobectl(8))"},
      {"compute a->b",
       "invalid argument: variable 'a' needs debuginfo (DWARF) to be found\n    compute a->b\n"
       "            ^",
       "fetch registers instead ($argN, %REG, $retval, +OFFSET(%REG))"},
      {"compute $vars",
       "invalid argument: $vars needs debuginfo (DWARF) to be found\n    compute $vars\n"
       "            ^",
       "fetch registers instead ($argN, %REG, $retval, +OFFSET(%REG))"},
      {"compute @+0x10:u8[0]",
       "invalid argument: invalid array type 'u8[0]': the length must be a number from 1 "
       "to 64\n    compute @+0x10:u8[0]\n                   ^",
       "types: u8 u16 u32 u64, s8..s64, x8..x64, char, string, ustring, symbol, symstr, "
       "b<width>@<offset>/<container>, %pd, %pD, and arrays such as u8[16]"},
  };
  for (const Row& row : rows) {
    INFO(row.spec);
    auto result = Define("target_O2", {row.spec});
    REQUIRE_FALSE(result);
    CHECK(result.error().message == row.message);
    CHECK(result.error().hint == row.hint);
  }
}

TEST_CASE("the kernel's limits on arguments") {
  std::string many = "compute";
  for (int i = 0; i < 129; ++i) many += " %di";
  auto too_many = Define("target_O2", {many});
  REQUIRE_FALSE(too_many);
  CHECK(too_many.error().message == "'compute' has 129 arguments; the kernel takes at most 128");

  std::string deep = "%di";
  for (int i = 0; i < 14; ++i) deep = "+0(" + deep + ")";
  CHECK(Define("target_O2", {"compute " + deep}));
  auto too_deep = Define("target_O2", {"compute " + deep + ":string"});
  REQUIRE_FALSE(too_deep);
  CHECK(too_deep.error().message == "invalid argument: '" + deep +
                                        ":string' dereferences too deeply for the kernel (at most 14 steps)\n"
                                        "    compute " +
                                        deep + ":string\n            ^");
  CHECK(too_deep.error().hint.empty());

  auto long_name = Define("target_O2", {"compute " + std::string(33, 'n') + "=%di"});
  REQUIRE_FALSE(long_name);
  CHECK(long_name.error().message == "invalid argument: argument name '" + std::string(33, 'n') +
                                         "' is longer than the kernel's 32 characters\n    compute " +
                                         std::string(33, 'n') + "=%di\n            ^");
  CHECK(long_name.error().hint.empty());

  // Unnamed duplicates are numbered, as the kernel wants unique names.
  auto dupes = Define("target_O2", {"compute %di %di:u8"});
  REQUIRE(dupes);
  CHECK((*dupes)[0] == "p:probe_target_O2/compute " + At("target_O2", "compute") + " di=%di di_1=%di:u8");
}

TEST_CASE("kernel probes without debuginfo: SYM+OFF targets") {
  std::vector<ProbeSpec> specs;
  for (const char* text :
       {"do_sys_open $arg1 $arg2:string", "do_sys_open%return $retval:s64 $arg2:ustring", "vfs_read+16 %di",
        "0xffffffff81000000", "grp:ev=do_sys_open @jiffies:u64", "grp:sym=vfs_read op=%si:symstr at=+8(%di):symstr"})
    specs.push_back(*ParseProbeSpec(text));
  EventNamer namer({}, false);
  Target kernel;  // the running kernel, its image not found
  kernel.arch = &X86_64Arch();
  SystemView system;
  system.features = AllFeatures();
  ResolveOptions options;
  options.maxactive = 8;
  auto resolution = Resolve(specs, kernel, system, options);
  REQUIRE(resolution);
  REQUIRE(NameEvents(*resolution, namer));
  auto defs = Synthesize(*resolution, kernel);
  REQUIRE(defs);
  std::vector<std::string> lines;
  for (const TraceEventDef& def : *defs) lines.push_back(FormatDefinition(def));
  CHECK(lines == std::vector<std::string>{
                     "p:probe/do_sys_open do_sys_open+0 arg1=%di arg2=+0(%si):string",
                     "r8:probe/do_sys_open__return do_sys_open+0 retval=$retval:s64 arg2=+0($arg2):ustring",
                     "p:probe/vfs_read vfs_read+16 di=%di", "p:probe/abs_ffffffff81000000 0xffffffff81000000",
                     "p:grp/ev do_sys_open+0 jiffies=@jiffies:u64",
                     // symstr takes an address as a value; string, where a string is.
                     "p:grp/sym vfs_read+0 op=%si:symstr at=+8(%di):symstr"});
}

TEST_CASE("arm64's running kernel: targets count from _stext, its blacklist is moved by the slide of _stext") {
  // Linux 6.1's arm64 /proc/kallsyms has _stext but no _text (scripts/kallsyms
  // keeps no symbol before _stext): "_text+OFF" was "Invalid probed address
  // or symbol", and without _text the debugfs blacklist could not be placed.
  const ElfImage& image = Fixture("arm64/kernel_like");
  const ElfSymbol* stext = image.Find("_stext");
  const ElfSymbol* summarize = image.Find("summarize");
  REQUIRE(stext);
  REQUIRE(summarize);
  const uint64_t slide = 0xffff800000000000;
  auto at = [&](uint64_t address) { return Hex(address + slide).substr(2); };
  auto resolve = [&](const std::string& text) -> Result<std::vector<std::string>> {
    Target kernel;
    kernel.kind = Target::kRunningKernel;
    kernel.arch = &Aarch64Arch();
    kernel.path = image.path();
    kernel.image = std::make_unique<ElfImage>(image);
    SystemView system;
    system.features = AllFeatures();
    system.running = true;
    // process is unique in the image, not in kallsyms (a module has one too).
    system.kallsyms =
        KallsymsNames::Parse(at(stext->value) + " T _stext\n" + at(summarize->value) +
                             " t summarize\n0000000000001000 t process\nffff000000001000 t process\t[m]\n");
    system.blacklist = "0x" + at(summarize->value) + "-0x" + at(summarize->value + summarize->size) + "\tsummarize\n";
    Resolution resolution = KP_TRY(Resolve({*ParseProbeSpec(text)}, kernel, system, {}));
    EventNamer namer({}, false);
    KP_TRY_VOID(NameEvents(resolution, namer));
    std::vector<std::string> lines;
    for (const TraceEventDef& def : KP_TRY(Synthesize(resolution, kernel))) lines.push_back(FormatDefinition(def));
    return lines;
  };
  auto process = resolve("process");
  REQUIRE(process);
  CHECK(*process == std::vector<std::string>{"p:probe/process _stext+" +
                                             std::to_string(image.Find("process")->value - stext->value)});
  auto tally = resolve("tally");
  REQUIRE(tally);
  std::vector<std::string> tallies;  // the two static functions, in address order
  for (const ElfSymbol& s : image.symbols())
    if (s.name == "tally") tallies.push_back(std::to_string(s.value - stext->value));
  REQUIRE(tallies.size() == 2);
  std::sort(tallies.begin(), tallies.end(),
            [](const std::string& a, const std::string& b) { return std::stoull(a) < std::stoull(b); });
  CHECK(*tally ==
        std::vector<std::string>{"p:probe/tally _stext+" + tallies[0], "p:probe/tally_1 _stext+" + tallies[1]});
  auto refused = resolve("summarize");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message ==
        "'summarize' is on the kernel's kprobe blacklist (summarize): the kernel refuses "
        "probes there, which could recurse or break its entry code");
}

TEST_CASE("a kernel function named without an image is checked against BTF, then kallsyms, with the nearest names") {
  auto btf = BtfInfo::Open(FixturePath("kernel_btf.btf"), X86_64Arch());
  REQUIRE(btf);
  auto kallsyms = std::make_shared<KallsymsNames>(KallsymsNames::Parse(
      "ffffffff81000000 T _text\nffffffff81000100 T btf_pair\nffffffff81000200 t entry_SYSCALL_64\n"
      "ffffffff81000300 t vfs_read\nffffffff81000400 t vfs_readv\nffffffff81000500 d vfs_data\n"));
  struct Case {
    const char* spec;
    bool with_kallsyms;
    std::string error;  // empty: resolved
    const char* hint;
  } cases[] = {
      {"btf_many", true, "", ""},          // BTF has it (kallsyms need not be read)
      {"entry_SYSCALL_64", true, "", ""},  // kallsyms only: assembly
      {"vfs_raed%return", true, "no function 'vfs_raed' in the running kernel 6.0.0 (/proc/kallsyms)",
       "similar names: vfs_read, vfs_readv"},
      {"vfs_data", true, "no function 'vfs_data' in the running kernel 6.0.0 (/proc/kallsyms)",
       "list its functions with 'kprobectl funcs'"},  // a data symbol is no function
      {"nosuchfunc+4", true, "no function 'nosuchfunc' in the running kernel 6.0.0 (/proc/kallsyms)",
       "list its functions with 'kprobectl funcs'"},
      {"btf_pairs", false,
       "no function 'btf_pairs' in the BTF of the running kernel 6.0.0 (" + FixturePath("kernel_btf.btf") + ")",
       "similar names: btf_pair"},
      {"0xffffffff81000010", true, "", ""},  // an address is the kernel's to check
      // What needs the DWARF it does not have: a wrong name is said first.
      {"vfs_raed:3", true, "no function 'vfs_raed' in the running kernel 6.0.0 (/proc/kallsyms)",
       "similar names: vfs_read, vfs_readv"},
      {"vfs_raed;count++", true, "no function 'vfs_raed' in the running kernel 6.0.0 (/proc/kallsyms)",
       "similar names: vfs_read, vfs_readv"},
      {"vfs_read:3", true, "'vfs_read:3' needs the kernel's DWARF: BTF has no lines or source files",
       "install the kernel's debug package"},
  };
  for (const Case& c : cases) {
    INFO(c.spec);
    Target kernel;
    kernel.arch = &X86_64Arch();
    kernel.btf = std::move(*BtfInfo::Open(FixturePath("kernel_btf.btf"), X86_64Arch()));
    SystemView system;
    system.features = AllFeatures();
    system.env.release = "6.0.0";
    system.env.kallsyms = "/proc/kallsyms";
    bool asked = false;
    system.kernel_functions = [&]() -> const KallsymsNames* {
      asked = true;
      return c.with_kallsyms ? kallsyms.get() : nullptr;
    };
    auto spec = ParseProbeSpec(c.spec);
    REQUIRE(spec);
    auto resolution = Resolve({*spec}, kernel, system, {});
    if (c.error.empty()) {
      CHECK(resolution);
      if (std::string(c.spec) == "btf_many") CHECK_FALSE(asked);
      continue;
    }
    REQUIRE_FALSE(resolution);
    CHECK(resolution.error().message == c.error);
    CHECK(resolution.error().hint == c.hint);
  }
}

TEST_CASE("arm64 binaries from an x86-64 host: AAPCS64 argument slots, registers by name, C++") {
  std::string bin = FixturePath("arm64/target_O2");
  auto entry = RunKprobectl({"-x", bin, "-D", "many_args $arg1 $arg6 $arg7 $arg8:s64 $arg9 $arg10"});
  INFO(entry.err);
  REQUIRE(entry.status == 0);
  auto image = ElfImage::Open(bin);
  REQUIRE(image);
  uint64_t many_args = 0, compute = 0;
  for (const ElfSymbol& s : image->symbols()) {
    if (s.name == "many_args") many_args = *image->FileOffset(s.value);
    if (s.name == "compute") compute = *image->FileOffset(s.value);
  }
  CHECK(Replace(entry.out, bin, "BIN") == "p:probe_target_O2/many_args BIN:" + Hex(many_args) +
                                              " arg1=%x0 arg6=%x5 arg7=%x6 arg8=%x7:s64 arg9=+0(%sp) arg10=+8(%sp)\n");
  auto dwarf = RunKprobectl({"-x", bin, "-D", "compute $params"});
  CHECK(Replace(dwarf.out, bin, "BIN") == "p:probe_target_O2/compute BIN:" + Hex(compute) + " a=%x0:s32 b=%x1:s32\n");
  auto ret = RunKprobectl({"-x", bin, "-D", "compute%return $retval:s32 x=%x0 lr=%lr"});
  CHECK(Replace(ret.out, bin, "BIN") ==
        "r:probe_target_O2/compute__return BIN:" + Hex(compute) + " retval=$retval:s32 x=%x0 lr=%lr\n");
  // x86-64's names are refused with arm64's for the same role.
  auto x86 = RunKprobectl({"-x", bin, "-D", "compute %rsi"});
  CHECK(x86.status == 1);
  CHECK(x86.err ==
        "kprobectl: error: invalid argument: unknown register '%rsi' on arm64\n"
        "    compute %rsi\n"
        "            ^\n"
        "  hint: did you mean %x1? (%rsi is x86-64's register for argument 2; on arm64 it is %x1)\n");
  auto unknown = RunKprobectl({"-x", bin, "-D", "compute %x31"});
  CHECK(unknown.err ==
        "kprobectl: error: invalid argument: unknown register '%x31' on arm64\n    compute %x31\n            ^\n"
        "  hint: arm64 registers: %x0..%x30 %lr %sp %pc %pstate\n");
  // C++ through the DWARF, names and overloads as on x86-64.
  std::string shop = FixturePath("arm64/shop");
  auto cxx = RunKprobectl({"-x", shop, "-D", "shop::Cart::add(long) price this->total_"});
  INFO(cxx.err);
  REQUIRE(cxx.status == 0);
  CHECK(cxx.out == "p:probe_shop/shop__Cart__add " + shop + ":0x1484 price=%x1:s64 total_=+16(%x0):s64\n");
  // funcs lists the same functions as the x86-64 build of the same sources.
  auto arm_funcs = RunKprobectl({"-x", bin, "funcs", "compute|greet|helper|many_args|main"});
  auto x86_funcs = RunKprobectl({"-x", FixturePath("target_O2"), "funcs", "compute|greet|helper|many_args|main"});
  CHECK(arm_funcs.out == "compute\ngreet\nhelper\nmain\nmany_args\n");
  CHECK(arm_funcs.out == x86_funcs.out);
}

TEST_CASE("an arm64 kernel image: entries after ftrace's patchable NOPs, return probes at the symbol") {
  std::string vmlinux = FixturePath("arm64/kernel_like");
  // The DWARF's low_pc is the symbol + 8: two NOPs at each function (-fpatchable-function-entry=2).
  auto r = RunKprobectl(
      {"-k", vmlinux, "-D", "process factor", "-D", "p2=process%return $retval", "-D", "p3=process+4 %x1"});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out ==
        "p:probe/process process+8 factor=%x1:s32\n"
        "r:probe/p2__return process+0 retval=$retval:s32\n"
        "p:probe/p3 process+12 x1=%x1\n");
}
