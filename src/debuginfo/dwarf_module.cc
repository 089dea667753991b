// SPDX-License-Identifier: GPL-2.0-or-later
//
// Opening a DWARF file, and choosing how names are looked up in it.
//
// The file is mapped here, read-only, and given to libelf as memory, so
// that this file knows the mapping is the file's: libdw reads every unit
// header before it can reach a CU (0.188 interns units in order), and the
// kernel maps up to 64 KiB of page cache around each page touched, so
// reaching the last CU of a vmlinux would leave ~110 MB of .debug_info
// resident. The headers are read once, here, and the pages behind them
// released as the walk goes (MADV_DONTNEED on a private read-only file
// mapping just drops our view of the page cache). That keeps a look-up's
// memory to the CUs it actually reads.
#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "dwarf_internal.h"
#include "dwarf_windows.h"
#include "kprobectl/arch.h"
#include "kprobectl/cache_file.h"
#include "kprobectl/cxx_names.h"
#include "kprobectl/glob.h"

namespace kprobectl {

Result<std::unique_ptr<Debuginfo>> Debuginfo::Open(const std::string& path, const IndexOptions& options) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Fail("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size == 0) {
    close(fd);
    return Fail("'" + path + "' is empty or unreadable", "give an ELF file built with -g");
  }
  auto size = static_cast<size_t>(st.st_size);
  // Writable and private: libelf decompresses SHF_COMPRESSED sections (gcc
  // -gz, distributions' debug packages) by rewriting their headers in place.
  // MAP_NORESERVE: a 500 MB vmlinux is not charged to the commit limit for
  // the few pages that are ever written.
  void* map = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_NORESERVE, fd, 0);
  if (map == MAP_FAILED) {
    close(fd);
    return Fail("cannot map '" + path + "': " + std::strerror(errno));
  }
  Elf* elf = dwarf::OpenElf(map, size);
  Dwarf* dbg = elf ? dwarf_begin_elf(elf, DWARF_C_READ, nullptr) : nullptr;
  if (!dbg) {
    std::string why = elf ? dwarf::LastError() : dwarf::ElfError();
    dwarf::CloseElf(elf);
    munmap(map, size);
    close(fd);
    return Fail("'" + path + "' has no DWARF debuginfo (" + why + ")",
                "build it with -g, or install its debug package (the -dbgsym or -dbg package on Debian)");
  }
  auto info = std::make_unique<dwarf::DwarfInfo>(path, fd, map, size, elf, dbg, options);
  return std::unique_ptr<Debuginfo>(std::move(info));
}

namespace {

char* no_debuginfo_path = nullptr;  // libdwfl's default search path; never written
const Dwfl_Callbacks kOfflineCallbacks = {dwfl_build_id_find_elf, dwfl_standard_find_debuginfo,
                                          dwfl_offline_section_address, &no_debuginfo_path};

}  // namespace

namespace {

// libdwfl 0.188 reads .ko.xz and .ko.gz itself, not .ko.zst (elfutils 0.189
// added it): those are decompressed here, into memory libdwfl then owns.
Result<std::pair<char*, size_t>> ReadZstd(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Fail("cannot open '" + path + "': " + std::strerror(errno));
  std::string compressed;
  char buf[1 << 16];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) compressed.append(buf, static_cast<size_t>(n));
  close(fd);
  ZSTD_DStream* stream = ZSTD_createDStream();
  ZSTD_initDStream(stream);
  std::string out;
  ZSTD_inBuffer in{compressed.data(), compressed.size(), 0};
  std::vector<char> chunk(ZSTD_DStreamOutSize());
  while (in.pos < in.size) {
    ZSTD_outBuffer o{chunk.data(), chunk.size(), 0};
    size_t ret = ZSTD_decompressStream(stream, &o, &in);
    if (ZSTD_isError(ret)) {
      ZSTD_freeDStream(stream);
      return Fail("cannot decompress '" + path + "': " + ZSTD_getErrorName(ret));
    }
    out.append(chunk.data(), o.pos);
  }
  ZSTD_freeDStream(stream);
  char* data = static_cast<char*>(malloc(out.size()));
  if (!data) return Fail("out of memory");
  std::memcpy(data, out.data(), out.size());
  return std::pair<char*, size_t>{data, out.size()};
}

}  // namespace

Result<Debuginfo::Module> Debuginfo::OpenModule(const std::string& path) {
  Dwfl* dwfl = dwfl_begin(&kOfflineCallbacks);
  if (!dwfl) return Fail("cannot start libdwfl: " + std::string(dwfl_errmsg(-1)));
  std::string name = path.substr(path.rfind('/') + 1);
  name = name.substr(0, name.find(".ko"));
  Dwfl_Module* mod = nullptr;
  char* memory = nullptr;  // ours to free, after dwfl_end
  if (path.ends_with(".zst")) {
    auto data = ReadZstd(path);
    if (!data) {
      dwfl_end(dwfl);
      return std::unexpected(data.error());
    }
    memory = data->first;
    mod = dwfl_report_offline_memory(dwfl, name.c_str(), path.c_str(), data->first, data->second);
  } else {
    mod = dwfl_report_offline(dwfl, name.c_str(), path.c_str(), -1);
  }
  dwfl_report_end(dwfl, nullptr, nullptr);
  if (!mod) {
    std::string why = dwfl_errmsg(-1);
    dwfl_end(dwfl);
    free(memory);
    return Fail("cannot read the kernel module '" + path + "': " + why);
  }
  Module out;
  Dwarf_Addr elf_bias = 0;
  if (Elf* elf = dwfl_module_getelf(mod, &elf_bias)) {
    GElf_Ehdr ehdr;
    if (gelf_getehdr(elf, &ehdr)) out.machine = ehdr.e_machine;
    out.elf64 = gelf_getclass(elf) == ELFCLASS64;
    const void* id = nullptr;
    if (ssize_t size = dwelf_elf_gnu_build_id(elf, &id); size > 0)
      out.build_id = HexOf({static_cast<const char*>(id), static_cast<size_t>(size)});
    auto section = [&](std::string_view section_name) {
      Elf_Data* data = dwarf::SectionData(elf, section_name);
      return data && data->d_buf ? std::string(static_cast<const char*>(data->d_buf), data->d_size) : std::string();
    };
    out.modinfo = section(".modinfo");
    out.btf = section(".BTF");
  }
  int n = dwfl_module_getsymtab(mod);
  for (int i = 1; i < n; ++i) {
    GElf_Sym sym;
    GElf_Addr address = 0;
    GElf_Word shndx = 0;
    Elf* elf = nullptr;
    Dwarf_Addr bias = 0;
    const char* symbol = dwfl_module_getsym_info(mod, i, &sym, &address, &shndx, &elf, &bias);
    if (!symbol || !*symbol || sym.st_shndx == SHN_UNDEF) continue;
    int type = GELF_ST_TYPE(sym.st_info);
    if (type != STT_FUNC && type != STT_OBJECT) continue;
    ElfSymbol s;
    s.name = symbol;
    s.value = address;
    s.size = sym.st_size;
    s.type = type == STT_FUNC ? ElfSymbol::kFunction : ElfSymbol::kObject;
    s.global = GELF_ST_BIND(sym.st_info) != STB_LOCAL;
    out.symbols.push_back(std::move(s));
  }
  Dwarf_Addr bias = 0;
  Dwarf* dw = dwfl_module_getdwarf(mod, &bias);
  if (!dw || bias != 0) {
    out.dwarf_error = "'" + path + "' has no DWARF debuginfo";
    dwfl_end(dwfl);
    free(memory);
    return out;
  }
  out.debuginfo = std::unique_ptr<Debuginfo>(new dwarf::DwarfInfo(path, dwfl, dw, memory));
  return out;
}

namespace dwarf {

std::string LastError() {
  const char* msg = dwarf_errmsg(-1);
  return msg && *msg ? msg : "no error";
}

std::string DieName(Dwarf_Die* die) {
  const char* name = dwarf_diename(die);
  if (name) return name;
  // dwarf_diename does not follow DW_AT_abstract_origin for every DIE kind.
  Dwarf_Attribute attr;
  if (dwarf_attr_integrate(die, DW_AT_name, &attr)) {
    const char* s = dwarf_formstring(&attr);
    if (s) return s;
  }
  return {};
}

std::string LinkageName(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  for (unsigned at : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name})
    if (dwarf_attr_integrate(die, at, &attr))
      if (const char* s = dwarf_formstring(&attr)) return s;
  return {};
}

std::string FunctionName(Dwarf_Die* die) {
  std::string linkage = LinkageName(die);
  if (!linkage.empty())
    if (auto demangled = Demangle(linkage); demangled && !MadeForAnother(*demangled))
      return SplitCxxName(*demangled).qualified;
  return DieName(die);
}

// The innermost subprogram of a CU whose code holds `address`, found by a
// walk of every DIE (libdw's scopes skip those nested outside their
// parent's ranges).
std::optional<Dwarf_Die> NestedFunctionAt(Dwarf_Die* cu, uint64_t address) {
  std::optional<Dwarf_Die> found;
  std::vector<Dwarf_Die> stack;
  Dwarf_Die child;
  if (dwarf_child(cu, &child) == 0) stack.push_back(child);
  while (!stack.empty()) {
    Dwarf_Die die = stack.back();
    stack.pop_back();
    Dwarf_Die next;
    if (dwarf_siblingof(&die, &next) == 0) stack.push_back(next);
    if (dwarf_tag(&die) == DW_TAG_subprogram && dwarf_haspc(&die, address) == 1) found = die;
    if (dwarf_child(&die, &next) == 0) stack.push_back(next);
  }
  return found;
}

// A C++ instance's parameter list, from its demangled linkage name.
std::string ParamsOf(const ReadyDwarf& dwarf, const FunctionInstance& fn) {
  Dwarf_Die die = dwarf.Die(fn.die);
  auto demangled = Demangle(LinkageName(&die));
  return demangled ? SplitCxxName(*demangled).params : std::string();
}

bool HasScopedNames(Dwarf_Die* cu) {
  switch (dwarf_srclang(cu)) {
    case DW_LANG_C_plus_plus:
    case DW_LANG_C_plus_plus_03:
    case DW_LANG_C_plus_plus_11:
    case DW_LANG_C_plus_plus_14:
    case DW_LANG_Rust:
      return true;
    default:
      return false;
  }
}

Dwarf_Attribute* LocationAttr(Dwarf_Die* die, unsigned name, Dwarf_Attribute* out) {
  if (!dwarf_attr(die, name, out)) return nullptr;
  if (out->form == DW_FORM_block1 && out->valp && *out->valp < 0x80) out->form = DW_FORM_exprloc;
  return out;
}

bool TypeOf(Dwarf_Die* die, Dwarf_Die* type) {
  Dwarf_Attribute attr;
  return dwarf_attr_integrate(die, DW_AT_type, &attr) && dwarf_formref_die(&attr, type);
}

std::vector<AddressRange> Ranges(Dwarf_Die* die) {
  std::vector<AddressRange> out;
  Dwarf_Addr base, start, end;
  ptrdiff_t offset = 0;
  while ((offset = dwarf_ranges(die, offset, &base, &start, &end)) > 0)
    if (end > start) out.push_back({start, end});
  return out;
}

namespace {

// The bytes of the image's code from `address` on (up to `size`), from
// the executable section that holds it; empty where the file has none
// (separate debuginfo, whose .text is NOBITS; a relocatable module, whose
// sections libdwfl placed).
std::string_view CodeAt(Elf* elf, uint64_t address, size_t size) {
  GElf_Ehdr ehdr;
  if (!elf || !gelf_getehdr(elf, &ehdr) || ehdr.e_type == ET_REL) return {};
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS || !(shdr.sh_flags & SHF_EXECINSTR) ||
        address < shdr.sh_addr || address - shdr.sh_addr >= shdr.sh_size)
      continue;
    Elf_Data* data = elf_rawdata(scn, nullptr);
    uint64_t at = address - shdr.sh_addr;
    if (!data || !data->d_buf || at >= data->d_size) return {};
    return {static_cast<const char*>(data->d_buf) + at, std::min<size_t>(size, data->d_size - at)};
  }
  return {};
}

// Whether the instruction at an inlined copy's entry_pc, which names no
// code of the copy's own, is a jump into the copy's code.
bool JumpsInto(Dwarf_Die* die, uint64_t entry, const std::vector<AddressRange>& ranges) {
  Elf* elf = dwarf_getelf(dwarf_cu_getdwarf(die->cu));
  GElf_Ehdr ehdr;
  if (!elf || !gelf_getehdr(elf, &ehdr)) return false;
  auto arch = ArchOfElf(ehdr.e_machine, ehdr.e_ident[EI_CLASS] == ELFCLASS64, "the DWARF's image");
  if (!arch) return false;
  auto target = (*arch)->DirectJumpTarget(CodeAt(elf, entry, 8), entry);
  return target && std::any_of(ranges.begin(), ranges.end(),
                               [&](const AddressRange& r) { return *target >= r.start && *target < r.end; });
}

}  // namespace

bool EntryAddress(Dwarf_Die* die, uint64_t* address) {
  Dwarf_Addr entry = 0;
  if (dwarf_entrypc(die, &entry) == 0) {
    *address = entry;
    if (dwarf_haspc(die, entry) == 1) return true;
    // An inlined copy whose entry_pc names no code of its own (an empty
    // range [P, P), or none): where the instruction there jumps into the
    // copy's code, the entry_pc, which runs once each time the copy does,
    // as perf probes it. gcc 14 rotates a loop so: 7.3's d_ancestor in
    // is_subdir has its entry_pc at +147, 'jmp +165', and its code at
    // [+160, +180), whose first instruction is the loop's test, run from
    // the second round on (a call whose first dentry is the root never
    // runs it). Else the start of its first non-empty range.
    auto ranges = Ranges(die);
    if (JumpsInto(die, entry, ranges)) return true;
    std::optional<uint64_t> first;
    for (const AddressRange& r : ranges)
      if (!first || r.start < *first) first = r.start;
    if (first) *address = *first;
    return true;
  }
  // No entry_pc and no low_pc, only DW_AT_ranges: gcc's hot/cold split
  // (-freorder-blocks-and-partition; ~2,400 functions of a 6.1 kernel, as
  // do_exit and its do_exit.cold). The entry is the first range as listed,
  // the hot part, not the lowest address: .text.unlikely, where the cold
  // part goes, can come first in the image. perf's die_entrypc() does the same.
  Dwarf_Addr base, start, end;
  if (dwarf_ranges(die, 0, &base, &start, &end) <= 0) return false;
  *address = start;
  return true;
}

bool PathMatches(std::string_view full, std::string_view suffix) {
  while (suffix.starts_with("./")) suffix.remove_prefix(2);
  if (suffix.empty() || !full.ends_with(suffix)) return false;
  return full.size() == suffix.size() || full[full.size() - suffix.size() - 1] == '/' || suffix[0] == '/';
}

DwarfInfo::DwarfInfo(std::string path, int fd, void* map, size_t map_size, Elf* elf, Dwarf* dwarf, IndexOptions options)
    : path_(std::move(path)),
      fd_(fd),
      map_(map),
      map_size_(map_size),
      elf_(elf),
      options_(std::move(options)),
      units_(dwarf, [this](uint64_t begin, uint64_t end) { ReleaseInfo(begin, end); }) {
  cfi_debug_ = dwarf_getcfi(dwarf);
  cfi_eh_ = dwarf_getcfi_elf(elf_);
  struct stat st;
  if (fstat(fd_, &st) == 0) {
    key_.size = static_cast<uint64_t>(st.st_size);
    key_.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  }
  const void* id = nullptr;
  ssize_t id_size = dwelf_elf_gnu_build_id(elf_, &id);
  if (id_size > 0 && id_size <= 48) key_.build_id.assign(static_cast<const char*>(id), static_cast<size_t>(id_size));
  info_section_ = FindRawSection(elf_, ".debug_info");
  if (auto line = FindRawSection(elf_, ".debug_line")) {
    const auto* base = static_cast<const unsigned char*>(map_);
    auto span = [&](const std::optional<RawSection>& r) {
      return r && r->offset + r->size <= map_size_ ? std::span<const unsigned char>(base + r->offset, r->size)
                                                   : std::span<const unsigned char>();
    };
    line_sections_ = LineSections{span(line), span(FindRawSection(elf_, ".debug_line_str")),
                                  span(FindRawSection(elf_, ".debug_str"))};
  }
  // With a valid cache file each unit is read through its window (Settle):
  // no unit need be read ahead.
  Settle();
  if (!windows_) units_.Start();
}

DwarfInfo::DwarfInfo(std::string path, Dwfl* dwfl, Dwarf* dwarf, char* memory)
    : path_(std::move(path)), units_(dwarf, nullptr), dwfl_(dwfl), memory_(memory) {
  cfi_debug_ = dwarf_getcfi(dwarf);
}

DwarfInfo::~DwarfInfo() {
  // What the thread has left to read is read for nothing now.
  (void)units_.WaitThrough(0);
  windows_.reset();
  if (cfi_eh_) dwarf_cfi_end(cfi_eh_);
  if (dwfl_) {
    dwfl_end(dwfl_);  // it owns the Dwarf
    free(memory_);
    return;
  }
  dwarf_end(units_.handle_unread());
  CloseElf(elf_);
  munmap(map_, map_size_);
  close(fd_);
}

}  // namespace dwarf
}  // namespace kprobectl
