// SPDX-License-Identifier: GPL-2.0-or-later
#include "kernel_facts.h"

#include <dwarf.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <functional>
#include <stdexcept>

namespace kprobectl::test {

namespace {

// Sections the kernel never probes, between __NAME_start and __NAME_end:
// kernel/kprobes.c's populate_kprobe_blacklist() adds .kprobes.text and
// .noinstr.text, the architecture's arch_populate_kprobe_blacklist() its
// entry code's sections (those an image lacks are no matter).
constexpr const char* kNoProbeSections[] = {"kprobes_text", "noinstr_text", "entry_text", "irqentry_text",
                                            "softirqentry_text"};

}  // namespace

KernelFacts::KernelFacts(const std::string& path) {
  elf_version(EV_CURRENT);
  fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw std::runtime_error("cannot open " + path);
  elf_ = elf_begin(fd_, ELF_C_READ_MMAP, nullptr);
  if (!elf_) throw std::runtime_error("not an ELF file: " + path);
  dwarf_ = dwarf_begin_elf(elf_, DWARF_C_READ, nullptr);
  if (!dwarf_) throw std::runtime_error("no DWARF in " + path);
  ReadSymbols();
  IndexFunctions();
}

KernelFacts::~KernelFacts() {
  if (dwarf_) dwarf_end(dwarf_);
  if (elf_) elf_end(elf_);
  if (fd_ >= 0) close(fd_);
}

void KernelFacts::ReadSymbols() {
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf_, scn))) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    size_t count = shdr.sh_entsize ? shdr.sh_size / shdr.sh_entsize : 0;
    for (size_t i = 0; data && i < count; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF) continue;
      const char* name = elf_strptr(elf_, shdr.sh_link, sym.st_name);
      if (!name || !*name) continue;
      all_symbols_.try_emplace(name, sym.st_value);
      if (GELF_ST_TYPE(sym.st_info) == STT_FUNC)
        functions_.push_back({name, sym.st_value, sym.st_size, GELF_ST_BIND(sym.st_info) != STB_LOCAL});
    }
  }
  std::stable_sort(functions_.begin(), functions_.end(),
                   [](const Symbol& a, const Symbol& b) { return a.value < b.value; });
  for (size_t i = 0; i < functions_.size(); ++i) {
    function_index_.try_emplace(functions_[i].name, i);
    ++function_count_[functions_[i].name];
  }
}

const Symbol* KernelFacts::Function(std::string_view name) const {
  auto it = function_index_.find(name);
  return it == function_index_.end() ? nullptr : &functions_[it->second];
}

bool KernelFacts::HasSymbol(std::string_view name) const { return all_symbols_.contains(name); }

const Symbol* KernelFacts::FunctionAt(uint64_t address) const {
  auto it = std::upper_bound(functions_.begin(), functions_.end(), address,
                             [](uint64_t a, const Symbol& s) { return a < s.value; });
  const Symbol* best = nullptr;
  // Back from the last symbol at or below it; no kernel function is 1 MB.
  for (; it != functions_.begin();) {
    --it;
    if (address - it->value > (1u << 20)) break;
    if (best && it->value < best->value) break;
    if (address >= it->value + std::max<uint64_t>(it->size, 1)) continue;
    if (!best || (it->value == best->value && it->global && !best->global)) best = &*it;
  }
  return best;
}

std::string KernelFacts::Place(uint64_t address) const {
  const Symbol* fn = FunctionAt(address);
  if (!fn) return {};
  auto text = all_symbols_.find("_text");
  if (function_count_.at(fn->name) > 1 && text != all_symbols_.end())
    return "_text+" + std::to_string(address - text->second);
  return fn->name + "+" + std::to_string(address - fn->value);
}

std::string KernelFacts::BlacklistedAs(uint64_t address) const {
  for (const char* section : kNoProbeSections) {
    auto start = all_symbols_.find("__" + std::string(section) + "_start");
    auto end = all_symbols_.find("__" + std::string(section) + "_end");
    if (start != all_symbols_.end() && end != all_symbols_.end() && address >= start->second && address < end->second)
      return "." + std::string(section);
  }
  const Symbol* fn = FunctionAt(address);
  return fn && HasSymbol("_kbl_addr_" + fn->name) ? fn->name : std::string();
}

std::string KernelFacts::Bytes(uint64_t address, size_t size) const {
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf_, scn))) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS || !(shdr.sh_flags & SHF_ALLOC)) continue;
    if (address < shdr.sh_addr || address + size > shdr.sh_addr + shdr.sh_size) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data || !data->d_buf || address - shdr.sh_addr + size > data->d_size) return {};
    return std::string(static_cast<const char*>(data->d_buf) + (address - shdr.sh_addr), size);
  }
  return {};
}

bool KernelFacts::Traceable(uint64_t address) const {
  auto calls_fentry = [&](const Symbol& fn) {
    auto fentry = all_symbols_.find("__fentry__");
    std::string code = Bytes(fn.value, 9);
    if (fentry == all_symbols_.end() || code.size() < 9) return false;
    size_t at = code.starts_with("\xf3\x0f\x1e\xfa") ? 4 : 0;  // endbr64
    if (static_cast<unsigned char>(code[at]) != 0xe8) return false;
    int32_t rel = 0;
    std::memcpy(&rel, code.data() + at + 1, 4);
    return fn.value + at + 5 + static_cast<uint64_t>(static_cast<int64_t>(rel)) == fentry->second;
  };
  const Symbol* fn = FunctionAt(address);
  if (!fn) return false;
  if (calls_fentry(*fn)) return true;
  size_t dot = fn->name.find('.');
  const Symbol* whole = dot == std::string::npos || dot == 0 ? nullptr : Function(fn->name.substr(0, dot));
  return whole && calls_fentry(*whole);
}

// --- lines -------------------------------------------------------------------

const std::vector<LineRow>& KernelFacts::Lines(Dwarf_Die* cu) const {
  auto [it, fresh] = lines_.try_emplace(dwarf_dieoffset(cu));
  if (!fresh) return it->second;
  Dwarf_Lines* lines = nullptr;
  size_t count = 0;
  if (dwarf_getsrclines(cu, &lines, &count) != 0) return it->second;
  for (size_t i = 0; i < count; ++i) {
    Dwarf_Line* line = dwarf_onesrcline(lines, i);
    LineRow row;
    Dwarf_Addr address = 0;
    dwarf_lineaddr(line, &address);
    row.address = address;
    dwarf_lineno(line, &row.line);
    dwarf_linebeginstatement(line, &row.stmt);
    dwarf_lineendsequence(line, &row.end_sequence);
    const char* file = dwarf_linesrc(line, nullptr, nullptr);
    row.file = file ? file : "";
    it->second.push_back(std::move(row));
  }
  return it->second;
}

std::vector<uint64_t> KernelFacts::LineBlocks(Dwarf_Die* cu, const std::string& file, int line,
                                              const std::vector<Range>& ranges) const {
  const std::vector<LineRow>& rows = Lines(cu);
  auto inside = [&](uint64_t a) {
    return std::any_of(ranges.begin(), ranges.end(), [&](const Range& r) { return r.Holds(a); });
  };
  std::vector<uint64_t> out;
  bool in_block = false;
  for (size_t i = 0; i < rows.size(); ++i) {
    const LineRow& row = rows[i];
    if (row.end_sequence || row.line != line || row.file != file || !inside(row.address)) {
      bool marker = !row.end_sequence && i + 1 < rows.size() && rows[i + 1].address == row.address;
      if (!marker) in_block = false;
      continue;
    }
    if (!in_block && row.stmt) {
      out.push_back(row.address);
      in_block = true;
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::pair<std::string, int> KernelFacts::LineAt(Dwarf_Die* cu, uint64_t address, const std::string& own_file) const {
  std::optional<std::pair<std::string, int>> first;
  for (const LineRow& row : Lines(cu)) {
    if (row.address != address || !row.stmt || row.end_sequence) continue;
    if (row.file == own_file) return {row.file, row.line};
    if (!first) first = {row.file, row.line};
  }
  if (first) return *first;
  Dwarf_Line* line = dwarf_getsrc_die(cu, address);
  int lineno = 0;
  const char* file = line ? dwarf_linesrc(line, nullptr, nullptr) : nullptr;
  if (line) dwarf_lineno(line, &lineno);
  return {file ? file : "", lineno};
}

int KernelFacts::LastOwnLine(Dwarf_Die* cu, const std::string& file, int decl_line) const {
  int next = INT_MAX;
  Dwarf_Die child;
  if (dwarf_child(cu, &child) == 0) do {
      if (dwarf_tag(&child) != DW_TAG_subprogram || dwarf_hasattr(&child, DW_AT_declaration)) continue;
      int line = DeclLine(&child);
      if (line > decl_line && DeclFile(&child) == file) next = std::min(next, line);
    } while (dwarf_siblingof(&child, &child) == 0);
  return next == INT_MAX ? INT_MAX : next - 1;
}

}  // namespace kprobectl::test
