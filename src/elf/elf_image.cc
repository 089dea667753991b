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
#include <unordered_map>

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

Result<void> ElfImage::CheckHeader(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Fail("cannot open '" + path + "': " + std::strerror(errno));
  Elf64_Ehdr ehdr{};
  ssize_t n = pread(fd, &ehdr, sizeof ehdr, 0);
  close(fd);
  if (n != static_cast<ssize_t>(sizeof ehdr) || std::memcmp(ehdr.e_ident, ELFMAG, SELFMAG) != 0)
    return Fail("'" + path + "' is not an ELF file", "give -x an executable or a shared library");
  if (ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_machine != EM_X86_64)
    return Fail(
        "'" + path + "' is not an x86-64 binary (ELF machine " +
            std::to_string(ehdr.e_ident[EI_CLASS] == ELFCLASS64 ? ehdr.e_machine
                                                                : reinterpret_cast<const Elf32_Ehdr&>(ehdr).e_machine) +
            ")",
        "kprobectl supports x86-64");
  return {};
}

Result<ElfImage> ElfImage::Open(const std::string& path, const std::string& cache_dir) {
  elf_version(EV_CURRENT);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return Fail("cannot open '" + path + "': " + std::strerror(errno),
                errno == ENOENT ? "check the path of the binary given with -x" : "");
  // Mapped here, not by libelf, so the symbol table of a large image can be
  // read in place after libelf is done with it.
  struct stat st;
  void* map = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0
                  ? mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0)
                  : MAP_FAILED;
  close(fd);
  if (map == MAP_FAILED) return Fail("'" + path + "' is not an ELF file", "give -x an executable or a shared library");
  const auto map_size = static_cast<size_t>(st.st_size);
  std::shared_ptr<const void> mapping(map, [map_size](const void* p) { munmap(const_cast<void*>(p), map_size); });
  ElfHandle elf(elf_memory(static_cast<char*>(map), map_size));
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
    image.segments_.push_back({phdr.p_vaddr, phdr.p_memsz, phdr.p_offset, phdr.p_filesz, (phdr.p_flags & PF_X) != 0});
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

  // (name, address) -> entry; the names point into libelf's string tables.
  struct KeyHash {
    size_t operator()(const std::pair<std::string_view, uint64_t>& k) const {
      return std::hash<std::string_view>()(k.first) ^ (k.second * 0x9E3779B97F4A7C15ULL);
    }
  };
  std::unordered_map<std::pair<std::string_view, uint64_t>, uint32_t, KeyHash> index;
  // Only a file with both tables has symbols twice (a vmlinux has .symtab only).
  size_t tables = 0, total = 0;
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf.get(), scn));) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) && (shdr.sh_type == SHT_SYMTAB || shdr.sh_type == SHT_DYNSYM) && shdr.sh_entsize) {
      // Sizes come from the file: a table must lie inside it.
      if (shdr.sh_size > map_size || shdr.sh_offset > map_size - shdr.sh_size)
        return Fail("'" + path + "' is corrupt: its symbol table runs past the end of the file");
      ++tables;
      total += shdr.sh_size / shdr.sh_entsize;
    }
  }
  auto table = std::make_shared<Table>();
  auto inside = [&](const void* p, size_t n) {
    auto* b = static_cast<const char*>(map);
    auto* q = static_cast<const char*>(p);
    return q >= b && n <= map_size && q - b <= static_cast<ptrdiff_t>(map_size - n);
  };
  if (tables == 1 && gelf_getclass(elf.get()) == ELFCLASS64) {
    for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf.get(), scn));) {
      GElf_Shdr shdr;
      if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB) continue;
      Elf_Data* data = elf_getdata(scn, nullptr);
      Elf_Data* strings = elf_getdata(elf_getscn(elf.get(), shdr.sh_link), nullptr);
      if (data && strings && data->d_type == ELF_T_SYM && shdr.sh_entsize == sizeof(Elf64_Sym) && data->d_buf &&
          strings->d_buf && inside(data->d_buf, data->d_size) && inside(strings->d_buf, strings->d_size) &&
          reinterpret_cast<uintptr_t>(data->d_buf) % alignof(Elf64_Sym) == 0) {
        table->raw_symbols = static_cast<const unsigned char*>(data->d_buf);
        table->raw_count = data->d_size / sizeof(Elf64_Sym);
        table->raw_strings = static_cast<const char*>(strings->d_buf);
        table->raw_strings_size = strings->d_size;
        table->mapping = mapping;
      }
    }
    if (table->raw_symbols) {
      bool any = false;
      for (size_t i = 1; i < table->raw_count && !any; ++i) any = !table->At(i).skip;
      if (!any)
        return Fail("'" + path + "' has no symbols (it is stripped)",
                    "probe it by address (0xADDRESS), or install its debug symbols");
      table->UseSymbolIndex(cache_dir, image.build_id_, map_size,
                            static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec);
      image.table_ = std::move(table);
      return image;
    }
  }
  table->entries.reserve(total);
  if (tables > 1) index.reserve(total);
  std::map<unsigned, std::pair<uint32_t, uint32_t>> version_names;  // version index -> its name in table->names
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf.get(), scn));) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM)) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    Elf_Data* strings = elf_getdata(elf_getscn(elf.get(), shdr.sh_link), nullptr);
    if (!data || !strings || !strings->d_buf || shdr.sh_entsize == 0) continue;
    const char* strbase = static_cast<const char*>(strings->d_buf);
    const size_t strsize = strings->d_size;
    const auto base = static_cast<uint32_t>(table->names.size());
    table->names.append(strbase, strsize);
    size_t count = shdr.sh_size / shdr.sh_entsize;
    for (size_t i = 1; i < count; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF || sym.st_name >= strsize)
        continue;
      const char* raw = strbase + sym.st_name;
      size_t length = strnlen(raw, strsize - sym.st_name);
      if (length == 0) continue;
      Entry e = Table::Classify(sym.st_info, sym.st_value, sym.st_size);
      e.name = base + sym.st_name;
      if (!Table::SplitVersion(raw, length, e) && shdr.sh_type == SHT_DYNSYM && versym) {
        GElf_Versym version_index;
        if (gelf_getversym(versym, static_cast<int>(i), &version_index)) {
          unsigned v = version_index & 0x7fff;
          auto it = versions.find(v);
          if (it != versions.end() && v > 1) {
            auto [named, fresh] = version_names.try_emplace(v);
            if (fresh) {
              named->second = {static_cast<uint32_t>(table->names.size()), static_cast<uint32_t>(it->second.size())};
              table->names += it->second;
            }
            e.version = named->second.first;
            e.version_size = named->second.second;
            e.default_version = (version_index & 0x8000) == 0;
          }
        }
      }
      // .symtab and .dynsym repeat the exported symbols: keep one of each,
      // with the version .dynsym knows.
      if (tables > 1) {
        auto [it, fresh] = index.try_emplace({std::string_view(raw, e.name_size), e.value},
                                             static_cast<uint32_t>(table->entries.size()));
        if (!fresh) {
          Entry& old = table->entries[it->second];
          if (old.version_size == 0) {
            old.version = e.version;
            old.version_size = e.version_size;
            old.default_version = e.default_version;
          }
          continue;
        }
      }
      table->entries.push_back(e);
    }
  }
  if (table->entries.empty())
    return Fail("'" + path + "' has no symbols (it is stripped)",
                "probe it by address (0xADDRESS), or install its debug symbols");
  image.table_ = std::move(table);
  return image;
}

ElfImage ElfImage::FromModule(std::string path, std::string module, std::vector<ElfSymbol> symbols) {
  ElfImage image;
  image.path_ = std::move(path);
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

void ElfImage::Table::IndexAddresses() {
  std::vector<std::pair<uint64_t, uint32_t>> by_address[2];
  for (size_t i = 0; i < size(); ++i) {
    Entry e = At(i);
    if (e.skip || (e.type != ElfSymbol::kFunction && e.type != ElfSymbol::kObject)) continue;
    int t = e.type == ElfSymbol::kFunction ? 0 : 1;
    by_address[t].emplace_back(e.value, static_cast<uint32_t>(i));
    max_size[t] = std::max(max_size[t], e.size);
  }
  for (int t : {0, 1}) {
    std::sort(by_address[t].begin(), by_address[t].end());
    owned_values[t].clear();
    owned_order[t].clear();
    for (const auto& [value, i] : by_address[t]) {
      owned_values[t].push_back(value);
      owned_order[t].push_back(i);
    }
    values[t] = owned_values[t];
    order[t] = owned_order[t];
  }
}

template <typename F>
void ElfImage::Table::ForEachNamed(std::string_view name, F&& f) const {
  if (name_slots.empty()) {
    for (size_t i = 0; i < size(); ++i) {
      Entry e = At(i);
      if (!e.skip && !name.empty() && base()[e.name] == name[0] && Name(e) == name) f(static_cast<uint32_t>(i), e);
    }
    return;
  }
  const size_t mask = name_slots.size() - 1;
  for (size_t slot = Hash64(name.data(), name.size()) & mask; name_slots[slot]; slot = (slot + 1) & mask) {
    uint32_t i = name_slots[slot] - 1;
    Entry e = At(i);
    if (!e.skip && Name(e) == name) f(i, e);
  }
}

ElfImage::Entry ElfImage::Table::At(size_t i) const {
  if (!raw_symbols) return entries[i];
  Elf64_Sym sym;
  std::memcpy(&sym, raw_symbols + i * sizeof sym, sizeof sym);
  if (i == 0 || sym.st_shndx == SHN_UNDEF || sym.st_name == 0 || sym.st_name >= raw_strings_size) {
    Entry e{};
    e.skip = true;
    return e;
  }
  Entry e = Classify(sym.st_info, sym.st_value, sym.st_size);
  // The name's length (and a "@VERSION" in it) is found when it is read.
  e.name = sym.st_name;
  e.name_size = kUnmeasured;
  return e;
}

ElfImage::Entry ElfImage::Table::Classify(unsigned char info, uint64_t value, uint64_t size) {
  Entry e{};
  int type = ELF64_ST_TYPE(info);
  e.type = type == STT_FUNC || type == STT_GNU_IFUNC ? ElfSymbol::kFunction
           : type == STT_OBJECT || type == STT_TLS   ? ElfSymbol::kObject
                                                     : ElfSymbol::kOther;
  int bind = ELF64_ST_BIND(info);
  e.global = bind == STB_GLOBAL || bind == STB_WEAK || bind == STB_GNU_UNIQUE;
  e.value = value;
  e.size = size;
  return e;
}

bool ElfImage::Table::SplitVersion(const char* name, size_t length, Entry& e) {
  e.name_size = static_cast<uint32_t>(length);
  const void* at = std::memchr(name, '@', length);  // .symtab "name@@VER"
  if (!at) return false;
  auto split = static_cast<uint32_t>(static_cast<const char*>(at) - name);
  e.default_version = split + 1 < length && name[split + 1] == '@';
  uint32_t skip = e.default_version ? 2 : 1;
  e.version = e.name + split + skip;
  e.version_size = e.name_size - split - skip;
  e.name_size = split;
  return true;
}

void ElfImage::Table::Measure(Entry& e) const {
  if (e.name_size != kUnmeasured) return;
  const char* name = raw_strings + e.name;
  SplitVersion(name, strnlen(name, raw_strings_size - e.name), e);
}

ElfSymbol ElfImage::Table::Make(Entry e) const {
  Measure(e);
  ElfSymbol s;
  s.name = Name(e);
  s.version = std::string(base() + e.version, e.version_size);
  s.default_version = e.default_version;
  s.value = e.value;
  s.size = e.size;
  s.type = e.type;
  s.global = e.global;
  return s;
}

const ElfSymbol* ElfImage::Made(uint32_t entry) const {
  auto [it, fresh] = table_->made.try_emplace(entry);
  if (fresh) it->second = table_->Make(table_->At(entry));
  return &it->second;
}

const std::vector<ElfSymbol>& ElfImage::symbols() const {
  if (table_ && table_->all.empty()) {
    table_->all.reserve(table_->size());
    for (size_t i = 0; i < table_->size(); ++i)
      if (Entry e = table_->At(i); !e.skip) table_->all.push_back(table_->Make(e));
  }
  static const std::vector<ElfSymbol> kNone;
  return table_ ? table_->all : kNone;
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
  if (!table_ || (type != ElfSymbol::kFunction && type != ElfSymbol::kObject)) return nullptr;
  const Table& table = *table_;
  // A few look-ups cost less as scans than sorting 100,000 symbols would.
  constexpr unsigned kScans = 32;
  bool scan = table.values[0].empty() && table.values[1].empty() && table_->address_lookups < kScans;
  if (scan) ++table_->address_lookups;
  if (scan) {
    std::optional<uint32_t> best;
    uint64_t best_value = 0;
    bool best_global = false;
    for (uint32_t i = 0; i < table.size(); ++i) {
      Entry e = table.At(i);
      if (e.skip || e.type != type || vaddr < e.value || vaddr >= e.value + std::max<uint64_t>(e.size, 1)) continue;
      if (!best || e.value > best_value || (e.value == best_value && e.global && !best_global)) {
        best = i;
        best_value = e.value;
        best_global = e.global;
      }
    }
    return best ? Made(*best) : nullptr;
  }
  if (table.values[0].empty() && table.values[1].empty()) table_->IndexAddresses();
  int t = type == ElfSymbol::kFunction ? 0 : 1;
  const auto& values = table.values[t];
  // Back from the last symbol at or below `vaddr`, as far as the largest
  // symbol could reach: the first that contains it has the highest start.
  size_t at = static_cast<size_t>(std::upper_bound(values.begin(), values.end(), vaddr) - values.begin());
  std::optional<uint32_t> best;
  uint64_t best_value = 0;
  bool best_global = false;
  while (at > 0) {
    --at;
    uint64_t value = values[at];
    if (best && value < best_value) break;
    if (vaddr - value >= table.max_size[t]) break;
    Entry e = table.At(table.order[t][at]);
    if (vaddr >= e.value + std::max<uint64_t>(e.size, 1)) continue;
    // Walking back, an equal start comes in reverse table order: the
    // earliest wins, as in the scan, unless a global beats a local.
    if (!best || e.global || !best_global) {
      best = table.order[t][at];
      best_value = e.value;
      best_global = e.global;
    }
  }
  return best ? Made(*best) : nullptr;
}

const ElfSymbol* ElfImage::FunctionAt(uint64_t vaddr) const { return SymbolAt(vaddr, ElfSymbol::kFunction); }
const ElfSymbol* ElfImage::ObjectAt(uint64_t vaddr) const { return SymbolAt(vaddr, ElfSymbol::kObject); }

Result<std::vector<uint64_t>> ElfImage::ReadWords(uint64_t start, uint64_t end) const {
  if (end < start || (end - start) % 8 != 0) return Fail("bad table bounds in " + path_);
  uint64_t offset = KP_TRY(FileOffset(start));
  std::vector<uint64_t> words((end - start) / 8);
  if (words.empty()) return words;
  int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Fail("cannot open '" + path_ + "': " + std::strerror(errno));
  ssize_t n = pread(fd, words.data(), words.size() * 8, static_cast<off_t>(offset));
  close(fd);
  if (n != static_cast<ssize_t>(words.size() * 8)) return Fail("cannot read " + Hex(start) + " in '" + path_ + "'");
  return words;
}

size_t ElfImage::CountNamed(std::string_view name, ElfSymbol::Type type) const {
  size_t n = 0;
  if (table_) table_->ForEachNamed(name, [&](uint32_t, const Entry& e) { n += e.type == type; });
  return n;
}

std::vector<const ElfSymbol*> ElfImage::Find(const std::vector<std::string_view>& names) const {
  std::vector<const ElfSymbol*> out(names.size());
  if (!table_) return out;
  if (!table_->name_slots.empty()) {
    for (size_t n = 0; n < names.size(); ++n) {
      std::optional<uint32_t> first;
      table_->ForEachNamed(names[n], [&](uint32_t i, const Entry&) { first = std::min(first.value_or(i), i); });
      if (first) out[n] = Made(*first);
    }
    return out;
  }
  // Most symbols differ from every name in the first byte or the length:
  // test those first.
  uint64_t lengths = 0;
  bool first[256] = {};
  for (std::string_view n : names) {
    lengths |= n.size() < 64 ? uint64_t{1} << n.size() : 0;
    if (!n.empty()) first[static_cast<unsigned char>(n[0])] = true;
  }
  for (size_t i = 0; i < table_->size(); ++i) {
    Entry e = table_->At(i);
    if (e.skip || !first[static_cast<unsigned char>(table_->base()[e.name])]) continue;
    table_->Measure(e);
    if (e.name_size < 64 && !(lengths >> e.name_size & 1)) continue;
    std::string_view name = table_->Name(e);
    for (size_t n = 0; n < names.size(); ++n)
      if (!out[n] && names[n] == name) out[n] = Made(static_cast<uint32_t>(i));
  }
  return out;
}

std::vector<const ElfSymbol*> ElfImage::FunctionsStartingAt(std::vector<uint64_t> starts) const {
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  if (!table_) return {};
  if (!table_->values[0].empty()) {
    // By address: the functions at each start, the first global or else the first.
    std::vector<const ElfSymbol*> out;
    const auto& values = table_->values[0];
    for (uint64_t start : starts) {
      auto at = static_cast<size_t>(std::lower_bound(values.begin(), values.end(), start) - values.begin());
      std::optional<uint32_t> chosen;
      bool chosen_global = false;
      for (; at < values.size() && values[at] == start; ++at) {
        uint32_t i = table_->order[0][at];
        Entry e = table_->At(i);
        if (!chosen || (e.global && !chosen_global) || (e.global == chosen_global && i < *chosen)) {
          chosen = i;
          chosen_global = e.global;
        }
      }
      if (chosen) out.push_back(Made(*chosen));
    }
    return out;
  }
  std::vector<std::optional<uint32_t>> chosen(starts.size());
  std::vector<bool> chosen_global(starts.size());
  for (uint32_t i = 0; i < table_->size(); ++i) {
    Entry e = table_->At(i);
    if (e.skip || e.type != ElfSymbol::kFunction) continue;
    auto it = std::lower_bound(starts.begin(), starts.end(), e.value);
    if (it == starts.end() || *it != e.value) continue;
    auto at = static_cast<size_t>(it - starts.begin());
    if (!chosen[at] || (e.global && !chosen_global[at])) {
      chosen[at] = i;
      chosen_global[at] = e.global;
    }
  }
  std::vector<const ElfSymbol*> out;
  for (const auto& c : chosen)
    if (c) out.push_back(Made(*c));
  return out;
}

const ElfSymbol* ElfImage::Find(std::string_view name) const {
  return Find(std::vector<std::string_view>{name}).front();
}

}  // namespace kprobectl
