// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/elf_image.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>

#include "kprobectl/strings.h"

namespace kprobectl {

namespace {

struct ElfCloser {
  void operator()(Elf* elf) const { elf_end(elf); }
};
using ElfHandle = std::unique_ptr<Elf, ElfCloser>;

std::string ElfErrorText() { return elf_errmsg(-1) ? elf_errmsg(-1) : "unknown libelf error"; }

// Version index -> name, from SHT_GNU_verdef.
std::map<unsigned, std::string> ReadVersionDefinitions(Elf* elf, Elf_Scn* scn, const GElf_Shdr& shdr) {
  std::map<unsigned, std::string> names;
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (!data) return names;
  int offset = 0;
  for (size_t i = 0; i < shdr.sh_info; ++i) {
    GElf_Verdef def;
    if (!gelf_getverdef(data, offset, &def)) break;
    GElf_Verdaux aux;
    if (gelf_getverdaux(data, offset + static_cast<int>(def.vd_aux), &aux)) {
      const char* name = elf_strptr(elf, shdr.sh_link, aux.vda_name);
      if (name) names[def.vd_ndx] = name;
    }
    if (def.vd_next == 0) break;
    offset += static_cast<int>(def.vd_next);
  }
  return names;
}

std::string ReadBuildId(Elf* elf) {
  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0) return {};
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (!gelf_getphdr(elf, static_cast<int>(i), &phdr) || phdr.p_type != PT_NOTE) continue;
    Elf_Data* data = elf_getdata_rawchunk(elf, static_cast<int64_t>(phdr.p_offset), phdr.p_filesz, ELF_T_NHDR);
    if (!data) continue;
    size_t offset = 0, name_offset = 0, desc_offset = 0;
    GElf_Nhdr note;
    while ((offset = gelf_getnote(data, offset, &note, &name_offset, &desc_offset)) > 0) {
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
          std::memcmp(static_cast<char*>(data->d_buf) + name_offset, "GNU", 4) == 0) {
        std::string hex;
        auto* bytes = static_cast<unsigned char*>(data->d_buf) + desc_offset;
        for (size_t b = 0; b < note.n_descsz; ++b) {
          static constexpr char kDigits[] = "0123456789abcdef";
          hex += kDigits[bytes[b] >> 4];
          hex += kDigits[bytes[b] & 15];
        }
        return hex;
      }
    }
  }
  return {};
}

}  // namespace

Result<ElfImage> ElfImage::Open(const std::string& path) {
  elf_version(EV_CURRENT);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Fail("cannot open '" + path + "': " + std::strerror(errno),
                errno == ENOENT ? "check the path of the binary given with -x" : "");
  ElfHandle elf(elf_begin(fd, ELF_C_READ_MMAP, nullptr));
  auto close_fd = std::unique_ptr<int, void (*)(int*)>(&fd, [](int* f) { close(*f); });
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF)
    return Fail("'" + path + "' is not an ELF file", "give -x an executable or a shared library");
  GElf_Ehdr ehdr;
  if (!gelf_getehdr(elf.get(), &ehdr)) return Fail("cannot read the ELF header of '" + path + "': " + ElfErrorText());
  if (ehdr.e_machine != EM_X86_64)
    return Fail("'" + path + "' is not an x86-64 binary (ELF machine " + std::to_string(ehdr.e_machine) + ")",
                "kprobectl supports x86-64");
  if (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN)
    return Fail("'" + path + "' is neither an executable nor a shared library (ELF type " +
                std::to_string(ehdr.e_type) + ")");

  ElfImage image;
  image.path_ = path;
  image.shared_object_ = ehdr.e_type == ET_DYN;
  image.build_id_ = ReadBuildId(elf.get());

  size_t phnum = 0;
  elf_getphdrnum(elf.get(), &phnum);
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr phdr;
    if (!gelf_getphdr(elf.get(), static_cast<int>(i), &phdr) || phdr.p_type != PT_LOAD) continue;
    image.segments_.push_back(
        {phdr.p_vaddr, phdr.p_memsz, phdr.p_offset, phdr.p_filesz, (phdr.p_flags & PF_X) != 0});
  }

  // Version indexes for .dynsym entries, and their names.
  Elf_Data* versym = nullptr;
  std::map<unsigned, std::string> versions;
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf.get(), scn));) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) continue;
    if (shdr.sh_type == SHT_GNU_versym) versym = elf_getdata(scn, nullptr);
    if (shdr.sh_type == SHT_GNU_verdef) versions = ReadVersionDefinitions(elf.get(), scn, shdr);
  }

  std::map<std::pair<std::string, uint64_t>, size_t> index;  // (name, address) -> symbols_
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf.get(), scn));) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM)) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data || shdr.sh_entsize == 0) continue;
    size_t count = shdr.sh_size / shdr.sh_entsize;
    for (size_t i = 1; i < count; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF) continue;
      const char* raw = elf_strptr(elf.get(), shdr.sh_link, sym.st_name);
      if (!raw || !*raw) continue;
      ElfSymbol s;
      s.name = raw;
      if (size_t at = s.name.find('@'); at != std::string::npos) {  // .symtab "name@@VER"
        s.default_version = s.name.compare(at, 2, "@@") == 0;
        s.version = s.name.substr(at + (s.default_version ? 2 : 1));
        s.name.resize(at);
      } else if (shdr.sh_type == SHT_DYNSYM && versym) {
        GElf_Versym version_index;
        if (gelf_getversym(versym, static_cast<int>(i), &version_index)) {
          auto it = versions.find(version_index & 0x7fff);
          if (it != versions.end() && (version_index & 0x7fff) > 1) {
            s.version = it->second;
            s.default_version = (version_index & 0x8000) == 0;
          }
        }
      }
      int type = GELF_ST_TYPE(sym.st_info);
      s.type = type == STT_FUNC || type == STT_GNU_IFUNC ? ElfSymbol::kFunction
               : type == STT_OBJECT || type == STT_TLS  ? ElfSymbol::kObject
                                                        : ElfSymbol::kOther;
      int bind = GELF_ST_BIND(sym.st_info);
      s.global = bind == STB_GLOBAL || bind == STB_WEAK || bind == STB_GNU_UNIQUE;
      s.value = sym.st_value;
      s.size = sym.st_size;
      // .symtab and .dynsym repeat the exported symbols: keep one of each,
      // with the version .dynsym knows.
      auto [it, fresh] = index.try_emplace({s.name, s.value}, image.symbols_.size());
      if (!fresh) {
        ElfSymbol& old = image.symbols_[it->second];
        if (old.version.empty()) {
          old.version = s.version;
          old.default_version = s.default_version;
        }
        continue;
      }
      image.symbols_.push_back(std::move(s));
    }
  }
  if (image.symbols_.empty())
    return Fail("'" + path + "' has no symbols (it is stripped)",
                "probe it by address (0xADDRESS), or install its debug symbols");
  return image;
}

ElfImage ElfImage::FromModule(std::string path, std::string module, std::vector<ElfSymbol> symbols) {
  ElfImage image;
  image.path_ = std::move(path);
  image.module_ = std::move(module);
  image.symbols_ = std::move(symbols);
  return image;
}

Result<uint64_t> ElfImage::FileOffset(uint64_t vaddr) const {
  for (const LoadSegment& seg : segments_)
    if (vaddr >= seg.vaddr && vaddr < seg.vaddr + seg.filesz) return vaddr - seg.vaddr + seg.offset;
  return Fail("address " + Hex(vaddr) + " is not in any loadable segment of '" + path_ + "'",
              "addresses are virtual addresses as 'nm' or 'objdump -d' print them");
}

Result<uint64_t> ElfImage::CodeFileOffset(uint64_t vaddr) const {
  for (const LoadSegment& seg : segments_)
    if (seg.executable && vaddr >= seg.vaddr && vaddr < seg.vaddr + seg.filesz) return vaddr - seg.vaddr + seg.offset;
  return Fail("address " + Hex(vaddr) + " is not in the code of '" + path_ + "' (no executable segment holds it)",
              "addresses are virtual addresses as 'nm' or 'objdump -d' print them");
}

std::optional<uint64_t> ElfImage::VirtualAddress(uint64_t file_offset) const {
  for (const LoadSegment& seg : segments_)
    if (file_offset >= seg.offset && file_offset < seg.offset + seg.filesz) return file_offset - seg.offset + seg.vaddr;
  return std::nullopt;
}

const ElfSymbol* ElfImage::SymbolAt(uint64_t vaddr, ElfSymbol::Type type) const {
  const ElfSymbol* best = nullptr;
  for (const ElfSymbol& s : symbols_) {
    if (s.type != type || vaddr < s.value) continue;
    if (vaddr >= s.value + std::max<uint64_t>(s.size, 1)) continue;
    if (!best || s.value > best->value || (s.value == best->value && s.global && !best->global)) best = &s;
  }
  return best;
}

const ElfSymbol* ElfImage::FunctionAt(uint64_t vaddr) const { return SymbolAt(vaddr, ElfSymbol::kFunction); }
const ElfSymbol* ElfImage::ObjectAt(uint64_t vaddr) const { return SymbolAt(vaddr, ElfSymbol::kObject); }

Result<std::vector<uint64_t>> ElfImage::ReadWords(uint64_t start, uint64_t end) const {
  if (end < start || (end - start) % 8 != 0) return Fail("bad table bounds in " + path_);
  uint64_t offset = KP_TRY(FileOffset(start));
  std::vector<uint64_t> words((end - start) / 8);
  if (words.empty()) return words;
  int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Fail("cannot open '" + path_ + "': " + std::strerror(errno));
  ssize_t n = pread(fd, words.data(), words.size() * 8, static_cast<off_t>(offset));
  close(fd);
  if (n != static_cast<ssize_t>(words.size() * 8)) return Fail("cannot read " + Hex(start) + " in '" + path_ + "'");
  return words;
}

size_t ElfImage::CountNamed(std::string_view name, ElfSymbol::Type type) const {
  size_t n = 0;
  for (const ElfSymbol& s : symbols_) n += s.type == type && s.name == name;
  return n;
}

const ElfSymbol* ElfImage::Find(std::string_view name) const {
  for (const ElfSymbol& s : symbols_)
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace kprobectl
