// SPDX-License-Identifier: GPL-2.0-or-later
#include "dwarf_windows.h"

#include <dwarf.h>
#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "byte_reader.h"

namespace kprobectl::dwarf {

namespace {

constexpr size_t kMaxWindows = 16;

// Whether [offset, offset + size) lies within `total` bytes, without
// overflow whatever the numbers a corrupt file gives.
bool Within(uint64_t offset, uint64_t size, uint64_t total) { return offset <= total && size <= total - offset; }

// Forms and tags by which a DIE reaches outside its own unit (and so
// outside a window): another unit's DIE, a supplementary or alternate
// file, a type unit, a form named in the DIE itself.
bool ReachesOut(uint64_t form) {
  switch (form) {
    case 0x10:    // DW_FORM_ref_addr
    case 0x16:    // DW_FORM_indirect
    case 0x1c:    // DW_FORM_ref_sup4
    case 0x1d:    // DW_FORM_strp_sup
    case 0x20:    // DW_FORM_ref_sig8
    case 0x24:    // DW_FORM_ref_sup8
    case 0x1f20:  // DW_FORM_GNU_ref_alt
    case 0x1f21:  // DW_FORM_GNU_strp_alt
      return true;
    default:
      return false;
  }
}

// Whether the abbreviation table `r` begins with keeps its unit's DIEs
// inside the unit.
bool SelfContained(ByteReader r) {
  return AbbrevFormsAllowed(
      r, true, [](uint64_t tag, uint64_t form) { return tag != 0x3d /* DW_TAG_imported_unit */ && !ReachesOut(form); });
}

}  // namespace

std::unique_ptr<UnitWindows> UnitWindows::Make(int fd, const unsigned char* file, size_t file_size, Elf* elf,
                                               std::vector<uint64_t> units) {
  const unsigned char* ident = ElfIdent(elf);
  if (!ident || ident[EI_CLASS] != ELFCLASS64 || ident[EI_DATA] != ELFDATA2LSB || IsRelocatable(elf)) return nullptr;
  auto info = FindRawSection(elf, ".debug_info");
  auto abbrev = FindRawSection(elf, ".debug_abbrev");
  auto shdr_at = SectionHeaderOffset(elf, ".debug_info");
  auto shdrs = SectionHeaderTable(elf);
  if (!info || !abbrev || !shdr_at || !shdrs || !Within(shdrs->offset, shdrs->size, file_size) ||
      !Within(info->offset, info->size, file_size) || !Within(abbrev->offset, abbrev->size, file_size) ||
      !Within(*shdr_at, sizeof(Elf64_Shdr), file_size))
    return nullptr;
  // The index's CU DIE offsets, which a corrupt cache could give out of
  // order or past the section: those are read through the whole file.
  std::erase_if(units, [&](uint64_t die) { return die >= info->size; });
  std::sort(units.begin(), units.end());
  std::unique_ptr<UnitWindows> out(new UnitWindows);
  out->fd_ = fd;
  out->file_ = file;
  out->file_size_ = file_size;
  out->shdr_at_ = *shdr_at;
  out->shdrs_ = *shdrs;
  out->info_ = *info;
  out->abbrev_ = *abbrev;
  out->cu_dies_ = std::move(units);
  if (auto aranges = FindRawSection(elf, ".debug_aranges");
      aranges && Within(aranges->offset, aranges->size, file_size))
    out->aranges_ = aranges;
  return out;
}

UnitWindows::~UnitWindows() {
  for (auto& [die, unit] : units_) {
    if (!unit.window.dwarf) continue;
    dwarf_end(unit.window.dwarf);
    CloseElf(unit.window.elf);
    munmap(unit.window.map, file_size_);
  }
}

std::optional<UnitWindows::Unit> UnitWindows::UnitOf(uint64_t die) const {
  // The header ends where the CU DIE begins: 12 bytes before it in DWARF 5
  // (its unit type and address size before the abbreviations' offset), 11
  // in 2-4, 12 more in the 64-bit format. Only the page around it is read
  // (walking every header from the first maps the whole section).
  const unsigned char* info = file_ + info_.offset;
  struct Shape {
    uint64_t size;
    bool dwarf64, v5;
  };
  if (die >= info_.size) return std::nullopt;
  for (Shape shape : {Shape{12, false, true}, Shape{11, false, false}, Shape{24, true, true}, Shape{23, true, false}}) {
    if (die < shape.size) continue;
    const uint64_t start = die - shape.size;
    ByteReader r{info + start, info + info_.size};
    uint64_t length = r.Fixed(4);
    if ((length == 0xffffffff) != shape.dwarf64) continue;
    if (shape.dwarf64) length = r.Fixed(8);
    const uint64_t version = r.Fixed(2);
    // DWARF 5's header is this size only for a full or partial CU (a
    // skeleton's or a type unit's is longer).
    const uint64_t type = shape.v5 ? r.Fixed(1) : uint64_t{DW_UT_compile};
    const uint64_t end = start + (shape.dwarf64 ? 12 : 4) + length;
    if (r.ok && (version == 5) == shape.v5 && version >= 2 && version <= 5 && end > die && end <= info_.size &&
        (type == DW_UT_compile || type == DW_UT_partial))
      return Unit{start, end, {}};
  }
  return std::nullopt;
}

UnitWindows::Window UnitWindows::Open(const Unit& unit) const {
  // The header: DWARF 5 has the unit type before the abbreviations'
  // offset, 2-4 the address size after it; only full and partial
  // compilation units stand alone.
  ByteReader r{file_ + info_.offset + unit.start, file_ + info_.offset + unit.end};
  unsigned offset_size = 4;
  if (r.Fixed(4) == 0xffffffff) {
    r.Fixed(8);
    offset_size = 8;
  }
  uint64_t version = r.Fixed(2);
  if (version >= 5) {
    uint64_t type = r.Fixed(1);
    r.Fixed(1);
    if (type != DW_UT_compile && type != DW_UT_partial) return {};
  }
  uint64_t abbrev_at = r.Fixed(offset_size);
  if (!r.ok || version < 2 || version > 5 || abbrev_at >= abbrev_.size) return {};
  if (!SelfContained({file_ + abbrev_.offset + abbrev_at, file_ + abbrev_.offset + abbrev_.size})) return {};

  Window w;
  // Read-only but for the section headers' pages (libelf writes there too,
  // decompressing a section): the rest is no commit charge however large
  // the file, even where overcommit is strict.
  w.map = mmap(nullptr, file_size_, PROT_READ, MAP_PRIVATE, fd_, 0);
  if (w.map == MAP_FAILED) return {};
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t from = shdrs_.offset / page * page, to = shdrs_.offset + shdrs_.size;
  if (mprotect(static_cast<unsigned char*>(w.map) + from, to - from, PROT_READ | PROT_WRITE) != 0) {
    munmap(w.map, file_size_);
    return {};
  }
  // Only this copy's page of the section headers changes (MAP_PRIVATE).
  Elf64_Shdr shdr;
  auto* at = static_cast<unsigned char*>(w.map) + shdr_at_;
  std::memcpy(&shdr, at, sizeof shdr);
  shdr.sh_offset = info_.offset + unit.start;
  shdr.sh_size = unit.end - unit.start;
  std::memcpy(at, &shdr, sizeof shdr);
  w.elf = OpenElf(w.map, file_size_);
  w.dwarf = w.elf ? dwarf_begin_elf(w.elf, DWARF_C_READ, nullptr) : nullptr;
  if (!w.dwarf) {
    CloseElf(w.elf);
    munmap(w.map, file_size_);
    return {};
  }
  return w;
}

bool UnitWindows::Die(Dwarf_Off offset, Dwarf_Die* out) {
  auto next = std::upper_bound(cu_dies_.begin(), cu_dies_.end(), offset);
  if (next == cu_dies_.begin()) return false;
  const uint64_t cu_die = *std::prev(next);
  auto found = units_.find(cu_die);
  // A command that reads many units (a header's lines, a function inlined
  // in hundreds of files) reads them in order through the whole file's
  // handle: a window each would cost more time and, each a mapping of the
  // file, far more memory.
  if (found == units_.end() && units_.size() == kMaxWindows) return false;
  if (found == units_.end()) {
    std::optional<Unit> unit = UnitOf(cu_die);
    if (!unit) return false;
    unit->window = Open(*unit);
    if (unit->window.dwarf) bases_[unit->window.dwarf] = unit->start;
    found = units_.emplace(cu_die, *unit).first;
  }
  const Unit& unit = found->second;
  return unit.window.dwarf && offset < unit.end && dwarf_offdie(unit.window.dwarf, offset - unit.start, out);
}

std::optional<uint64_t> UnitWindows::UnitDieAt(uint64_t address) const {
  if (!aranges_) return std::nullopt;
  ByteReader r{file_ + aranges_->offset, file_ + aranges_->offset + aranges_->size};
  while (r.ok && r.p < r.end) {
    // A set: its length, version 2, its unit's header offset, the address
    // and segment sizes, padding to twice the address size, then (address,
    // length) pairs up to a (0, 0).
    const unsigned char* set = r.p;
    uint64_t length = r.Fixed(4);
    unsigned offset_size = 4;
    if (length == 0xffffffff) {
      length = r.Fixed(8);
      offset_size = 8;
    }
    if (!r.Need(length)) return std::nullopt;
    ByteReader entry{r.p, r.p + length};
    r.p += length;
    entry.Fixed(2);
    const uint64_t unit = entry.Fixed(offset_size);
    const uint64_t address_size = entry.Fixed(1);
    if (entry.Fixed(1) != 0 || address_size != 8 || !entry.ok || unit >= info_.size) return std::nullopt;
    const auto header = static_cast<uint64_t>(entry.p - set);
    entry.Skip((16 - header % 16) % 16);
    for (;;) {
      const uint64_t start = entry.Fixed(8), size = entry.Fixed(8);
      if (!entry.ok || (start == 0 && size == 0)) break;
      if (address >= start && address - start < size) {
        // The CU DIE follows its unit's header, whose size its version says.
        ByteReader head{file_ + info_.offset + unit, file_ + info_.offset + info_.size};
        const bool dwarf64 = head.Fixed(4) == 0xffffffff;
        if (dwarf64) head.Fixed(8);
        // (DWARF 5: its type and address size, 2-4: its address size; and
        // the abbreviations' offset).
        const uint64_t version = head.Fixed(2);
        const uint64_t type = version >= 5 ? head.Fixed(1) : uint64_t{DW_UT_compile};
        if (!head.ok || version < 2 || version > 5 || (type != DW_UT_compile && type != DW_UT_partial))
          return std::nullopt;
        return unit + (dwarf64 ? 12 : 4) + 2 + (version >= 5 ? 2 : 1) + (dwarf64 ? 8 : 4);
      }
    }
  }
  return std::nullopt;
}

Dwarf_Off UnitWindows::Offset(Dwarf_Die* die) const {
  auto it = bases_.find(dwarf_cu_getdwarf(die->cu));
  return dwarf_dieoffset(die) + (it == bases_.end() ? 0 : it->second);
}

}  // namespace kprobectl::dwarf
