// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/elf_image.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#include "go_buildinfo.h"
#include "kprobectl/arch.h"
#include "kprobectl/cache_file.h"
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
        return HexOf({static_cast<const char*>(data->d_buf) + desc_offset, note.n_descsz});
      }
    }
  }
  return {};
}

// The section called `name`, and its header.
Elf_Scn* SectionNamed(Elf* elf, std::string_view name, GElf_Shdr& shdr) {
  size_t strndx = 0;
  if (elf_getshdrstrndx(elf, &strndx) != 0) return nullptr;
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
    if (!gelf_getshdr(scn, &shdr)) continue;
    const char* n = elf_strptr(elf, strndx, shdr.sh_name);
    if (n && name == n) return scn;
  }
  return nullptr;
}

// SystemTap's note type (<sys/sdt.h> _SDT_NOTE_TYPE); elf.h has no name for it.
constexpr unsigned kNtStapsdt = 3;

// One NT_STAPSDT note's descriptor: the marker's address, the base the
// note was written against, the semaphore's address (each a word of the
// file's class), then provider, name and arguments, each ending in a NUL.
// A descriptor that does not hold all of them is skipped.
std::optional<SdtNote> ReadSdtDescriptor(const unsigned char* desc, size_t size, size_t word, uint64_t* base) {
  if (size < 3 * word) return std::nullopt;
  auto read_word = [&](size_t i) {
    uint64_t v = 0;
    std::memcpy(&v, desc + i * word, word);  // little-endian: x86-64 and arm64
    return v;
  };
  SdtNote note;
  note.address = read_word(0);
  *base = read_word(1);
  note.semaphore = read_word(2);
  std::string* fields[] = {&note.provider, &note.name, &note.args};
  size_t at = 3 * word;
  for (std::string* field : fields) {
    const void* end = at < size ? std::memchr(desc + at, '\0', size - at) : nullptr;
    if (!end) return std::nullopt;
    size_t length = static_cast<size_t>(static_cast<const unsigned char*>(end) - (desc + at));
    field->assign(reinterpret_cast<const char*>(desc + at), length);
    at += length + 1;
  }
  if (note.provider.empty() || note.name.empty()) return std::nullopt;
  return note;
}

// The USDT markers: the notes of .note.stapsdt. A prelinked file moved
// its sections after the notes were written; .stapsdt.base (a byte the
// notes' base field named) says by how much, and addresses move with it.
std::vector<SdtNote> ReadSdtNotes(Elf* elf) {
  std::vector<SdtNote> out;
  GElf_Shdr shdr;
  Elf_Scn* scn = SectionNamed(elf, ".note.stapsdt", shdr);
  if (!scn || shdr.sh_type != SHT_NOTE) return out;
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (!data || !data->d_buf) return out;
  GElf_Shdr base_shdr;
  std::optional<uint64_t> base_section;
  if (SectionNamed(elf, ".stapsdt.base", base_shdr)) base_section = base_shdr.sh_addr;
  size_t word = gelf_getclass(elf) == ELFCLASS32 ? 4 : 8;
  size_t offset = 0, name_offset = 0, desc_offset = 0;
  GElf_Nhdr nhdr;
  while ((offset = gelf_getnote(data, offset, &nhdr, &name_offset, &desc_offset)) > 0) {
    const auto* bytes = static_cast<const unsigned char*>(data->d_buf);
    if (nhdr.n_type != kNtStapsdt || nhdr.n_namesz != 8 || std::memcmp(bytes + name_offset, "stapsdt", 8) != 0)
      continue;
    uint64_t note_base = 0;
    auto note = ReadSdtDescriptor(bytes + desc_offset, nhdr.n_descsz, word, &note_base);
    if (!note) continue;
    if (base_section && note_base) {
      note->address += *base_section - note_base;
      if (note->semaphore) note->semaphore += *base_section - note_base;
    }
    out.push_back(std::move(*note));
  }
  return out;
}

}  // namespace

Result<ElfIdentity> ElfImage::ReadIdentity(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Fail("cannot open '" + path + "': " + std::strerror(errno));
  Elf64_Ehdr ehdr{};
  ssize_t n = pread(fd, &ehdr, sizeof ehdr, 0);
  close(fd);
  // e_type and e_machine are at the same offsets in ELF32 and ELF64.
  if (n < static_cast<ssize_t>(sizeof(Elf32_Ehdr)) || std::memcmp(ehdr.e_ident, ELFMAG, SELFMAG) != 0)
    return Fail("'" + path + "' is not an ELF file", "give -x an executable or a shared library");
  return ElfIdentity{ehdr.e_machine, ehdr.e_ident[EI_CLASS] == ELFCLASS64, ehdr.e_type};
}

namespace {

// The file, mapped by us (not libelf) so that a large image's symbol table
// can be read in place after libelf is done with it, and its ELF header
// checked.
struct MappedElf {
  std::shared_ptr<const void> mapping;
  size_t size = 0;
  int64_t mtime_ns = 0;
  ElfHandle elf;
  GElf_Ehdr ehdr{};
};

Result<MappedElf> MapElf(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return Fail("cannot open '" + path + "': " + std::strerror(errno),
                errno == ENOENT ? "check the path of the binary given with -x" : "");
  struct stat st;
  void* map = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0
                  ? mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0)
                  : MAP_FAILED;
  close(fd);
  if (map == MAP_FAILED) return Fail("'" + path + "' is not an ELF file", "give -x an executable or a shared library");
  MappedElf m;
  m.size = static_cast<size_t>(st.st_size);
  m.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  size_t size = m.size;
  m.mapping = std::shared_ptr<const void>(map, [size](const void* p) { munmap(const_cast<void*>(p), size); });
  m.elf.reset(elf_memory(static_cast<char*>(map), m.size));
  if (!m.elf || elf_kind(m.elf.get()) != ELF_K_ELF)
    return Fail("'" + path + "' is not an ELF file", "give -x an executable or a shared library");
  if (!gelf_getehdr(m.elf.get(), &m.ehdr))
    return Fail("cannot read the ELF header of '" + path + "': " + ElfErrorText());
  if (m.ehdr.e_type != ET_EXEC && m.ehdr.e_type != ET_DYN)
    return Fail("'" + path + "' is neither an executable nor a shared library (ELF type " +
                std::to_string(m.ehdr.e_type) + ")");
  return m;
}

// Version indexes for .dynsym entries, and their names.
struct Versions {
  Elf_Data* versym = nullptr;
  std::map<unsigned, std::string> names;
};

Versions ReadVersions(Elf* elf) {
  Versions v;
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) continue;
    if (shdr.sh_type == SHT_GNU_versym) v.versym = elf_getdata(scn, nullptr);
    if (shdr.sh_type == SHT_GNU_verdef) v.names = ReadVersionDefinitions(elf, scn, shdr);
  }
  return v;
}

// How many symbol tables, and how many entries in all; every table must
// lie inside the file (its sizes come from the file).
Result<std::pair<size_t, size_t>> CountSymbols(const MappedElf& m, const std::string& path) {
  size_t tables = 0, total = 0;
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(m.elf.get(), scn));) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) && (shdr.sh_type == SHT_SYMTAB || shdr.sh_type == SHT_DYNSYM) && shdr.sh_entsize) {
      if (shdr.sh_size > m.size || shdr.sh_offset > m.size - shdr.sh_size)
        return Fail("'" + path + "' is corrupt: its symbol table runs past the end of the file");
      ++tables;
      total += shdr.sh_size / shdr.sh_entsize;
    }
  }
  return std::make_pair(tables, total);
}

Result<void> Stripped(const std::string& path) {
  return Fail("'" + path + "' has no symbols (it is stripped)",
              "probe it by address (0xADDRESS), or install its debug symbols");
}

}  // namespace

// What Open() reads with libelf, as a friend of ElfImage (the header names
// no libelf type).
struct ElfReader {
  static void ReadSegments(Elf* elf, std::vector<LoadSegment>& segments_) {
    size_t phnum = 0;
    elf_getphdrnum(elf, &phnum);
    for (size_t i = 0; i < phnum; ++i) {
      GElf_Phdr phdr;
      if (!gelf_getphdr(elf, static_cast<int>(i), &phdr) || phdr.p_type != PT_LOAD) continue;
      segments_.push_back({phdr.p_vaddr, phdr.p_memsz, phdr.p_offset, phdr.p_filesz, (phdr.p_flags & PF_X) != 0});
    }
  }

  // One 64-bit .symtab (a vmlinux): read in place from the mapping.
  static bool UseInPlace(ElfImage::Table& t, Elf* elf, const std::shared_ptr<const void>& map, size_t map_size) {
    auto inside = [&](const void* p, size_t n) {
      auto* b = static_cast<const char*>(map.get());
      auto* q = static_cast<const char*>(p);
      return q >= b && n <= map_size && q - b <= static_cast<ptrdiff_t>(map_size - n);
    };
    for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
      GElf_Shdr shdr;
      if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB) continue;
      Elf_Data* data = elf_getdata(scn, nullptr);
      Elf_Data* strings = elf_getdata(elf_getscn(elf, shdr.sh_link), nullptr);
      if (data && strings && data->d_type == ELF_T_SYM && shdr.sh_entsize == sizeof(Elf64_Sym) && data->d_buf &&
          strings->d_buf && inside(data->d_buf, data->d_size) && inside(strings->d_buf, strings->d_size) &&
          reinterpret_cast<uintptr_t>(data->d_buf) % alignof(Elf64_Sym) == 0) {
        t.raw_symbols = static_cast<const unsigned char*>(data->d_buf);
        t.raw_count = data->d_size / sizeof(Elf64_Sym);
        t.raw_strings = static_cast<const char*>(strings->d_buf);
        t.raw_strings_size = strings->d_size;
        t.mapping = map;
      }
    }
    return t.raw_symbols != nullptr;
  }

  // The version a .dynsym entry's index names, its name kept once in `names`.
  static void ApplyVersion(ElfImage::Table& t, GElf_Versym version_index,
                           const std::map<unsigned, std::string>& versions,
                           std::map<unsigned, std::pair<uint32_t, uint32_t>>& version_names, ElfImage::Entry& e) {
    unsigned v = version_index & 0x7fff;
    auto it = versions.find(v);
    if (it == versions.end() || v <= 1) return;
    auto [named, fresh] = version_names.try_emplace(v);
    if (fresh) {
      named->second = {static_cast<uint32_t>(t.names.size()), static_cast<uint32_t>(it->second.size())};
      t.names += it->second;
    }
    e.version = named->second.first;
    e.version_size = named->second.second;
    e.default_version = (version_index & 0x8000) == 0;
  }

  // Every symbol of every table, copied; with both .symtab and .dynsym, each
  // exported symbol once, with the version .dynsym knows.
  static void Copy(ElfImage::Table& t, Elf* elf, Elf_Data* versym, const std::map<unsigned, std::string>& versions,
                   size_t tables, size_t total) {
    struct KeyHash {
      size_t operator()(const std::pair<std::string_view, uint64_t>& k) const {
        return std::hash<std::string_view>()(k.first) ^ (k.second * 0x9E3779B97F4A7C15ULL);
      }
    };
    // (name, address) -> entry; the names point into libelf's string tables.
    std::unordered_map<std::pair<std::string_view, uint64_t>, uint32_t, KeyHash> index;
    t.entries.reserve(total);
    if (tables > 1) index.reserve(total);
    std::map<unsigned, std::pair<uint32_t, uint32_t>> version_names;  // version index -> its name in names
    for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
      GElf_Shdr shdr;
      if (!gelf_getshdr(scn, &shdr) || (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM)) continue;
      Elf_Data* data = elf_getdata(scn, nullptr);
      Elf_Data* strings = elf_getdata(elf_getscn(elf, shdr.sh_link), nullptr);
      if (!data || !strings || !strings->d_buf || shdr.sh_entsize == 0) continue;
      const char* strbase = static_cast<const char*>(strings->d_buf);
      const size_t strsize = strings->d_size;
      const auto base = static_cast<uint32_t>(t.names.size());
      t.names.append(strbase, strsize);
      size_t count = shdr.sh_size / shdr.sh_entsize;
      for (size_t i = 1; i < count; ++i) {
        GElf_Sym sym;
        if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF || sym.st_name >= strsize)
          continue;
        const char* raw = strbase + sym.st_name;
        size_t length = strnlen(raw, strsize - sym.st_name);
        if (length == 0) continue;
        ElfImage::Entry e = ElfImage::Table::Classify(sym.st_info, sym.st_value, sym.st_size);
        e.name = base + sym.st_name;
        GElf_Versym version_index;
        if (!ElfImage::Table::SplitVersion(raw, length, e) && shdr.sh_type == SHT_DYNSYM && versym &&
            gelf_getversym(versym, static_cast<int>(i), &version_index))
          ApplyVersion(t, version_index, versions, version_names, e);
        if (tables > 1) {
          auto [it, fresh] =
              index.try_emplace({std::string_view(raw, e.name_size), e.value}, static_cast<uint32_t>(t.entries.size()));
          if (!fresh) {
            ElfImage::Entry& old = t.entries[it->second];
            if (old.version_size == 0) {
              old.version = e.version;
              old.version_size = e.version_size;
              old.default_version = e.default_version;
            }
            continue;
          }
        }
        t.entries.push_back(e);
      }
    }
  }
};

// The Go version of a Go binary (go_buildinfo.cc reads the section), "" for
// any other.
std::string ReadGoVersion(const MappedElf& m, const ElfImage& image) {
  GElf_Shdr shdr;
  if (!SectionNamed(m.elf.get(), ".go.buildinfo", shdr) || shdr.sh_type == SHT_NOBITS ||
      shdr.sh_offset + shdr.sh_size > m.size)
    return "";
  const char* base = static_cast<const char*>(m.mapping.get());
  auto read = [&](uint64_t address, uint64_t size) -> std::string {
    auto offset = image.FileOffset(address);
    if (!offset || *offset + size > m.size) return "";
    return std::string(base + *offset, size);
  };
  return GoVersionFromBuildInfo(std::string_view(base + shdr.sh_offset, shdr.sh_size), read);
}

Result<ElfImage> ElfImage::Open(const std::string& path, const std::string& cache_dir) {
  elf_version(EV_CURRENT);
  MappedElf m = KP_TRY(MapElf(path));
  ElfImage image;
  image.path_ = path;
  image.arch_ = ArchOfElf(m.ehdr.e_machine, gelf_getclass(m.elf.get()) == ELFCLASS64, path).value_or(nullptr);
  image.shared_object_ = m.ehdr.e_type == ET_DYN;
  image.build_id_ = ReadBuildId(m.elf.get());
  image.file_mapping_ = m.mapping;
  image.file_size_ = m.size;
  ElfReader::ReadSegments(m.elf.get(), image.segments_);
  if (GElf_Shdr rela; SectionNamed(m.elf.get(), ".rela.dyn", rela) && rela.sh_type == SHT_RELA &&
                      rela.sh_entsize == sizeof(Elf64_Rela) && gelf_getclass(m.elf.get()) == ELFCLASS64) {
    image.rela_dyn_offset_ = rela.sh_offset;
    image.rela_dyn_size_ = rela.sh_size;
  }
  image.sdt_notes_ = ReadSdtNotes(m.elf.get());
  image.go_version_ = ReadGoVersion(m, image);
  image.go_register_abi_ = image.arch_ && image.arch_->GoRegisterAbiIn(GoMinorVersion(image.go_version_));
  if (GElf_Shdr pcln, text; !image.go_version_.empty() && SectionNamed(m.elf.get(), ".gopclntab", pcln) &&
                            pcln.sh_type != SHT_NOBITS && SectionNamed(m.elf.get(), ".text", text)) {
    image.go_pclntab_offset_ = pcln.sh_offset;
    image.go_pclntab_size_ = pcln.sh_size;
    image.text_address_ = text.sh_addr;
  }
  Versions versions = ReadVersions(m.elf.get());
  // Only a file with both tables has symbols twice (a vmlinux has .symtab only).
  auto [tables, total] = KP_TRY(CountSymbols(m, path));
  auto table = std::make_shared<Table>();
  if (tables == 1 && gelf_getclass(m.elf.get()) == ELFCLASS64 &&
      ElfReader::UseInPlace(*table, m.elf.get(), m.mapping, m.size)) {
    bool any = false;
    for (size_t i = 1; i < table->raw_count && !any; ++i) any = !table->At(i).skip;
    if (!any) return std::unexpected(Stripped(path).error());
    table->UseSymbolIndex(cache_dir, image.build_id_, m.size, m.mtime_ns);
    image.table_ = std::move(table);
    return image;
  }
  ElfReader::Copy(*table, m.elf.get(), versions.versym, versions.names, tables, total);
  if (table->entries.empty()) return std::unexpected(Stripped(path).error());
  image.table_ = std::move(table);
  return image;
}

ElfImage ElfImage::FromModule(std::string path, std::string module, const Arch& arch, std::vector<ElfSymbol> symbols,
                              std::string build_id) {
  ElfImage image;
  image.path_ = std::move(path);
  image.build_id_ = std::move(build_id);
  image.arch_ = &arch;
  image.module_ = std::move(module);
  auto table = std::make_shared<Table>();
  for (const ElfSymbol& s : symbols) {
    Entry e{};
    e.name = static_cast<uint32_t>(table->names.size());
    e.name_size = static_cast<uint32_t>(s.name.size());
    table->names += s.name;
    e.version = static_cast<uint32_t>(table->names.size());
    e.version_size = static_cast<uint32_t>(s.version.size());
    table->names += s.version;
    e.default_version = s.default_version;
    e.value = s.value;
    e.size = s.size;
    e.type = s.type;
    e.global = s.global;
    table->entries.push_back(e);
  }
  image.table_ = std::move(table);
  return image;
}

}  // namespace kprobectl
