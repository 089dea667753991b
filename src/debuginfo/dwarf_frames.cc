// SPDX-License-Identifier: GPL-2.0-or-later
//
// Call frame information without a linear search. libdw 0.188 finds the FDE
// for an address in .debug_frame (which, unlike .eh_frame, has no sorted
// table) by reading every entry before it, a few milliseconds in a kernel
// image. The index records each FDE's range and offset; for an address, the
// one FDE (and its CIE) is copied into a small ELF image of its own, with
// the FDE's CIE pointer set to 0, and libdw reads that: the same code that
// interprets the full section interprets these two entries.
#include <elf.h>

#include <algorithm>
#include <cstring>

#include "dwarf_internal.h"

namespace kprobectl::dwarf {

std::vector<FrameEntry> ReadFrameTable(Elf* elf) {
  std::vector<FrameEntry> out;
  Elf_Data* data = SectionData(elf, ".debug_frame");
  const unsigned char* ident = ElfIdent(elf);
  if (!data || !ident || ident[EI_CLASS] != ELFCLASS64) return out;
  Dwarf_Off offset = 0, next = 0;
  Dwarf_CFI_Entry entry;
  while (dwarf_next_cfi(ident, data, false, offset, &next, &entry) == 0) {
    // An FDE's initial location and range follow its CIE pointer: in
    // .debug_frame, two target addresses (8 bytes each here).
    if (!dwarf_cfi_cie_p(&entry) && entry.fde.end - entry.fde.start >= 16) {
      uint64_t start, range;
      std::memcpy(&start, entry.fde.start, 8);
      std::memcpy(&range, entry.fde.start + 8, 8);
      if (range) out.push_back({start, start + range, offset});
    }
    offset = next;
  }
  std::sort(out.begin(), out.end(), [](const FrameEntry& a, const FrameEntry& b) { return a.start < b.start; });
  return out;
}

MiniCfi::~MiniCfi() {
  if (dwarf) dwarf_end(dwarf);
  CloseElf(elf);
}

std::unique_ptr<MiniCfi> MakeMiniCfi(Elf* elf, uint64_t fde_offset) {
  Elf_Data* data = SectionData(elf, ".debug_frame");
  const unsigned char* ident = ElfIdent(elf);
  if (!data || !ident || fde_offset >= data->d_size) return nullptr;
  Dwarf_Off fde_end = 0, cie_end = 0;
  Dwarf_CFI_Entry fde, cie;
  if (dwarf_next_cfi(ident, data, false, fde_offset, &fde_end, &fde) != 0 || dwarf_cfi_cie_p(&fde)) return nullptr;
  Dwarf_Off cie_offset = fde.fde.CIE_pointer;
  if (dwarf_next_cfi(ident, data, false, cie_offset, &cie_end, &cie) != 0 || !dwarf_cfi_cie_p(&cie)) return nullptr;
  const auto* bytes = static_cast<const unsigned char*>(data->d_buf);
  std::string frame(reinterpret_cast<const char*>(bytes + cie_offset), cie_end - cie_offset);
  std::string copy(reinterpret_cast<const char*>(bytes + fde_offset), fde_end - fde_offset);
  uint32_t length32;
  std::memcpy(&length32, copy.data(), 4);
  size_t pointer_at = length32 == 0xffffffff ? 12 : 4, pointer_size = length32 == 0xffffffff ? 8 : 4;
  if (copy.size() < pointer_at + pointer_size) return nullptr;
  std::memset(copy.data() + pointer_at, 0, pointer_size);  // the CIE is now at 0
  frame += copy;

  // ELF header, .debug_frame, .shstrtab, section headers.
  static constexpr char kNames[] = "\0.debug_frame\0.shstrtab";
  auto mini = std::make_unique<MiniCfi>();
  size_t frame_at = sizeof(Elf64_Ehdr), names_at = frame_at + frame.size();
  size_t headers_at = (names_at + sizeof kNames + 7) / 8 * 8;
  mini->image.assign((headers_at + 3 * sizeof(Elf64_Shdr) + 7) / 8, 0);
  auto* base = reinterpret_cast<unsigned char*>(mini->image.data());
  // libdw picks the CFI's register rules by the machine: the file's own.
  GElf_Ehdr source{};
  if (!gelf_getehdr(elf, &source)) return nullptr;
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ident, EI_NIDENT);
  eh.e_type = ET_EXEC;
  eh.e_machine = source.e_machine;
  eh.e_version = EV_CURRENT;
  eh.e_shoff = headers_at;
  eh.e_ehsize = sizeof(Elf64_Ehdr);
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = 3;
  eh.e_shstrndx = 2;
  std::memcpy(base, &eh, sizeof eh);
  std::memcpy(base + frame_at, frame.data(), frame.size());
  std::memcpy(base + names_at, kNames, sizeof kNames);
  Elf64_Shdr sections[3] = {};
  sections[1].sh_name = 1;
  sections[1].sh_type = SHT_PROGBITS;
  sections[1].sh_offset = frame_at;
  sections[1].sh_size = frame.size();
  sections[1].sh_addralign = 1;
  sections[2].sh_name = 14;
  sections[2].sh_type = SHT_STRTAB;
  sections[2].sh_offset = names_at;
  sections[2].sh_size = sizeof kNames;
  sections[2].sh_addralign = 1;
  std::memcpy(base + headers_at, sections, sizeof sections);
  mini->elf = OpenElf(base, mini->image.size() * 8);
  if (mini->elf) mini->dwarf = dwarf_begin_elf(mini->elf, DWARF_C_READ, nullptr);
  if (mini->dwarf) mini->cfi = dwarf_getcfi(mini->dwarf);
  if (!mini->cfi) return nullptr;
  return mini;
}

}  // namespace kprobectl::dwarf
