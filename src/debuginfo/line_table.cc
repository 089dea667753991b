// SPDX-License-Identifier: GPL-2.0-or-later
//
// A CU's line table, decoded from its line program in .debug_line by our
// own reader: the rows libdw 0.188's dwarf_getsrclines gives, in its order,
// with the file names its dwarf_linesrc gives (LineProgramPaths). libdw
// decodes the same program with a malloc a row and a qsort of pointers;
// for the CU of mm/memory.c that was a third of a warm -V. Rows here are 16
// bytes in one vector, sorted in place. Whatever libdw would refuse, or
// this reader does not do (DW_LNE_define_file, VLIW operation indexes,
// values its row fields cannot hold), is an error: the caller asks libdw.
#include <algorithm>
#include <climits>

#include "byte_reader.h"
#include "dwarf_internal.h"

namespace kprobectl::dwarf {

namespace {

// The header's fields the program needs.
struct ProgramHeader {
  unsigned version = 0;
  unsigned min_inst_length = 0, default_is_stmt = 0, line_range = 0, opcode_base = 0;
  int line_base = 0;
  const unsigned char* opcode_lengths = nullptr;  // opcode_base - 1 of them
  const unsigned char* program = nullptr;
  const unsigned char* end = nullptr;
};

Result<ProgramHeader> ReadProgramHeader(std::span<const unsigned char> line, uint64_t offset, unsigned address_size) {
  const LineProgramUnit unit = KP_TRY(ReadLineProgramUnit(line, offset));
  if (unit.version >= 5 && (unit.address_size != address_size || unit.segment_selector_size != 0))
    return Fail("line program of another address size");
  ByteReader r{unit.fields, unit.program};
  ProgramHeader h;
  h.version = unit.version;
  h.program = unit.program;
  h.end = unit.end;
  h.min_inst_length = static_cast<unsigned>(r.Fixed(1));
  // Operation indexes (VLIW) are not read here.
  if (h.version >= 4 && r.Fixed(1) != 1) return Fail("line program with several operations an instruction");
  h.default_is_stmt = static_cast<unsigned>(r.Fixed(1));
  const auto line_base = static_cast<unsigned>(r.Fixed(1));  // a signed byte
  h.line_base = line_base < 0x80 ? static_cast<int>(line_base) : static_cast<int>(line_base) - 0x100;
  h.line_range = static_cast<unsigned>(r.Fixed(1));
  h.opcode_base = static_cast<unsigned>(r.Fixed(1));
  h.opcode_lengths = r.p;
  if (h.opcode_base == 0 || !r.Need(h.opcode_base - 1)) return Fail("truncated line program header");
  // is_stmt is a bit of libdw's row.
  if (!r.ok || h.default_is_stmt > 1) return Fail("line program header this reader does not take");
  return h;
}

// A ULEB128 of at most 10 bytes: libdw reads no more (and what follows as
// opcodes); a longer one fails the reader, and libdw reads the table.
uint64_t Uleb(ByteReader& r) {
  const unsigned char* start = r.p;
  const uint64_t value = r.Uleb();
  if (r.p - start > 10) r.ok = false;
  return value;
}

// The state machine's registers (DWARF 5, 6.2.2).
struct Registers {
  uint64_t address = 0;
  int64_t line = 1;
  uint64_t file = 1, column = 0, isa = 0, discriminator = 0;
  bool stmt = false;
};

class Program {
 public:
  Program(const ProgramHeader& h, unsigned address_size) : h_(h), address_size_(address_size) {}
  Result<std::vector<LineTable::Row>> Run();

 private:
  // A standard opcode takes the number of operands the header says.
  bool Operands(unsigned opcode, unsigned count) const {
    return opcode < h_.opcode_base && h_.opcode_lengths[opcode - 1] == count;
  }
  Result<void> Standard(ByteReader& r, unsigned opcode);
  Result<void> Extended(ByteReader& r);
  Result<void> Emit(bool end_sequence);
  // As libdw advances: the product in 32 bits.
  void Advance(uint32_t operations) { regs_.address += static_cast<uint32_t>(h_.min_inst_length * operations); }
  void Reset() {
    regs_ = Registers{};
    regs_.stmt = h_.default_is_stmt != 0;
  }

  const ProgramHeader& h_;
  unsigned address_size_;
  Registers regs_;
  std::vector<LineTable::Row> rows_;
};

Result<void> Program::Emit(bool end_sequence) {
  // What libdw's row cannot hold fails its read of the table.
  if (regs_.line < INT_MIN || regs_.line > INT_MAX || regs_.column > 0xffff || regs_.file >= LineTable::kNoFile ||
      regs_.isa > 0xff || regs_.discriminator > 0xffffff)
    return Fail("a line table row out of libdw's range");
  rows_.push_back({regs_.address, static_cast<int32_t>(regs_.line),
                   static_cast<uint32_t>(regs_.file) & LineTable::kNoFile, regs_.stmt, end_sequence});
  return {};
}

Result<void> Program::Standard(ByteReader& r, unsigned opcode) {
  switch (opcode) {
    case 1:  // DW_LNS_copy
      if (!Operands(opcode, 0)) return Fail("bad DW_LNS_copy");
      KP_TRY_VOID(Emit(false));
      regs_.discriminator = 0;
      return {};
    case 2:  // DW_LNS_advance_pc (libdw reads the operand into 32 bits)
      if (!Operands(opcode, 1)) return Fail("bad DW_LNS_advance_pc");
      Advance(static_cast<uint32_t>(Uleb(r)));
      return {};
    case 3: {  // DW_LNS_advance_line (into 32 bits, signed)
      if (!Operands(opcode, 1)) return Fail("bad DW_LNS_advance_line");
      uint64_t value = 0;
      unsigned shift = 0;
      unsigned char byte = 0x80;
      while ((byte & 0x80) && r.Need(1)) {
        if (shift == 70) return Fail("a SLEB128 longer than libdw reads");
        byte = *r.p++;
        if (shift < 64) value |= uint64_t{byte & 0x7fu} << shift;
        shift += 7;
      }
      if (shift < 64 && (byte & 0x40)) value |= ~uint64_t{0} << shift;
      regs_.line += static_cast<int32_t>(static_cast<uint32_t>(value));
      return {};
    }
    case 4:  // DW_LNS_set_file
      if (!Operands(opcode, 1)) return Fail("bad DW_LNS_set_file");
      regs_.file = static_cast<uint32_t>(Uleb(r));
      return {};
    case 5:  // DW_LNS_set_column
      if (!Operands(opcode, 1)) return Fail("bad DW_LNS_set_column");
      regs_.column = static_cast<uint32_t>(Uleb(r));
      return {};
    case 6:  // DW_LNS_negate_stmt
      if (!Operands(opcode, 0)) return Fail("bad DW_LNS_negate_stmt");
      regs_.stmt = !regs_.stmt;
      return {};
    case 7:   // DW_LNS_set_basic_block
    case 10:  // DW_LNS_set_prologue_end
    case 11:  // DW_LNS_set_epilogue_begin
      if (!Operands(opcode, 0)) return Fail("bad flag opcode");
      return {};
    case 8:  // DW_LNS_const_add_pc
      if (!Operands(opcode, 0) || h_.line_range == 0) return Fail("bad DW_LNS_const_add_pc");
      Advance((255 - h_.opcode_base) / h_.line_range);
      return {};
    case 9:  // DW_LNS_fixed_advance_pc
      if (!Operands(opcode, 1) || !r.Need(2)) return Fail("bad DW_LNS_fixed_advance_pc");
      regs_.address += r.Fixed(2);
      return {};
    case 12:  // DW_LNS_set_isa
      if (!Operands(opcode, 1)) return Fail("bad DW_LNS_set_isa");
      regs_.isa = Uleb(r);
      return {};
    default:  // one the header gives operands for, skipped
      for (unsigned n = h_.opcode_lengths[opcode - 1]; n > 0; --n) Uleb(r);
      return {};
  }
}

Result<void> Program::Extended(ByteReader& r) {
  // libdw reads the length as one byte.
  if (r.Left() < 2) return Fail("truncated extended opcode");
  const unsigned length = *r.p++;
  if (r.Left() < length) return Fail("truncated extended opcode");
  const unsigned opcode = *r.p++;
  switch (opcode) {
    case 1:  // DW_LNE_end_sequence
      KP_TRY_VOID(Emit(true));
      Reset();
      return {};
    case 2:  // DW_LNE_set_address
      if (r.Left() < address_size_ || (address_size_ != 4 && address_size_ != 8)) return Fail("bad DW_LNE_set_address");
      regs_.address = r.Fixed(address_size_);
      return {};
    case 4:  // DW_LNE_set_discriminator
      if (!Operands(4, 1)) return Fail("bad DW_LNE_set_discriminator");
      regs_.discriminator = Uleb(r);
      return {};
    default:  // DW_LNE_define_file (a file this reader's names lack), vendors' (libdw reads some as it likes)
      return Fail("extended opcode this reader does not take");
  }
}

Result<std::vector<LineTable::Row>> Program::Run() {
  ByteReader r{h_.program, h_.end};
  // A row takes an opcode at least: room for them all, reserved, not
  // touched, so the rows are written once (not copied as the vector
  // grows, each copy into fresh pages, each page a fault).
  rows_.reserve(static_cast<size_t>(h_.end - h_.program));
  Reset();
  while (r.Left() > 0) {
    const unsigned opcode = *r.p++;
    if (opcode >= h_.opcode_base) {
      if (h_.line_range == 0) return Fail("line range 0");
      const unsigned special = opcode - h_.opcode_base;
      regs_.line += h_.line_base + static_cast<int>(special % h_.line_range);
      Advance(special / h_.line_range);
      KP_TRY_VOID(Emit(false));
      regs_.discriminator = 0;
    } else if (opcode == 0) {
      KP_TRY_VOID(Extended(r));
    } else {
      KP_TRY_VOID(Standard(r, opcode));
    }
    if (!r.ok) return Fail("truncated line program");
  }
  return std::move(rows_);
}

}  // namespace

Result<LineTable> ReadLineTable(const LineSections& sections, uint64_t offset, const char* comp_dir,
                                unsigned address_size) {
  const ProgramHeader header = KP_TRY(ReadProgramHeader(sections.line, offset, address_size));
  LineTable out;
  out.own = true;
  out.files = KP_TRY(LineProgramPaths(sections, offset, comp_dir));
  out.rows = KP_TRY(Program(header, address_size).Run());
  // As libdw sorts them: by address, an end of sequence before the rows it
  // shares an address with, else in the program's order.
  // Most CUs' rows are in that order already: no sort (whose buffer is
  // as many fresh pages again).
  auto before = [](const LineTable::Row& a, const LineTable::Row& b) {
    return a.address != b.address ? a.address < b.address : a.end_sequence > b.end_sequence;
  };
  if (!std::is_sorted(out.rows.begin(), out.rows.end(), before))
    std::stable_sort(out.rows.begin(), out.rows.end(), before);
  // libdw marks the last row an end of sequence, whatever the program says.
  if (!out.rows.empty()) out.rows.back().end_sequence = true;
  return out;
}

const LineTable::Row* LineTable::At(uint64_t address) const {
  // The last row at or before the address, as dwarf_getsrc_die finds it,
  // unless that ends a sequence.
  auto after =
      std::upper_bound(rows.begin(), rows.end(), address, [](uint64_t a, const Row& row) { return a < row.address; });
  if (after == rows.begin()) return nullptr;
  const Row& row = *(after - 1);
  return row.end_sequence ? nullptr : &row;
}

const char* LineTable::File(const Row& row) const {
  return row.file < files.size() ? files[row.file].c_str() : nullptr;
}

}  // namespace kprobectl::dwarf
