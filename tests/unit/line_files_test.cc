// SPDX-License-Identifier: GPL-2.0-or-later
//
// The line-program readers against libdw: for every CU of the DWARF 4 and
// 5 fixtures (and of the VM's vmlinux when this machine has it), the file
// basenames and the paths by index read from the header are the ones
// dwarf_getsrcfiles gives, and the line table's rows the ones
// dwarf_getsrclines and dwarf_getsrc_die give.
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>

#include "debuginfo/dwarf_internal.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

// The files of a CU's line program by index, as libdw names them (what
// dwarf_decl_file answers for DW_AT_decl_file N).
std::vector<std::string> LibdwPaths(Dwarf_Die* cu) {
  std::vector<std::string> out;
  Dwarf_Files* files = nullptr;
  size_t count = 0;
  if (dwarf_getsrcfiles(cu, &files, &count) != 0) return out;
  for (size_t i = 0; i < count; ++i) {
    const char* path = dwarf_filesrc(files, i, nullptr, nullptr);
    out.emplace_back(path ? path : "(null)");
  }
  return out;
}

// The CU's line table as ReadLineTable reads it against libdw's: every row
// in order, and the row for addresses at, before and after a sample of
// rows against dwarf_getsrc_die's.
void CompareLines(const dwarf::LineSections& sections, Dwarf_Die* cu, uint64_t stmt) {
  Dwarf_Attribute comp_dir;
  Dwarf_Half version = 0;
  uint8_t unit_type = 0, address_size = 0;
  REQUIRE(dwarf_cu_info(cu->cu, &version, &unit_type, nullptr, nullptr, nullptr, &address_size, nullptr) == 0);
  auto table =
      dwarf::ReadLineTable(sections, stmt, dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &comp_dir)), address_size);
  REQUIRE(table);
  Dwarf_Lines* lines = nullptr;
  size_t n = 0;
  REQUIRE(dwarf_getsrclines(cu, &lines, &n) == 0);
  REQUIRE(table->rows.size() == n);
  auto same = [&](const dwarf::LineTable::Row& row, Dwarf_Line* line) {
    Dwarf_Addr addr = 0;
    int lineno = 0;
    bool stmt_flag = false, end = false;
    dwarf_lineaddr(line, &addr);
    dwarf_lineno(line, &lineno);
    dwarf_linebeginstatement(line, &stmt_flag);
    dwarf_lineendsequence(line, &end);
    const char* file = dwarf_linesrc(line, nullptr, nullptr);
    const char* ours = table->File(row);
    return row.address == addr && row.line == lineno && row.stmt == stmt_flag && row.end_sequence == end &&
           (file && ours ? std::string_view(file) == ours : file == ours);
  };
  // One assertion a CU (millions of rows in a vmlinux): the first
  // difference is named.
  std::string first_difference;
  for (size_t i = 0; i < n && first_difference.empty(); ++i)
    if (!same(table->rows[i], dwarf_onesrcline(lines, i))) first_difference = "row " + std::to_string(i);
  for (size_t i = 0; i < n && first_difference.empty(); i += 7) {
    for (uint64_t address : {table->rows[i].address - 1, table->rows[i].address, table->rows[i].address + 1}) {
      const dwarf::LineTable::Row* ours = table->At(address);
      Dwarf_Line* theirs = dwarf_getsrc_die(cu, address);
      if ((ours == nullptr) != (theirs == nullptr) || (ours && !same(*ours, theirs)))
        first_difference = "the row at address " + std::to_string(address);
    }
  }
  CHECK(first_difference == "");
}

// Returns how many CUs were compared: the basenames LineProgramFiles reads
// and the paths LineProgramPaths reads, each against libdw's, and the line
// table ReadLineTable reads against libdw's.
size_t Compare(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  REQUIRE(elf);
  dwarf::LineSections sections;
  size_t strndx = 0;
  elf_getshdrstrndx(elf, &strndx);
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr shdr;
    gelf_getshdr(scn, &shdr);
    std::string_view name = elf_strptr(elf, strndx, shdr.sh_name);
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data || !data->d_buf) continue;
    std::span<const unsigned char> bytes(static_cast<const unsigned char*>(data->d_buf), data->d_size);
    if (name == ".debug_line") sections.line = bytes;
    if (name == ".debug_line_str") sections.line_str = bytes;
    if (name == ".debug_str") sections.str = bytes;
  }
  REQUIRE_FALSE(sections.line.empty());
  Dwarf* dwarf = dwarf_begin_elf(elf, DWARF_C_READ, nullptr);
  REQUIRE(dwarf);
  size_t compared = 0;
  Dwarf_Off offset = 0, next;
  size_t header_size;
  while (dwarf_nextcu(dwarf, offset, &next, &header_size, nullptr, nullptr, nullptr) == 0) {
    Dwarf_Die cu;
    Dwarf_Attribute attr;
    Dwarf_Word stmt = 0;
    if (dwarf_offdie(dwarf, offset + header_size, &cu) && dwarf_attr(&cu, DW_AT_stmt_list, &attr) &&
        dwarf_formudata(&attr, &stmt) == 0) {
      INFO(path << " CU at " << offset);
      auto read = dwarf::LineProgramFiles(sections, stmt);
      REQUIRE(read);
      auto by_libdw = dwarf::UnitFiles(&cu, nullptr);
      std::erase(by_libdw, "???");  // libdw's name for DWARF 4's file 0, which has none
      CHECK(*read == by_libdw);
      Dwarf_Attribute comp_dir;
      auto paths =
          dwarf::LineProgramPaths(sections, stmt, dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &comp_dir)));
      REQUIRE(paths);
      CHECK(*paths == LibdwPaths(&cu));
      CompareLines(sections, &cu, stmt);
      ++compared;
    }
    offset = next;
  }
  dwarf_end(dwarf);
  elf_end(elf);
  close(fd);
  return compared;
}

}  // namespace

TEST_CASE("line program headers: the file names, paths and line tables libdw gives, DWARF 4 and 5") {
  for (const char* fixture :
       {"records_O0", "records_O2", "records_dwarf4", "kernel_like", "libfx.so", "shop", "rsfx_O0", "rsfx_O2"}) {
    INFO(fixture);
    CHECK(Compare(FixturePath(fixture)) >= 1);
  }
  // The real thing, when the VM's kernel image is on this machine.
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/var/cache/kprobectl-vm", ec)) {
    std::string dir = entry.path().string() + "/tree/usr/lib/debug/boot";
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& image : std::filesystem::directory_iterator(dir))
      if (image.path().filename().string().starts_with("vmlinux-")) CHECK(Compare(image.path()) > 1000);
  }
}

TEST_CASE("line program headers: what cannot be read is an error, not a guess") {
  dwarf::LineSections none;
  CHECK_FALSE(dwarf::LineProgramFiles(none, 0));
  const unsigned char truncated[] = {0x40, 0, 0, 0, 5, 0};
  dwarf::LineSections bad{truncated, {}, {}};
  auto r = dwarf::LineProgramFiles(bad, 0);
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "truncated line program");
  const unsigned char version9[] = {0x06, 0, 0, 0, 9, 0, 0, 0, 0, 0};
  dwarf::LineSections odd{version9, {}, {}};
  CHECK(dwarf::LineProgramFiles(odd, 0).error().message == "line program version 9");
}

// A DWARF 5 header whose directory table has no entry formats but 2^28
// entries (each of no bytes: a loop of 2^28 and a vector as large), or more
// entries than bytes left: corrupt, refused at once; the caller asks libdw.
TEST_CASE("line program headers: entries without formats, or more than the bytes hold, are refused") {
  for (std::string count : {std::string("\x80\x80\x80\x80\x01", 5), std::string("\xff\xff\x03", 3)}) {
    const bool formats = count.size() == 3;  // 65535 entries of one format, in 4 bytes
    std::string header;
    header += std::string("\x05\x00\x08\x00", 4);                   // version 5, address size 8, no segment selector
    std::string rest = std::string("\x01\x01\x01\xfb\x0e\x01", 6);  // ..., opcode_base 1
    rest += formats ? std::string("\x01\x01\x08", 3) : std::string("\x00", 1);  // DW_LNCT_path as DW_FORM_string
    rest += count + std::string("\x00\x00\x00\x00", 4);
    std::string length(4, '\0'), unit;
    const auto header_length = static_cast<uint32_t>(rest.size());
    std::memcpy(length.data(), &header_length, 4);
    unit = header + length + rest;
    std::string unit_length(4, '\0');
    const auto total = static_cast<uint32_t>(unit.size());
    std::memcpy(unit_length.data(), &total, 4);
    unit = unit_length + unit;
    dwarf::LineSections sections{{reinterpret_cast<const unsigned char*>(unit.data()), unit.size()}, {}, {}};
    auto r = dwarf::LineProgramFiles(sections, 0);
    REQUIRE_FALSE(r);
    CHECK(r.error().message == "line program header with forms this reader does not know");
  }
}

namespace {

// A DWARF 4 line program for 8-byte addresses: one directory, file "a.c",
// then `program`.
std::string Dwarf4Unit(const std::string& program) {
  std::string rest =
      std::string("\x01\x01\x01\xfb\x0e\x0d", 6);  // min_inst, max_ops, is_stmt, base, range, opcode_base 13
  rest += std::string("\x00\x01\x01\x01\x01\x00\x00\x00\x01\x00\x00\x01", 12);  // standard opcode lengths
  rest += std::string("d\0\0", 3);                                              // include_directories
  rest += std::string("a.c\0\x01\x00\x00\0", 8);                                // file_names
  std::string header_length(4, '\0');
  const auto length = static_cast<uint32_t>(rest.size());
  std::memcpy(header_length.data(), &length, 4);
  std::string unit = std::string("\x04\x00", 2) + header_length + rest + program;
  std::string unit_length(4, '\0');
  const auto total = static_cast<uint32_t>(unit.size());
  std::memcpy(unit_length.data(), &total, 4);
  return unit_length + unit;
}

}  // namespace

// What the line-table reader does not take is an error (its caller asks
// libdw then), never rows of its own making.
TEST_CASE("line tables: what libdw reads otherwise is refused, what it reads so is read") {
  const std::string set_address = std::string("\x00\x09\x02", 3) + std::string("\x00\x10\x00\x00\x00\x00\x00\x00", 8);
  const std::string end = std::string("\x00\x01\x01", 3);
  auto read = [](const std::string& unit) {
    dwarf::LineSections sections{{reinterpret_cast<const unsigned char*>(unit.data()), unit.size()}, {}, {}};
    return dwarf::ReadLineTable(sections, 0, "/src", 8);
  };
  // set_address 0x1000, copy, a special opcode (line +1, address +1),
  // advance_pc 4, end.
  auto good = read(Dwarf4Unit(set_address + "\x01" + "\x21" + "\x02\x04" + end));
  REQUIRE(good);
  REQUIRE(good->rows.size() == 3);
  CHECK(good->rows[0].address == 0x1000);
  CHECK(good->rows[0].line == 1);
  CHECK(good->rows[1].address == 0x1001);
  CHECK(good->rows[1].line == 2);
  CHECK(good->rows[2].address == 0x1005);
  CHECK(good->rows[2].end_sequence);
  CHECK(std::string(good->File(good->rows[0])) == "d/a.c");  // directory 1 is "d"
  CHECK(good->At(0x1000) == &good->rows[0]);
  CHECK(good->At(0x1004) == &good->rows[1]);  // the last row at or before it
  CHECK(good->At(0x1005) == nullptr);         // the end of the sequence
  CHECK(good->At(0xfff) == nullptr);
  // A vendor's extended opcode, DW_LNE_define_file, a ULEB128 of 11 bytes
  // (libdw reads 10), a column libdw's row cannot hold.
  CHECK_FALSE(read(Dwarf4Unit(set_address + std::string("\x00\x02\x80\x00", 4) + "\x01" + end)));
  CHECK_FALSE(read(Dwarf4Unit(set_address +
                              std::string("\x00\x06\x03"
                                          "b.c\0\x01",
                                          8) +
                              "\x01" + end)));
  CHECK_FALSE(read(Dwarf4Unit(set_address + "\x02" + std::string(10, '\x80') + "\x01" + "\x01" + end)));
  CHECK_FALSE(read(Dwarf4Unit(set_address + std::string("\x05\x80\x80\x04", 4) + "\x01" + end)));
  // A file index past what a row holds in its 30 bits (libdw's rows hold
  // it: the caller asks libdw); the largest it holds is read, unnamed.
  CHECK_FALSE(read(Dwarf4Unit(set_address + std::string("\x04\xff\xff\xff\xff\x03", 6) + "\x01" + end)));
  auto far = read(Dwarf4Unit(set_address + std::string("\x04\xfe\xff\xff\xff\x03", 6) + "\x01" + end));
  REQUIRE(far);
  CHECK(far->rows[0].file == dwarf::LineTable::kNoFile - 1);
  CHECK(far->File(far->rows[0]) == nullptr);
}
