// SPDX-License-Identifier: GPL-2.0-or-later
//
// Line tables and source text: where a line's code starts, which lines have
// code, and the -L listing.
#include <dwarf.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "dwarf_internal.h"
#include "kprobectl/cxx_names.h"
#include "kprobectl/strings.h"

namespace kprobectl {

namespace dwarf {

namespace {

// libdw's rows, as a LineTable: its file names in the order first met.
LineTable LibdwLines(Dwarf_Die* cu) {
  LineTable out;
  Dwarf_Lines* lines = nullptr;
  size_t n = 0;
  if (dwarf_getsrclines(cu, &lines, &n) != 0) return out;
  std::map<const char*, uint32_t> files;
  out.rows.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    Dwarf_Line* line = dwarf_onesrcline(lines, i);
    LineTable::Row row{};
    Dwarf_Addr addr = 0;
    int lineno = 0;
    dwarf_lineaddr(line, &addr);
    dwarf_lineno(line, &lineno);
    bool stmt = false, end_sequence = false;
    dwarf_linebeginstatement(line, &stmt);
    dwarf_lineendsequence(line, &end_sequence);
    row.stmt = stmt;
    row.end_sequence = end_sequence;
    row.address = addr;
    row.line = lineno;
    row.file = LineTable::kNoFile;
    if (const char* file = dwarf_linesrc(line, nullptr, nullptr); file && out.files.size() < LineTable::kNoFile) {
      auto [it, added] = files.try_emplace(file, static_cast<uint32_t>(out.files.size()));
      if (added) out.files.emplace_back(file);
      row.file = it->second & LineTable::kNoFile;  // the mask only narrows: fewer files than kNoFile
    }
    out.rows.push_back(row);
  }
  return out;
}

bool InRanges(const std::vector<AddressRange>* ranges, uint64_t address) {
  if (!ranges) return true;
  for (const AddressRange& r : *ranges)
    if (address >= r.start && address < r.end) return true;
  return false;
}

bool SameFile(const char* a, std::string_view b) { return a && std::string_view(a) == b; }

}  // namespace

const LineTable& DwarfInfo::Lines(Dwarf_Die* cu) {
  const uint64_t key = OffsetOf(cu);
  for (const auto& [cached, lines] : line_tables_)
    if (cached == key) return lines;
  // The oldest goes (a deque keeps references to the others valid).
  if (line_tables_.size() == kLineTables) line_tables_.pop_back();
  LineTable& table = line_tables_.emplace_front(key, LineTable{}).second;
  Dwarf_Half version = 0;
  uint8_t unit_type = 0, address_size = 0;
  Dwarf_Attribute stmt, comp_dir;
  Dwarf_Word offset = 0;
  // A plain CU only: a split unit's line program is in its .dwo.
  if (line_sections_ && cu->cu &&
      dwarf_cu_info(cu->cu, &version, &unit_type, nullptr, nullptr, nullptr, &address_size, nullptr) == 0 &&
      (unit_type == DW_UT_compile || unit_type == DW_UT_partial) &&
      dwarf_formudata(dwarf_attr(cu, DW_AT_stmt_list, &stmt), &offset) == 0)
    if (auto own = ReadLineTable(*line_sections_, offset, dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &comp_dir)),
                                 address_size)) {
      table = std::move(*own);
      return table;
    }
  table = LibdwLines(cu);
  return table;
}

std::vector<std::string> DwarfInfo::SourceFiles(Dwarf_Die* cu) {
  const LineTable& table = Lines(cu);
  if (table.own) return table.files;
  std::vector<std::string> out;
  Dwarf_Files* files = nullptr;
  size_t count = 0;
  if (dwarf_getsrcfiles(cu, &files, &count) != 0) return out;
  for (size_t i = 0; i < count; ++i)
    if (const char* name = dwarf_filesrc(files, i, nullptr, nullptr)) out.emplace_back(name);
  return out;
}

std::vector<DwarfInfo::LineHit> DwarfInfo::LineAddresses(Dwarf_Die* cu, std::string_view file, uint64_t line,
                                                         const std::vector<AddressRange>* ranges) {
  const LineTable& table = Lines(cu);
  const std::vector<LineTable::Row>& rows = table.rows;
  std::vector<LineHit> hits;
  bool in_block = false;
  for (size_t i = 0; i < rows.size(); ++i) {
    const LineTable::Row& row = rows[i];
    const char* row_file = table.File(row);
    const auto row_line = static_cast<uint64_t>(row.line);
    bool ours = !row.end_sequence && row_line == line && SameFile(row_file, file) && InRanges(ranges, row.address);
    if (!ours) {
      // A row of another line at the same address does not end the block:
      // it is a zero-length marker (a "view"), not code.
      if (row.end_sequence || i + 1 >= rows.size() || rows[i + 1].address != row.address) in_block = false;
      continue;
    }
    if (!in_block && row.stmt) {
      hits.push_back({row.address, row_line, row_file});
      in_block = true;
    }
  }
  std::sort(hits.begin(), hits.end(), [](const LineHit& a, const LineHit& b) { return a.address < b.address; });
  hits.erase(
      std::unique(hits.begin(), hits.end(), [](const LineHit& a, const LineHit& b) { return a.address == b.address; }),
      hits.end());
  return hits;
}

std::vector<uint64_t> DwarfInfo::CodeLines(Dwarf_Die* cu, std::string_view file,
                                           const std::vector<AddressRange>* ranges) {
  std::set<uint64_t> lines;
  const LineTable& table = Lines(cu);
  for (const LineTable::Row& row : table.rows) {
    if (row.end_sequence || !row.stmt || !SameFile(table.File(row), file) || !InRanges(ranges, row.address)) continue;
    lines.insert(static_cast<uint64_t>(row.line));
  }
  return {lines.begin(), lines.end()};
}

// Where a function's source ends, which DWARF does not say. An inlined
// copy's address ranges hold rows of its caller as well as its own: the
// caller's line at the copy's first address (a row at the same address,
// an earlier "view"), and code gcc scheduled among the copy's. When the
// caller is in the same file, those rows are lines of that file that are
// no lines of the function (getname_flags, inlined into the syscalls that
// SYSCALL_DEFINE makes at the end of fs/namei.c, gained their lines, some
// 4300 past its own). C has no nested functions: a function's lines end
// before the next function defined after it in its file, so a CU's
// function definitions (and in C++ its namespaces' and classes') bound it. perf has no such bound; it drops rows
// inside nested inlined copies and rows that share their address with
// another line, which leaves these out in practice but also lines
// kprobectl probes (README, "Where kprobectl and perf probe differ").
uint64_t DwarfInfo::LastOwnLine(Dwarf_Die* cu, const std::string& file, uint64_t decl_line) {
  auto key = std::make_tuple(OffsetOf(cu), file, decl_line);
  if (auto it = last_own_lines_.find(key); it != last_own_lines_.end()) return it->second;
  uint64_t next = UINT64_MAX;
  bool cxx = HasScopedNames(cu);
  auto walk = [&](auto& self, Dwarf_Die* parent) -> void {
    Dwarf_Die child;
    if (dwarf_child(parent, &child) != 0) return;
    do {
      int tag = dwarf_tag(&child);
      // A declaration bounds nothing: gcc puts a block-scope one (the
      // __compiletime_assert_N of BUG_ON, min()) among the CU's own. Nor
      // does a Rust closure or async block ("{closure#0}"), declared in its
      // function's body but put in a namespace of the function's name.
      const char* name = dwarf_diename(&child);
      if (tag == DW_TAG_subprogram && !dwarf_hasattr(&child, DW_AT_declaration) && !(name && name[0] == '{')) {
        int line = 0;
        const char* decl = DeclFile(&child);
        if (decl && file == decl && dwarf_decl_line(&child, &line) == 0 && static_cast<uint64_t>(line) > decl_line)
          next = std::min(next, static_cast<uint64_t>(line));
      } else if (cxx && (tag == DW_TAG_namespace || tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
                         tag == DW_TAG_union_type)) {
        self(self, &child);
      }
    } while (dwarf_siblingof(&child, &child) == 0);
  };
  walk(walk, cu);
  uint64_t last = next == UINT64_MAX ? next : next - 1;
  last_own_lines_.emplace(key, last);
  return last;
}

std::vector<uint64_t> DwarfInfo::OwnCodeLines(Dwarf_Die* cu, const std::string& file, uint64_t decl_line,
                                              const std::vector<AddressRange>& ranges) {
  std::vector<uint64_t> lines = CodeLines(cu, file, &ranges);
  uint64_t last = LastOwnLine(cu, file, decl_line);
  std::erase_if(lines, [&](uint64_t l) { return l > last; });
  return lines;
}

Result<std::vector<std::string>> DwarfInfo::ReadSource(Dwarf_Die* cu, const std::string& file,
                                                       const FindOptions& options, std::vector<std::string>* searched) {
  std::vector<std::string> candidates;
  // -s DIR: DIR joined with the recorded path, then with each shorter
  // suffix of it (a kernel tree moved elsewhere keeps its fs/open.c).
  for (const std::string& dir : options.source_dirs) {
    std::string_view rest = file;
    while (!rest.empty()) {
      while (rest.starts_with('/')) rest.remove_prefix(1);
      candidates.push_back(dir + "/" + std::string(rest));
      size_t slash = rest.find('/');
      if (slash == std::string_view::npos) break;
      rest.remove_prefix(slash + 1);
    }
  }
  if (!file.starts_with('/')) {
    Dwarf_Attribute attr;
    const char* comp_dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
    if (comp_dir) candidates.push_back(std::string(comp_dir) + "/" + file);
  }
  candidates.push_back(file);
  for (const std::string& path : candidates) {
    std::ifstream in(path);
    if (!in) continue;
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
  *searched = candidates;
  return Fail("cannot find the source of " + file + "; looked at " + Join(candidates, ", "),
              "give the source tree's top with -s DIR");
}

Result<DwarfInfo::ListingScope> DwarfInfo::FunctionScope(const LineRange& range) {
  ListingScope scope;
  // A header's inline can have copies in thousands of CUs: the listing
  // shows the function as the first CU that holds it has it, as perf's
  // does (all CUs when a file is named, to find the one it is in).
  // C++: the qualified name, and a parameter list picks an overload.
  CxxName written = IsCxxName(range.function) ? SplitCxxName(range.function) : CxxName{range.function, {}, {}};
  auto [dwarf, all] = Instances(written.qualified, range.file.empty() && written.params.empty() ? 1 : SIZE_MAX);
  std::vector<FunctionInstance> instances;
  for (const FunctionInstance& fn : all)
    if (written.params.empty() || ParamsMatch(written.params, ParamsOf(dwarf, fn))) instances.push_back(fn);
  const FunctionInstance* chosen = nullptr;
  for (const FunctionInstance& fn : instances) {
    Dwarf_Die die = dwarf.Die(fn.die);
    const char* decl = DeclFile(&die);
    if (!range.file.empty() && !(decl && PathMatches(decl, range.file))) continue;
    if (!chosen || (chosen->inlined && !fn.inlined)) chosen = &fn;
  }
  if (!chosen)
    return Fail("no function '" + range.function + "' in the debuginfo of " + path_,
                "list functions with 'kprobectl funcs'");
  DwarfAddress where = Describe(dwarf, *chosen, 0);
  scope.path = where.decl.file;
  scope.base = where.decl.line;
  // Every instance of the function contributes the lines it has code for.
  for (const FunctionInstance& fn : instances) {
    Dwarf_Die die = dwarf.Die(fn.die);
    const char* decl = DeclFile(&die);
    if (!decl || std::string_view(decl) != scope.path) continue;
    auto ranges = Ranges(&die);
    Dwarf_Die fn_cu = dwarf.CuOf(&die);
    for (uint64_t l : OwnCodeLines(&fn_cu, scope.path, scope.base, ranges)) scope.code.insert(l);
    // Line 0, the declaration, is where the function begins (FUNC:0 is
    // FUNC there, as in perf) even when no row of the line table says so.
    uint64_t entry = 0;
    if (EntryAddress(&die, &entry)) scope.code.insert(scope.base);
  }
  Dwarf_Die die = dwarf.Die(chosen->die);
  scope.cu = dwarf.CuOf(&die);
  scope.first = scope.base + range.start;
  scope.last = range.end ? scope.base + *range.end
                         : (scope.code.empty() ? scope.base : std::max(scope.base, *scope.code.rbegin()));
  scope.header = "<" + range.function + "@" + scope.path + ":" + std::to_string(range.start) + ">";
  return scope;
}

Result<DwarfInfo::ListingScope> DwarfInfo::FileScope(const LineRange& range) {
  ListingScope scope;
  bool found = false;
  std::vector<Dwarf_Off> units = UnitsWithFile(range.file);
  ReadyDwarf dwarf = Ready();
  for (Dwarf_Off cu_offset : units) {
    Dwarf_Die candidate = dwarf.Die(cu_offset);
    for (const std::string& name : SourceFiles(&candidate)) {
      if (!PathMatches(name, range.file)) continue;
      if (!found) {
        scope.path = name;
        scope.cu = candidate;
        found = true;
      }
      if (scope.path == name)
        for (uint64_t l : CodeLines(&candidate, name, nullptr)) scope.code.insert(l);
    }
  }
  if (!found)
    return Fail("no source file matching '" + range.file + "' in the debuginfo of " + path_,
                "give the path as the build recorded it, or a suffix of it");
  scope.first = std::max<uint64_t>(range.start, 1);
  scope.last = range.end ? *range.end : (scope.code.empty() ? scope.first : *scope.code.rbegin());
  scope.header = "<" + scope.path + ":" + std::to_string(scope.first) + ">";
  return scope;
}

Result<SourceListing> DwarfInfo::Listing(const LineRange& range, const FindOptions& options) {
  ListingScope scope = KP_TRY(range.function.empty() ? FileScope(range) : FunctionScope(range));
  SourceListing listing;
  listing.path = scope.path;
  listing.header = scope.header;
  const std::set<uint64_t>& code = scope.code;
  uint64_t base = scope.base, first = scope.first, last = scope.last;
  Dwarf_Die cu = scope.cu;
  std::vector<std::string> searched;
  auto text = ReadSource(&cu, listing.path, options, &searched);
  listing.have_source = text.has_value();
  listing.searched = searched;
  if (text && range.file.empty() && !range.end && base > 0 && base <= text->size()) {
    // A function's listing runs to its closing brace, which may have no
    // code: the first '}' indented no deeper than the declaration (an
    // inner block's closes deeper, a one-line body's ends its line).
    const std::string& decl = (*text)[base - 1];
    size_t indent = decl.find_first_not_of(" \t");
    auto closes = [&](const std::string& line) {
      return Trim(line).ends_with("}") && line.find_first_not_of(" \t") <= indent;
    };
    for (uint64_t extra = 0; last < text->size() && extra < 50 && !closes((*text)[last - 1]); ++extra) ++last;
  }
  for (uint64_t l = first; l <= last; ++l) {
    bool probeable = code.contains(l);
    if (!text) {
      if (probeable) listing.lines.push_back({l, static_cast<int64_t>(l - base), true, ""});
      continue;
    }
    if (l == 0 || l > text->size()) break;
    listing.lines.push_back({l, static_cast<int64_t>(l) - static_cast<int64_t>(base), probeable, (*text)[l - 1]});
  }
  return listing;
}

}  // namespace dwarf
}  // namespace kprobectl
