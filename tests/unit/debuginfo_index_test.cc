// SPDX-License-Identifier: GPL-2.0-or-later
//
// The debuginfo index: its file format never trusts bytes that were not
// written as they are (every truncation, every flipped byte, another
// version, build-id, size or mtime is refused), and the three ways of
// finding names (a scan per name, an index built now, the cache file) give
// the same answers on the fixtures.
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>

#include "debuginfo/index_file.h"
#include "kprobectl/cache_file.h"
#include "kprobectl/debuginfo.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;
using kprobectl::dwarf::IndexContents;
using kprobectl::dwarf::IndexKey;
using kprobectl::dwarf::IndexView;

namespace {

IndexKey Key() { return {"\x3b\x43\xfa\xd5\x03\x48", 590000, 1234567890123}; }

IndexContents Contents() {
  IndexContents c;
  c.functions = {{"do_sys_open", {0x10, 0x2000 | dwarf::kInlinedFlag}}, {"main", {0x40}}, {"zz", {}}};
  c.globals = {{"jiffies", {0x80, 0x90}}};
  c.units = {0xb, 0x1000, 0x3000};
  c.frames = {{0x1000, 0x1040, 0x18}, {0x1040, 0x10a0, 0x40}};
  c.files = {{"open.c", {0xb}}, {"types.h", {0xb, 0x1000}}};
  return c;
}

std::vector<std::pair<std::string, uint64_t>> Flatten(const std::vector<DwarfAddress>& addresses) {
  std::vector<std::pair<std::string, uint64_t>> out;
  for (const DwarfAddress& a : addresses) out.emplace_back(a.function + (a.inlined ? " inlined" : ""), a.address);
  return out;
}

// Every instance of every function, through the public interface, with
// where each of its variables is there (the frame's CFA for those on the
// stack).
std::vector<std::pair<std::string, uint64_t>> Everything(Debuginfo& debuginfo) {
  ProbePoint all;
  all.function = "*";
  auto found = debuginfo.Resolve(all, {});
  REQUIRE(found);
  auto out = Flatten(*found);
  for (const DwarfAddress& at : *found) {
    auto vars = debuginfo.FetchAll(debuginfo.AfterPrologue(at), false, nullptr);
    REQUIRE(vars);
    for (const VariableFetch& v : *vars) {
      std::string where = v.name + " " + std::to_string(v.root) + " " + std::to_string(v.dwarf_register) + " " +
                          std::to_string(v.address) + " " + FormatFetchType(v.type);
      for (int64_t d : v.derefs) where += " " + std::to_string(d);
      out.emplace_back(where, at.address);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("index file: what is written is read back") {
  std::string bytes = dwarf::SerializeIndex(Key(), Contents());
  for (auto& view :
       {IndexView::FromBytes(bytes, Key()), IndexView::Trusted(dwarf::SerializeIndex({}, Contents(), false))}) {
    REQUIRE(view);
    CHECK((*view)->Functions("do_sys_open").value() == std::vector<uint64_t>{0x10, 0x2000 | dwarf::kInlinedFlag});
    CHECK((*view)->Functions("main").value() == std::vector<uint64_t>{0x40});
    CHECK((*view)->Functions("zz")->empty());
    CHECK((*view)->Functions("mai")->empty());
    CHECK((*view)->Functions("jiffies")->empty());  // a global, not a function
    CHECK((*view)->Globals("jiffies").value() == std::vector<uint64_t>{0x80, 0x90});
    CHECK((*view)->FunctionNames().value() == std::vector<std::string>{"do_sys_open", "main", "zz"});
    CHECK((*view)->Units().value() == std::vector<uint64_t>{0xb, 0x1000, 0x3000});
    CHECK((*view)->Files("types.h").value() == std::vector<uint64_t>{0xb, 0x1000});
    CHECK((*view)->Files("main")->empty());  // a function, not a file
    CHECK((*view)->FrameFor(0x1000).value() == 0x18);
    CHECK((*view)->FrameFor(0x109f).value() == 0x40);
    CHECK_FALSE((*view)->FrameFor(0x10a0).value());
    CHECK_FALSE((*view)->FrameFor(0xfff).value());
  }
}

namespace {

// Every answer of a view, as text: "error" where a read failed its check.
std::string AllAnswers(const IndexView& view) {
  std::string out;
  auto put = [&](const auto& answer) {
    if (!answer) {
      out += "error\n";
      return;
    }
    for (const auto& x : *answer) out += std::to_string(x) + " ";
    out += "\n";
  };
  for (const char* name : {"do_sys_open", "main", "zz", "mai", "jiffies", "types.h"}) {
    put(view.Functions(name));
    put(view.Globals(name));
    put(view.Files(name));
  }
  put(view.Units());
  for (uint64_t address : {0xfffULL, 0x1000ULL, 0x109fULL, 0x10a0ULL}) {
    auto frame = view.FrameFor(address);
    out += !frame ? "error\n" : *frame ? std::to_string(**frame) + "\n" : "none\n";
  }
  auto names = view.FunctionNames();
  out += names ? std::to_string(names->size()) + (names->empty() ? "" : names->front()) + "\n" : "error\n";
  return out;
}

}  // namespace

TEST_CASE("index file: every truncation refused, every flipped byte refused or caught where it is read") {
  std::string bytes = dwarf::SerializeIndex(Key(), Contents());
  for (size_t size = 0; size < bytes.size(); ++size) {
    INFO("truncated to " << size);
    CHECK_FALSE(IndexView::FromBytes(bytes.substr(0, size), Key()));
  }
  CHECK_FALSE(IndexView::FromBytes(bytes + '\0', Key()));
  const std::string truth = AllAnswers(**IndexView::FromBytes(bytes, Key()));
  REQUIRE_FALSE(truth.empty());
  REQUIRE(truth.find("error") == std::string::npos);
  size_t refused = 0, caught = 0;
  for (size_t at = 0; at < bytes.size(); ++at)
    for (int bit : {0x01, 0x80}) {
      std::string bad = bytes;
      bad[at] = static_cast<char>(bad[at] ^ bit);
      INFO("byte " << at << " ^ " << bit);
      auto view = IndexView::FromBytes(bad, Key());
      if (!view) {
        ++refused;
        continue;
      }
      // Opened (the flip is past the header): every answer is the truth or
      // an error, and the block it lies in fails where it is read (here
      // every look-up reads the one block).
      std::string answers = AllAnswers(**view);
      CHECK(answers != truth);
      for (size_t line = 0, start = 0; start < answers.size(); ++line) {
        size_t end = answers.find('\n', start);
        std::string got = answers.substr(start, end - start);
        size_t tstart = 0;
        for (size_t l = 0; l < line; ++l) tstart = truth.find('\n', tstart) + 1;
        std::string want = truth.substr(tstart, truth.find('\n', tstart) - tstart);
        if (got != "error") CHECK(got == want);
        start = end + 1;
      }
      ++caught;
    }
  CHECK(refused + caught == bytes.size() * 2);
  CHECK(refused >= 128 * 2);  // the header's, at least: the seal covers it
}

TEST_CASE("index file: another version, build-id, size or mtime is refused, saying which") {
  std::string bytes = dwarf::SerializeIndex(Key(), Contents());
  std::string other_version = bytes;
  other_version[8] = 12;
  auto v = IndexView::FromBytes(other_version, Key());
  REQUIRE_FALSE(v);
  CHECK(v.error().message == "index format 12, not 11");
  IndexKey key = Key();
  key.build_id[0] = 'x';
  CHECK(IndexView::FromBytes(bytes, key).error().message == "the index is of another build-id");
  key = Key();
  key.size += 1;
  CHECK(IndexView::FromBytes(bytes, key).error().message == "the indexed file changed (size or mtime)");
  key = Key();
  key.mtime_ns += 1;
  CHECK(IndexView::FromBytes(bytes, key).error().message == "the indexed file changed (size or mtime)");
  CHECK(IndexView::FromBytes(std::string(200, 'K'), Key()).error().message == "not a kprobectl index");
}

TEST_CASE("index file: written by rename, named by build-id") {
  TempDir dir;
  std::string path = dwarf::IndexFilePath(dir / "sub/kprobectl", Key());
  CHECK(path == dir / "sub/kprobectl/3b43fad50348.idx");
  REQUIRE(WriteFileAtomically(path, dwarf::SerializeIndex(Key(), Contents())));
  REQUIRE(IndexView::FromFile(path, Key()));
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir / "sub/kprobectl")) ++files;
  CHECK(files == 1);  // no temporary left behind
}

TEST_CASE("debuginfo index: a scan, a fresh index and the cache file find the same instances") {
  for (const char* fixture : {"records_O0", "records_O2", "target_O2", "kernel_like", "kernel_static"}) {
    INFO(fixture);
    std::string bin = FixturePath(fixture);
    auto scan = Debuginfo::Open(bin);
    REQUIRE(scan);
    auto scanned = Everything(**scan);
    CHECK((*scan)->index_status().use == IndexStatus::kScan);
    CHECK(scanned.size() > 5);

    TempDir cache;
    auto built = Debuginfo::Open(bin, {cache.path(), nullptr});
    REQUIRE(built);
    CHECK(Everything(**built) == scanned);
    CHECK((*built)->index_status().use == IndexStatus::kCacheBuilt);
    CHECK((*built)->index_status().problem.empty());

    auto read = Debuginfo::Open(bin, {cache.path(), nullptr});
    REQUIRE(read);
    CHECK(Everything(**read) == scanned);
    CHECK((*read)->index_status().use == IndexStatus::kCacheRead);
  }
}

TEST_CASE("debuginfo index: a corrupt, truncated or stale cache file is rebuilt, with the reason") {
  TempDir dir, cache;
  std::string bin = dir / "records_O2";
  WriteFile(bin, ReadFile(FixturePath("records_O2")));
  std::vector<std::pair<std::string, uint64_t>> expected;
  std::string file;
  {
    auto first = Debuginfo::Open(bin, {cache.path(), nullptr});
    REQUIRE(first);
    expected = Everything(**first);
    file = (*first)->index_status().file;
  }
  auto reopen = [&](const std::string& problem) {
    auto again = Debuginfo::Open(bin, {cache.path(), nullptr});
    REQUIRE(again);
    CHECK(Everything(**again) == expected);
    IndexStatus status = (*again)->index_status();
    CHECK(status.use == IndexStatus::kCacheBuilt);
    CHECK(status.problem == file + ": " + problem + "; rebuilt");
    auto after = Debuginfo::Open(bin, {cache.path(), nullptr});
    REQUIRE(after);
    CHECK(Everything(**after) == expected);
    CHECK((*after)->index_status().use == IndexStatus::kCacheRead);
  };
  std::string good = ReadFile(file);
  WriteFile(file, good.substr(0, good.size() - 9));
  reopen("truncated or extended");
  std::string bad = good;
  bad[good.size() - 3] ^= 1;
  WriteFile(file, bad);
  reopen("corrupt (hash mismatch)");
  bad = good;
  bad[8] = 99;
  WriteFile(file, bad);
  reopen("index format 99, not 11");
  // Past the seal: the header and block table agree, a block of names does
  // not, found when a look-up reads it.
  uint64_t payload;
  std::memcpy(&payload, good.data() + 80, 8);
  bad = good;
  bad[payload - 1] ^= 1;
  WriteFile(file, bad);
  reopen("corrupt (a block's hash)");
  // The same build-id, but the file was touched: a guard, not trusted.
  struct timespec times[2] = {{0, UTIME_OMIT}, {1000000, 0}};
  REQUIRE(utimensat(AT_FDCWD, bin.c_str(), times, 0) == 0);
  reopen("the indexed file changed (size or mtime)");
}

TEST_CASE("debuginfo index: a cache directory that cannot be written: a scan, as with --no-cache") {
  TempDir dir;
  WriteFile(dir / "file", "");
  auto debuginfo = Debuginfo::Open(FixturePath("records_O2"), {dir / "file/kprobectl", nullptr});
  REQUIRE(debuginfo);
  CHECK(Everything(**debuginfo).size() > 5);
  IndexStatus status = (*debuginfo)->index_status();
  CHECK(status.use == IndexStatus::kScan);
  CHECK(status.problem == "cannot write the cache directory '" + dir / "file/kprobectl" +
                              "': Not a directory; names found by a scan instead");
}

TEST_CASE("debuginfo: compressed debug sections (gcc -gz) read as the same DWARF") {
  auto plain = Debuginfo::Open(FixturePath("records_O2"), {"", nullptr});
  auto compressed = Debuginfo::Open(FixturePath("records_gz"), {"", nullptr});
  REQUIRE(plain);
  REQUIRE(compressed);
  CHECK(Everything(**compressed) == Everything(**plain));
}

// With an index in the cache, a CU found by address is read from the file's
// .debug_aranges by kprobectl itself (dwarf_windows.cc), not libdw: a set
// whose unit offset lies past .debug_info, whose length runs past the
// section, or whose padding runs past its set is no answer and no read past
// the bytes. The look-up then goes to the units' own ranges, and finds the
// same function (the file's size and mtime kept, so the index is still used).
TEST_CASE("DWARF windows: a corrupt .debug_aranges is never read past, and addresses still resolve") {
  TempDir dir, cache;
  std::string bin = dir / "records_O2";
  const std::string good = ReadFile(FixturePath("records_O2"));
  WriteFile(bin, good);
  struct stat st;
  REQUIRE(stat(bin.c_str(), &st) == 0);
  const uint64_t address = 0x1370;  // the first range of the first set (readelf)
  ProbePoint process;
  process.function = "process";
  // A name looked up reads the index, with which a unit is read in a window.
  auto function_at = [&](Debuginfo& debuginfo) {
    REQUIRE(debuginfo.Resolve(process, {}));
    CHECK(debuginfo.index_status().use != IndexStatus::kScan);
    auto at = debuginfo.AtAddress(address);
    REQUIRE(at);
    return at->function;
  };
  std::string expected;
  {
    auto first = Debuginfo::Open(bin, {cache.path(), nullptr});
    REQUIRE(first);
    expected = function_at(**first);
  }
  // .debug_aranges of the fixture: its offset from its section header.
  Elf64_Ehdr ehdr;
  std::memcpy(&ehdr, good.data(), sizeof ehdr);
  Elf64_Shdr strtab, shdr;
  std::memcpy(&strtab, good.data() + ehdr.e_shoff + ehdr.e_shstrndx * sizeof(Elf64_Shdr), sizeof strtab);
  uint64_t aranges = 0;
  for (unsigned i = 0; i < ehdr.e_shnum; ++i) {
    std::memcpy(&shdr, good.data() + ehdr.e_shoff + i * sizeof(Elf64_Shdr), sizeof shdr);
    if (std::string(good.data() + strtab.sh_offset + shdr.sh_name) == ".debug_aranges") aranges = shdr.sh_offset;
  }
  REQUIRE(aranges != 0);
  struct Patch {
    uint64_t at;  // from the first set's start: its length (0), its unit offset (6), its padding's size (sizes)
    std::string bytes;
  };
  for (const Patch& p : {Patch{6, std::string("\x00\x00\xf0\x7f", 4)}, Patch{0, std::string("\xf0\xff\xff\x7f", 4)},
                         Patch{0, std::string("\x09\x00\x00\x00", 4)}}) {
    INFO("patched at " << p.at);
    std::string bad = good;
    bad.replace(aranges + p.at, p.bytes.size(), p.bytes);
    WriteFile(bin, bad);
    struct timespec times[2] = {st.st_atim, st.st_mtim};
    REQUIRE(utimensat(AT_FDCWD, bin.c_str(), times, 0) == 0);
    auto again = Debuginfo::Open(bin, {cache.path(), nullptr});
    REQUIRE(again);
    CHECK(function_at(**again) == expected);
    CHECK((*again)->index_status().use == IndexStatus::kCacheRead);
  }
}
