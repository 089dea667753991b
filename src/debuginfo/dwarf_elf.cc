// SPDX-License-Identifier: GPL-2.0-or-later
//
// The debuginfo stage's libelf calls, in one place: libdw reads the DWARF
// through an Elf handle this file opens; the sections libdw does not read
// for us (.debug_frame for the FDE index, the raw sections a scan searches)
// are found here too. (src/elf/elf_image.cc reads the symbols, separately.)
#include <gelf.h>

#include "dwarf_internal.h"

namespace kprobectl::dwarf {

namespace {

Elf_Scn* SectionNamed(Elf* elf, std::string_view wanted, GElf_Shdr* shdr) {
  size_t strndx = 0;
  if (elf_getshdrstrndx(elf, &strndx) != 0) return nullptr;
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
    if (!gelf_getshdr(scn, shdr)) continue;
    const char* name = elf_strptr(elf, strndx, shdr->sh_name);
    if (name && wanted == name) return scn;
  }
  return nullptr;
}

}  // namespace

Elf* OpenElf(void* map, size_t size) {
  elf_version(EV_CURRENT);
  return elf_memory(static_cast<char*>(map), size);
}

void CloseElf(Elf* elf) {
  if (elf) elf_end(elf);
}

std::string ElfError() { return elf_errmsg(-1); }

std::optional<SectionInfo> FindSection(Elf* elf, std::string_view name) {
  GElf_Shdr shdr;
  if (!SectionNamed(elf, name, &shdr) || shdr.sh_type == SHT_NOBITS) return std::nullopt;
  return SectionInfo{{shdr.sh_offset, shdr.sh_size}, (shdr.sh_flags & SHF_COMPRESSED) != 0};
}

std::optional<RawSection> FindRawSection(Elf* elf, std::string_view name) {
  auto found = FindSection(elf, name);
  if (!found || found->compressed) return std::nullopt;
  return found->raw;
}

Elf_Data* SectionData(Elf* elf, std::string_view name) {
  GElf_Shdr shdr;
  Elf_Scn* scn = SectionNamed(elf, name, &shdr);
  if (!scn || shdr.sh_type == SHT_NOBITS || (shdr.sh_flags & SHF_COMPRESSED)) return nullptr;
  return elf_getdata(scn, nullptr);
}

std::optional<uint64_t> SectionHeaderOffset(Elf* elf, std::string_view name) {
  GElf_Ehdr ehdr;
  GElf_Shdr shdr;
  Elf_Scn* scn = SectionNamed(elf, name, &shdr);
  if (!scn || !gelf_getehdr(elf, &ehdr) || ehdr.e_ident[EI_CLASS] != ELFCLASS64 ||
      ehdr.e_shentsize != sizeof(Elf64_Shdr))
    return std::nullopt;
  return ehdr.e_shoff + uint64_t{elf_ndxscn(scn)} * ehdr.e_shentsize;
}

std::optional<RawSection> SectionHeaderTable(Elf* elf) {
  GElf_Ehdr ehdr;
  size_t count = 0;
  if (!gelf_getehdr(elf, &ehdr) || elf_getshdrnum(elf, &count) != 0) return std::nullopt;
  return RawSection{ehdr.e_shoff, uint64_t{count} * ehdr.e_shentsize};
}

const unsigned char* ElfIdent(Elf* elf) { return reinterpret_cast<const unsigned char*>(elf_getident(elf, nullptr)); }

bool IsRelocatable(Elf* elf) {
  GElf_Ehdr ehdr;
  return !gelf_getehdr(elf, &ehdr) || ehdr.e_type == ET_REL;
}

}  // namespace kprobectl::dwarf
