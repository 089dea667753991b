// SPDX-License-Identifier: GPL-2.0-or-later
//
// An ELF file's symbols and load segments, read once with libelf (which stays
// inside elf_image.cc). In: a path. Out: defined symbols from .symtab and
// .dynsym merged (with GNU symbol versions), the PT_LOAD map between virtual
// addresses and file offsets (what uprobe_events wants), the build-id, and
// what the file says of how its code is to be read: its architecture (from
// its ELF machine) and whether Go built it, each decided here, once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kprobectl/cache_file.h"
#include "kprobectl/result.h"

namespace kprobectl {

class Arch;

struct ElfSymbol {
  enum Type { kFunction, kObject, kOther };
  std::string name;              // without any @VERSION
  std::string version;           // GNU version name, empty if none
  bool default_version = false;  // name@@VERSION (the one a plain reference binds to)
  uint64_t value = 0;            // virtual address
  uint64_t size = 0;
  Type type = kOther;
  bool global = false;  // STB_GLOBAL or STB_WEAK
};

// A USDT (SystemTap SDT) marker, from a .note.stapsdt note: a nop the
// program runs at the marker, and its arguments as the assembler wrote
// them ("-4@%edi 8@-80(%rbx) -8@sym(%rip) -4@$12").
struct SdtNote {
  std::string provider;
  std::string name;
  uint64_t address = 0;    // the marker's nop (moved by .stapsdt.base as prelink moved it)
  uint64_t semaphore = 0;  // its semaphore's address, 0 without one
  std::string args;
};

// What an ELF file's header says of it.
struct ElfIdentity {
  uint16_t machine = 0;  // e_machine
  bool elf64 = false;    // ELFCLASS64
  uint16_t type = 0;     // e_type
};

struct LoadSegment {
  uint64_t vaddr = 0, memsz = 0, offset = 0, filesz = 0;
  bool executable = false;
};

// 64-bit words of an image: a view of its file's mapping, or of a copy
// (relocated), which `owner` keeps alive.
struct ImageWords {
  std::shared_ptr<const void> owner;
  std::span<const uint64_t> words;
};

class ElfImage {
 public:
  // Opens and reads `path`; the returned image holds no file descriptor.
  // With a cache directory, a large image's symbol index (names hashed,
  // symbols by address) is read from there, or built and written there.
  static Result<ElfImage> Open(const std::string& path, const std::string& cache_dir = "");
  // An ELF file's header (for its architecture, before anything else of it
  // is read), or an error when it is not an ELF file.
  static Result<ElfIdentity> ReadIdentity(const std::string& path);
  // A kernel module's image: its symbols at the addresses its sections were
  // given (see Debuginfo::OpenModule), under the module's name; its
  // build-id (hex) as read there.
  static ElfImage FromModule(std::string path, std::string module, const Arch& arch, std::vector<ElfSymbol> symbols,
                             std::string build_id);
  const std::string& module() const { return module_; }  // empty unless a module

  const std::string& path() const { return path_; }
  // The architecture of its ELF machine (and class), chosen when it is
  // read; null for a machine kprobectl does not support (OpenTarget refuses
  // such a file before it reads it: Target::arch says why).
  const Arch* arch() const { return arch_; }
  bool shared_object() const { return shared_object_; }      // ET_DYN (PIE or library)
  const std::string& build_id() const { return build_id_; }  // hex, empty if none
  // Whether Go built it (its .go.buildinfo names a Go version): its names
  // are Go's, and so is its calling convention. The one answer to "is this
  // a Go binary" (Target::go() asks it).
  bool go() const { return !go_version_.empty(); }
  // The Go version that built it ("go1.19.8"), empty when go() is false.
  const std::string& go_version() const { return go_version_; }
  // Whether that Go passes arguments in registers (its internal ABI) on
  // this architecture (Arch::GoRegisterAbiIn).
  bool go_register_abi() const { return go_register_abi_; }
  // The size of a Go function's argument area, its _func.args in Go's
  // .gopclntab (elf/go_pclntab.h), for the function that holds `pc`;
  // nothing when the binary has no table kprobectl reads.
  std::optional<uint32_t> GoArgumentAreaSize(uint64_t pc) const;
  // Every symbol, made on first use (a vmlinux has 100,000+ of them; the
  // look-ups below do not need them all).
  const std::vector<ElfSymbol>& symbols() const;
  const std::vector<LoadSegment>& segments() const { return segments_; }
  // The USDT markers of .note.stapsdt, in the file's order.
  const std::vector<SdtNote>& sdt_notes() const { return sdt_notes_; }

  // File offset of a virtual address inside a PT_LOAD segment's file bytes.
  Result<uint64_t> FileOffset(uint64_t vaddr) const;
  // As FileOffset, for an address that must be code (a probe's address).
  Result<uint64_t> CodeFileOffset(uint64_t vaddr) const;
  // Virtual address of a file offset, if a PT_LOAD segment maps it.
  std::optional<uint64_t> VirtualAddress(uint64_t file_offset) const;
  // The function symbol that contains `vaddr` (globals preferred on ties).
  const ElfSymbol* FunctionAt(uint64_t vaddr) const;
  // The data object symbol that contains `vaddr`.
  const ElfSymbol* ObjectAt(uint64_t vaddr) const;
  // The 64-bit words the file holds at [start, end) (virtual addresses in a
  // PT_LOAD segment): tables the kernel keeps between linker symbols, such as
  // __start_mcount_loc..__stop_mcount_loc. In a relocatable image (arm64's
  // vmlinux) such a word is 0 in the file and its value the addend of a
  // relative relocation in .rela.dyn, of type `relative_type` (the
  // architecture's R_*_RELATIVE; 0: none applied).
  // Where no relocation applies, the words are the file's mapping itself
  // (a vmlinux's 37,697 ftrace sites: a few page-cache faults, where a copy
  // was 75 fresh pages, a fault each).
  Result<ImageWords> ReadWords(uint64_t start, uint64_t end, uint32_t relative_type = 0) const;
  // The bytes the file holds at [start, start + size) (virtual addresses in
  // a PT_LOAD segment): a function's code.
  Result<std::string> ReadBytes(uint64_t start, uint64_t size) const;
  // How many symbols of this type carry `name` (several static ones may).
  size_t CountNamed(std::string_view name, ElfSymbol::Type type) const;
  const ElfSymbol* Find(std::string_view name) const;
  // Each name's first symbol (or null), in one pass over the symbols.
  std::vector<const ElfSymbol*> Find(const std::vector<std::string_view>& names) const;
  // The function symbols that start at one of `starts` (one per address,
  // globals preferred), in one pass.
  std::vector<const ElfSymbol*> FunctionsStartingAt(std::vector<uint64_t> starts) const;

 private:
  // The symbols, compact: one entry each, the names in one buffer; an
  // ElfSymbol is made for an entry when a look-up returns it, and stays.
  struct Entry {
    uint64_t value = 0, size = 0;
    uint32_t name = 0, name_size = 0, version = 0, version_size = 0;  // offsets from Table::base()
    ElfSymbol::Type type = ElfSymbol::kOther;
    bool global = false, default_version = false;
    bool skip = false;  // undefined or nameless: no look-up sees it
  };
  // A file with one symbol table (a vmlinux) is read in place: the entries
  // are decoded from its mapped .symtab when looked at. A file with two
  // (.symtab and .dynsym repeat the exported symbols) gets merged entries.
  struct Table {
    std::vector<Entry> entries;
    std::string names;
    std::shared_ptr<const void> mapping;  // holds what the raw pointers point into
    const unsigned char* raw_symbols = nullptr;
    size_t raw_count = 0;
    const char* raw_strings = nullptr;
    size_t raw_strings_size = 0;
    // Functions [0] and objects [1] by address: the values and the entries,
    // sorted. Made after a few look-ups by address, or read from the
    // symbol index in the cache.
    std::span<const uint64_t> values[2];
    std::span<const uint32_t> order[2];
    uint64_t max_size[2] = {1, 1};
    unsigned address_lookups = 0;
    // Names hashed (open addressing; NameSlot: entry + 1 below the hash's
    // high half, 0 empty): from the cache only.
    std::span<const uint64_t> name_slots;
    std::vector<uint64_t> owned_values[2];
    std::vector<uint32_t> owned_order[2];
    std::shared_ptr<const void> index_mapping;  // holds the spans read from the cache
    // The cache file's bytes, checked block by block as the spans are read
    // (index_base null: the spans are this run's own).
    CheckedBytes index_bytes;
    const unsigned char* index_base = nullptr;
    std::string index_path;  // removed when a block fails: the next run writes it anew
    // Whether `count` elements of a span at `p` passed their check and, for
    // entries, are in range: a look-up that meets one that did not scans.
    template <typename T>
    bool Checked(const T* p, size_t count = 1) const {
      if (!index_base || index_bytes.Read(static_cast<uint64_t>(reinterpret_cast<const unsigned char*>(p) - index_base),
                                          count * sizeof(T)))
        return true;
      IndexFailed();
      return false;
    }
    void IndexFailed() const;
    bool CheckedEntry(const uint32_t* p) const {
      if (!Checked(p)) return false;
      if (*p < raw_count) return true;
      IndexFailed();
      return false;
    }
    std::unordered_map<uint32_t, ElfSymbol> made;  // node-based: pointers stay valid
    std::vector<ElfSymbol> all;
    size_t size() const { return raw_symbols ? raw_count : entries.size(); }
    Entry At(size_t i) const;
    const char* base() const { return raw_symbols ? raw_strings : names.data(); }
    static constexpr uint32_t kUnmeasured = UINT32_MAX;
    void Measure(Entry& e) const;                                              // a raw entry's name length and version
    static Entry Classify(unsigned char info, uint64_t value, uint64_t size);  // type, binding
    // The name's length, cut at "@VER" / "@@VER" (true) with the version noted.
    static bool SplitVersion(const char* name, size_t length, Entry& e);
    std::string_view Name(Entry& e) const {
      Measure(e);
      return {base() + e.name, e.name_size};
    }
    ElfSymbol Make(Entry e) const;
    void IndexAddresses();
    // The symbol index in the cache: read if valid, else built and written.
    void UseSymbolIndex(const std::string& cache_dir, const std::string& build_id, uint64_t size, int64_t mtime_ns);
    template <typename F>
    void ForEachNamed(std::string_view name, F&& f) const;  // f(entry index, Entry&) for each symbol called `name`
    // The symbols called `name` through name_slots; false when a slot
    // failed its check (the caller scans).
    bool Named(std::string_view name, std::vector<std::pair<uint32_t, Entry>>& out) const;
    static uint64_t NameSlot(uint64_t hash, uint32_t entry) { return (hash >> 32 << 32) | (uint64_t{entry} + 1); }
    // The first position in values[t] at or above `value` (after it, with
    // `upper`); nullopt when a value read failed its check.
    std::optional<size_t> Bound(int t, uint64_t value, bool upper) const;
  };
  friend struct ElfReader;  // elf_image.cc: what Open() reads with libelf
  // The symbol of `type` that contains `vaddr`, globals preferred on ties.
  const ElfSymbol* SymbolAt(uint64_t vaddr, ElfSymbol::Type type) const;
  const ElfSymbol* Made(uint32_t entry) const;
  // FunctionsStartingAt through the address index; nullopt without one, or
  // when a block of its cache file failed its check.
  std::optional<std::vector<const ElfSymbol*>> FunctionsByAddress(const std::vector<uint64_t>& starts) const;

  std::string path_;
  const Arch* arch_ = nullptr;
  std::string module_;
  bool shared_object_ = false;
  std::string build_id_;
  std::string go_version_;
  bool go_register_abi_ = false;
  uint64_t go_pclntab_offset_ = 0, go_pclntab_size_ = 0, text_address_ = 0;  // a Go binary's .gopclntab, .text
  std::vector<LoadSegment> segments_;
  std::vector<SdtNote> sdt_notes_;
  uint64_t rela_dyn_offset_ = 0, rela_dyn_size_ = 0;  // the file's .rela.dyn (SHT_RELA), if it has one
  // Shared by copies of the image; the const look-ups add to `made`.
  std::shared_ptr<Table> table_;
  std::shared_ptr<const void> file_mapping_;  // the whole file, read-only
  size_t file_size_ = 0;
};

}  // namespace kprobectl
