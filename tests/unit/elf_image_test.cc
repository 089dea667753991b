// SPDX-License-Identifier: GPL-2.0-or-later
//
// ElfImage against readelf's view of the same fixtures (written at build time
// next to each fixture): every function symbol, and the file offset the
// PT_LOAD segments give it.
#include "kprobectl/elf_image.h"

#include <catch2/catch.hpp>
#include <filesystem>

#include "elf/go_buildinfo.h"
#include "kprobectl/arch.h"
#include "kprobectl/kernel_image.h"
#include "kprobectl/strings.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

struct Oracle {
  struct Load {
    uint64_t offset, vaddr, filesz;
  };
  std::vector<Load> loads;
  std::vector<std::pair<std::string, uint64_t>> functions;  // name (no @VER), value
  struct Symbol {
    std::string name;
    uint64_t value, size;
    ElfSymbol::Type type;
    bool global;
  };
  std::vector<Symbol> symbols;  // every defined, named one

  uint64_t FileOffset(uint64_t vaddr) const {
    for (const Load& l : loads)
      if (vaddr >= l.vaddr && vaddr < l.vaddr + l.filesz) return vaddr - l.vaddr + l.offset;
    FAIL("address not in any LOAD segment");
    return 0;
  }
};

Oracle ReadOracle(const std::string& fixture) {
  Oracle oracle;
  for (const std::string& line : SplitLines(ReadFile(FixturePath(fixture + ".readelf")))) {
    auto w = SplitWords(line);
    if (w.size() >= 6 && w[0] == "LOAD") {
      oracle.loads.push_back({*ParseUnsigned(w[1]), *ParseUnsigned(w[2]), *ParseUnsigned(w[4])});
    } else if (w.size() >= 8 && w[6] != "UND" && w[0].ends_with(":")) {
      std::string name = w[7].substr(0, w[7].find('@'));
      uint64_t value = *ParseUnsigned("0x" + w[1]);
      if (w[3] == "FUNC") oracle.functions.emplace_back(name, value);
      ElfSymbol::Type type = w[3] == "FUNC" || w[3] == "IFUNC"   ? ElfSymbol::kFunction
                             : w[3] == "OBJECT" || w[3] == "TLS" ? ElfSymbol::kObject
                                                                 : ElfSymbol::kOther;
      auto size = w[2].starts_with("0x") ? ParseUnsigned(w[2]) : ParseUnsigned(w[2]);
      oracle.symbols.push_back({name, value, size.value_or(0), type, w[4] != "LOCAL"});
    }
  }
  REQUIRE_FALSE(oracle.loads.empty());
  REQUIRE_FALSE(oracle.functions.empty());
  return oracle;
}

}  // namespace

TEST_CASE("symbols and file offsets agree with readelf") {
  for (const char* fixture : {"target_O0", "target_O2", "target_nopie", "libfx.so", "kernel_static"}) {
    INFO(fixture);
    auto image = ElfImage::Open(FixturePath(fixture));
    REQUIRE(image);
    Oracle oracle = ReadOracle(fixture);
    for (const auto& [name, value] : oracle.functions) {
      INFO(name);
      bool found = false;
      for (const ElfSymbol& s : image->symbols())
        found |= s.name == name && s.value == value && s.type == ElfSymbol::kFunction;
      CHECK(found);
      if (value == 0) continue;
      auto offset = image->FileOffset(value);
      REQUIRE(offset);
      CHECK(*offset == oracle.FileOffset(value));
      CHECK(*image->VirtualAddress(*offset) == value);
    }
  }
}

TEST_CASE("PIE, non-PIE and build-id") {
  auto pie = ElfImage::Open(FixturePath("target_O2"));
  auto fixed = ElfImage::Open(FixturePath("target_nopie"));
  REQUIRE(pie);
  REQUIRE(fixed);
  CHECK(pie->shared_object());
  CHECK_FALSE(fixed->shared_object());
  CHECK(pie->build_id().size() == 40);  // gcc's default sha1 build-id
  // In the non-PIE binary, virtual addresses and file offsets differ by the base.
  const ElfSymbol* compute = nullptr;
  for (const ElfSymbol& s : fixed->symbols())
    if (s.name == "compute") compute = &s;
  REQUIRE(compute);
  CHECK(compute->value >= 0x400000);
  CHECK(*fixed->FileOffset(compute->value) < 0x400000);
}

TEST_CASE("static functions of one name in two objects are both there") {
  auto image = ElfImage::Open(FixturePath("target_O2"));
  REQUIRE(image);
  std::vector<uint64_t> helpers;
  for (const ElfSymbol& s : image->symbols())
    if (s.name == "helper") {
      CHECK_FALSE(s.global);
      helpers.push_back(s.value);
    }
  REQUIRE(helpers.size() == 2);
  CHECK(helpers[0] != helpers[1]);
  const ElfSymbol* at = image->FunctionAt(helpers[1] + 1);
  REQUIRE(at);
  CHECK(at->name == "helper");
  CHECK(at->value == helpers[1]);
}

TEST_CASE("an image's architecture and whether Go built it, decided when it is read") {
  struct Row {
    std::string fixture;
    std::string arch;  // its name, "-" for none
    bool go, go_register_abi;
  };
  // The fixtures' Go is Debian 12's, 1.19: past the register ABI on both.
  const Row rows[] = {
      {"target_O2", "x86-64", false, false},      {"gofx", "x86-64", true, true},
      {"gofx_nodwarf", "x86-64", true, true},     {"arm64/gofx", "arm64", true, true},
      {"arm64/target_O2", "arm64", false, false},
  };
  for (const Row& row : rows) {
    INFO(row.fixture);
    auto image = ElfImage::Open(FixturePath(row.fixture));
    REQUIRE(image);
    CHECK((image->arch() ? std::string(image->arch()->name()) : "-") == row.arch);
    CHECK(image->go() == row.go);
    CHECK(image->go_register_abi() == row.go_register_abi);
    CHECK(image->go_version().starts_with("go1.") == row.go);
  }
  // A machine kprobectl does not know (target_O2 with e_machine EM_386):
  // read, with no architecture, so no symbol to count kernel targets from.
  TempDir dir;
  std::string bytes = ReadFile(FixturePath("target_O2"));
  REQUIRE(bytes.size() > 20);
  bytes[18] = 3;  // e_machine, little-endian: EM_386
  bytes[19] = 0;
  WriteFile(dir / "i386", bytes);
  auto other = ElfImage::Open(dir / "i386");
  REQUIRE(other);
  CHECK(other->arch() == nullptr);
  CHECK(KernelTextSymbol(*other).empty());
  CHECK(KernelTextSymbol(*ElfImage::Open(FixturePath("kernel_like"))) == "_text");
  // The Go version's minor number, which the architecture's threshold reads.
  CHECK(GoMinorVersion("go1.19.8") == 19);
  CHECK(GoMinorVersion("go1.21rc2") == 21);
  CHECK(GoMinorVersion("devel go1.22-5f3b1d2 Tue Jan 2 2024") == 22);
  CHECK(GoMinorVersion("go1.") == 0);
  CHECK(GoMinorVersion("") == 0);
}

TEST_CASE("GNU symbol versions") {
  auto image = ElfImage::Open(FixturePath("libfx.so"));
  REQUIRE(image);
  std::vector<std::string> versions;
  for (const ElfSymbol& s : image->symbols())
    if (s.name == "fx_lookup" || s.name == "fx_plain")
      versions.push_back(s.name + (s.default_version ? "@@" : "@") + s.version);
  std::sort(versions.begin(), versions.end());
  CHECK(versions == std::vector<std::string>{"fx_lookup@@FX_2", "fx_lookup@FX_1", "fx_plain@@FX_1"});
}

TEST_CASE("files that are not ELF, or not there, are clear errors") {
  auto missing = ElfImage::Open("/nonexistent/demo");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message == "cannot open '/nonexistent/demo': No such file or directory");
  auto text = ElfImage::Open(DataPath("error_log-uprobe.txt"));
  REQUIRE_FALSE(text);
  CHECK(text.error().message == "'" + DataPath("error_log-uprobe.txt") + "' is not an ELF file");
  auto image = ElfImage::Open(FixturePath("target_O2"));
  REQUIRE(image);
  auto outside = image->FileOffset(0xdead0000);
  REQUIRE_FALSE(outside);
  CHECK(outside.error().message ==
        "address 0xdead0000 is not in any loadable segment of '" + FixturePath("target_O2") + "'");
}

TEST_CASE("an image with one symbol table is read in place, and its symbol index in the cache changes no answer") {
  // kernel_static has .symtab only, as a vmlinux: the table is read where
  // the file is mapped, and with a cache directory its names and addresses
  // are indexed there. Every look-up must agree with readelf, and across
  // no cache, a freshly built index, the index read back, a corrupted one.
  const std::string path = FixturePath("kernel_static");
  Oracle oracle = ReadOracle("kernel_static");
  REQUIRE(oracle.symbols.size() > 500);  // libc's, linked in
  TempDir cache;
  auto answers = [&](const ElfImage& image) {
    std::vector<std::string> out;
    auto describe = [](const ElfSymbol* s) { return s ? s->name + "@" + std::to_string(s->value) : std::string("-"); };
    std::vector<uint64_t> starts;
    for (const Oracle::Symbol& o : oracle.symbols) {
      out.push_back(describe(image.Find(o.name)) + " " + std::to_string(image.CountNamed(o.name, o.type)));
      out.push_back(describe(image.FunctionAt(o.value)) + " " + describe(image.FunctionAt(o.value + 1)));
      out.push_back(describe(image.ObjectAt(o.value)) + " " + describe(image.ObjectAt(o.value + 7)));
      starts.push_back(o.value);
    }
    for (const ElfSymbol* s : image.FunctionsStartingAt(starts)) out.push_back(describe(s));
    return out;
  };
  auto plain = ElfImage::Open(path);
  REQUIRE(plain);
  // Against readelf: every name is found with its count, every function's
  // start maps to a function there.
  for (const Oracle::Symbol& o : oracle.symbols) {
    INFO(o.name);
    if (o.type == ElfSymbol::kOther) continue;
    size_t count = 0;
    for (const Oracle::Symbol& p : oracle.symbols) count += p.name == o.name && p.type == o.type;
    CHECK(plain->CountNamed(o.name, o.type) == count);
    const ElfSymbol* found = plain->Find(o.name);
    REQUIRE(found);
    CHECK(found->name == o.name);
    if (o.type == ElfSymbol::kFunction) {
      const ElfSymbol* at = plain->FunctionAt(o.value);
      REQUIRE(at);
      CHECK(at->value == o.value);
    }
  }
  auto expected = answers(*plain);
  auto built = ElfImage::Open(path, cache.path());
  REQUIRE(built);
  CHECK(answers(*built) == expected);
  std::string index = cache / (built->build_id() + ".sym");
  std::string bytes = ReadFile(index);
  REQUIRE(bytes.size() > 128);
  auto read = ElfImage::Open(path, cache.path());
  REQUIRE(read);
  CHECK(answers(*read) == expected);
  for (size_t at : {size_t{9}, size_t{200}, bytes.size() - 1}) {
    std::string bad = bytes;
    bad[at] = static_cast<char>(bad[at] ^ 0x10);
    WriteFile(index, bad);
    auto again = ElfImage::Open(path, cache.path());
    REQUIRE(again);
    CHECK(answers(*again) == expected);
    // Refused at open (the header, the block table: rebuilt and written
    // again), or caught where a look-up read it (scanned, the file
    // removed): the next run writes it anew.
    if (at == 200) CHECK_FALSE(std::filesystem::exists(index));
    if (!std::filesystem::exists(index)) REQUIRE(ElfImage::Open(path, cache.path()));
    CHECK(ReadFile(index) == bytes);
  }
}
