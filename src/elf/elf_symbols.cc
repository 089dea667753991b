// SPDX-License-Identifier: GPL-2.0-or-later
//
// ElfImage's look-ups: symbols by name and by address, and the file's
// bytes at an address. The table they read was built by ElfImage::Open
// (elf_image.cc, the one file that uses libelf); here only <elf.h>'s
// layouts and constants are used.
#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "go_pclntab.h"
#include "kprobectl/cache_file.h"
#include "kprobectl/elf_image.h"
#include "kprobectl/strings.h"

namespace kprobectl {

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

bool ElfImage::Table::Named(std::string_view name, std::vector<std::pair<uint32_t, Entry>>& out) const {
  const size_t mask = name_slots.size() - 1;
  const uint64_t hash = Hash64(name.data(), name.size());
  for (size_t slot = hash & mask, probes = 0; probes < name_slots.size(); slot = (slot + 1) & mask, ++probes) {
    if (!Checked(&name_slots[slot])) return false;
    const uint64_t value = name_slots[slot];
    if (!value) return true;
    if ((value & 0xffffffff) > raw_count) {
      IndexFailed();
      return false;
    }
    // Another name's: its symbol not read (a page of .symtab and one of
    // .strtab, a fault each the first time).
    if (value >> 32 != hash >> 32 || (value & 0xffffffff) == 0) continue;
    uint32_t i = static_cast<uint32_t>(value & 0xffffffff) - 1;
    Entry e = At(i);
    if (!e.skip && Name(e) == name) out.emplace_back(i, e);
  }
  return false;  // no empty slot: not a table this code wrote
}

template <typename F>
void ElfImage::Table::ForEachNamed(std::string_view name, F&& f) const {
  std::vector<std::pair<uint32_t, Entry>> found;
  if (!name_slots.empty() && Named(name, found)) {
    for (auto& [i, e] : found) f(i, e);
    return;
  }
  for (size_t i = 0; i < size(); ++i) {
    Entry e = At(i);
    if (!e.skip && !name.empty() && base()[e.name] == name[0] && Name(e) == name) f(static_cast<uint32_t>(i), e);
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

std::optional<size_t> ElfImage::Table::Bound(int t, uint64_t value, bool upper) const {
  size_t lo = 0, hi = values[t].size();
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (!Checked(&values[t][mid])) return std::nullopt;
    if (values[t][mid] < value || (upper && values[t][mid] == value))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

const ElfSymbol* ElfImage::SymbolAt(uint64_t vaddr, ElfSymbol::Type type) const {
  if (!table_ || (type != ElfSymbol::kFunction && type != ElfSymbol::kObject)) return nullptr;
  const Table& table = *table_;
  auto scan = [&]() -> const ElfSymbol* {
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
  };
  // A few look-ups cost less as scans than sorting 100,000 symbols would.
  constexpr unsigned kScans = 32;
  if (table.values[0].empty() && table.values[1].empty() && table_->address_lookups < kScans) {
    ++table_->address_lookups;
    return scan();
  }
  if (table.values[0].empty() && table.values[1].empty()) table_->IndexAddresses();
  int t = type == ElfSymbol::kFunction ? 0 : 1;
  const auto& values = table.values[t];
  // Back from the last symbol at or below `vaddr`, as far as the largest
  // symbol could reach: the first that contains it has the highest start.
  // A cache file's block that fails its check: the scan answers.
  auto bound = table.Bound(t, vaddr, true);
  if (!bound) return scan();
  size_t at = *bound;
  std::optional<uint32_t> best;
  uint64_t best_value = 0;
  bool best_global = false;
  while (at > 0) {
    --at;
    if (!table.Checked(&values[at]) || !table.CheckedEntry(&table.order[t][at])) return scan();
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

Result<ImageWords> ElfImage::ReadWords(uint64_t start, uint64_t end, uint32_t relative_type) const {
  if (end < start || (end - start) % 8 != 0) return Fail("bad table bounds in " + path_);
  uint64_t offset = KP_TRY(FileOffset(start));
  const size_t count = (end - start) / 8;
  if (count == 0) return ImageWords{};
  if (offset > file_size_ || count > (file_size_ - offset) / 8)
    return Fail("cannot read " + Hex(start) + " in '" + path_ + "'");
  const auto* in_file = static_cast<const unsigned char*>(file_mapping_.get()) + offset;
  if (!(relative_type && rela_dyn_size_) && offset % alignof(uint64_t) == 0)
    return ImageWords{file_mapping_, {reinterpret_cast<const uint64_t*>(in_file), count}};
  auto words = std::make_shared<std::vector<uint64_t>>(count);
  std::memcpy(words->data(), in_file, count * 8);
  if (relative_type && rela_dyn_size_ && rela_dyn_offset_ <= file_size_ &&
      rela_dyn_size_ <= file_size_ - rela_dyn_offset_) {
    const auto* rela = static_cast<const unsigned char*>(file_mapping_.get()) + rela_dyn_offset_;
    for (size_t at = 0; at + sizeof(Elf64_Rela) <= rela_dyn_size_; at += sizeof(Elf64_Rela)) {
      Elf64_Rela r;
      std::memcpy(&r, rela + at, sizeof r);
      if (ELF64_R_TYPE(r.r_info) == relative_type && r.r_offset >= start && r.r_offset < end && r.r_offset % 8 == 0)
        (*words)[(r.r_offset - start) / 8] = static_cast<uint64_t>(r.r_addend);
    }
  }
  std::span<const uint64_t> view(*words);
  return ImageWords{std::move(words), view};
}

Result<std::string> ElfImage::ReadBytes(uint64_t start, uint64_t size) const {
  uint64_t offset = KP_TRY(FileOffset(start));
  std::string bytes(size, '\0');
  int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Fail("cannot open '" + path_ + "': " + std::strerror(errno));
  ssize_t n = pread(fd, bytes.data(), size, static_cast<off_t>(offset));
  close(fd);
  if (n != static_cast<ssize_t>(size)) return Fail("cannot read " + Hex(start) + " in '" + path_ + "'");
  return bytes;
}

std::optional<uint32_t> ElfImage::GoArgumentAreaSize(uint64_t pc) const {
  if (go_pclntab_size_ == 0) return std::nullopt;
  std::string table(go_pclntab_size_, '\0');
  int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  ssize_t n = pread(fd, table.data(), table.size(), static_cast<off_t>(go_pclntab_offset_));
  close(fd);
  if (n != static_cast<ssize_t>(table.size())) return std::nullopt;
  return kprobectl::GoArgumentAreaSize(table, text_address_, pc);
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

std::optional<std::vector<const ElfSymbol*>> ElfImage::FunctionsByAddress(const std::vector<uint64_t>& starts) const {
  const Table& table = *table_;
  const auto& values = table.values[0];
  if (values.empty()) return std::nullopt;
  std::vector<const ElfSymbol*> out;
  for (uint64_t start : starts) {
    auto at = table.Bound(0, start, false);
    if (!at) return std::nullopt;  // a cache file's block failed its check: the caller scans
    std::optional<uint32_t> chosen;
    bool chosen_global = false;
    for (size_t k = *at; k < values.size(); ++k) {
      if (!table.Checked(&values[k]) || !table.CheckedEntry(&table.order[0][k])) return std::nullopt;
      if (values[k] != start) break;
      uint32_t i = table.order[0][k];
      Entry e = table.At(i);
      if (!chosen || (e.global && !chosen_global) || (e.global == chosen_global && i < *chosen)) {
        chosen = i;
        chosen_global = e.global;
      }
    }
    if (chosen) out.push_back(Made(*chosen));
  }
  return out;
}

std::vector<const ElfSymbol*> ElfImage::FunctionsStartingAt(std::vector<uint64_t> starts) const {
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  if (!table_) return {};
  // By address when there is an index: the functions at each start, the
  // first global or else the first.
  if (auto by_address = FunctionsByAddress(starts)) return *by_address;
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
