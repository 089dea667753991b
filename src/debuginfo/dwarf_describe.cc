// SPDX-License-Identifier: GPL-2.0-or-later
//
// What a place in the code is, as DwarfAddress says it: its function, the
// function's declaration, the line there. The declaration's file comes from
// the line program's header (LineProgramPaths); the line needs the CU's
// whole line table, so it is looked up only where something reads it.
#include <dwarf.h>

#include <algorithm>
#include <string_view>

#include "dwarf_internal.h"

namespace kprobectl::dwarf {

const char* DwarfInfo::DeclFile(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  Dwarf_Word index = 0;
  if (dwarf_formudata(dwarf_attr_integrate(die, DW_AT_decl_file, &attr), &index) != 0 || index == 0) return nullptr;
  Dwarf_Die cu;
  Dwarf_Half version = 0;
  uint8_t unit_type = 0;
  Dwarf_Attribute stmt;
  Dwarf_Word offset = 0;
  // A plain CU only: a split unit's line program is in its .dwo.
  if (!line_sections_ || dwarf_cu_info(attr.cu, &version, &unit_type, &cu, nullptr, nullptr, nullptr, nullptr) != 0 ||
      (unit_type != DW_UT_compile && unit_type != DW_UT_partial) ||
      dwarf_formudata(dwarf_attr(&cu, DW_AT_stmt_list, &stmt), &offset) != 0)
    return dwarf_decl_file(die);
  auto [it, added] = decl_files_.try_emplace(offset);
  if (added) {
    Dwarf_Attribute comp_dir;
    auto paths =
        LineProgramPaths(*line_sections_, offset, dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &comp_dir)));
    if (paths) it->second = std::move(*paths);
  }
  if (!it->second) return dwarf_decl_file(die);
  return index < it->second->size() ? (*it->second)[index].c_str() : nullptr;
}

DwarfAddress DwarfInfo::Describe(const ReadyDwarf& dwarf, const FunctionInstance& fn, uint64_t address) {
  Dwarf_Die die = dwarf.Die(fn.die);
  DwarfAddress out;
  out.address = address;
  out.function = FunctionName(&die);
  out.inlined = fn.inlined;
  out.die_offset = fn.die;
  const char* decl_file = DeclFile(&die);
  if (decl_file) out.decl.file = decl_file;
  int decl_line = 0;
  if (dwarf_decl_line(&die, &decl_line) == 0) out.decl.line = static_cast<uint64_t>(decl_line);
  uint64_t entry = 0;
  bool has_entry = EntryAddress(&die, &entry);
  out.entry = has_entry && entry == address;
  Dwarf_Die cu = dwarf.CuOf(&die);
  // Go (1.19) writes no DW_AT_decl_line for functions: the line of the
  // entry's row, Go's "func" line, is where the function begins.
  if (out.decl.line == 0 && has_entry && decl_file)
    if (const LineTable& lines = Lines(&cu); const LineTable::Row* first = lines.At(entry)) {
      const char* file = lines.File(*first);
      if (file && std::string_view(file) == decl_file) out.decl.line = static_cast<uint64_t>(first->line);
    }
  // At the entry the line is the declaration's, and costs the CU's whole
  // line table: left out, unless there is no declared file (clang's DWARF
  // 5 writes DW_AT_decl_file 0, which libdw names no file), whose place is
  // then the line's file.
  if (!out.entry || out.decl.file.empty()) LineAt(&cu, address, out);
  return out;
}

DwarfAddress DwarfInfo::WithLine(const DwarfAddress& at) {
  if (!at.entry || at.at.line != 0) return at;
  ReadyDwarf dwarf = Ready();
  Dwarf_Die die = dwarf.Die(at.die_offset);
  Dwarf_Die cu = dwarf.CuOf(&die);
  DwarfAddress out = at;
  LineAt(&cu, at.address, out);
  return out;
}

void DwarfInfo::LineAt(Dwarf_Die* cu, uint64_t address, DwarfAddress& out) {
  const LineTable& lines = Lines(cu);
  if (const LineTable::Row* row = lines.At(address)) {
    if (const char* file = lines.File(*row)) out.at.file = file;
    out.at.line = static_cast<uint64_t>(row->line);
  }
  // Several rows may start at one address (gcc's views, inlined code): the
  // statement of the function's own file is the line a probe there is on.
  auto first = std::partition_point(lines.rows.begin(), lines.rows.end(),
                                    [&](const LineTable::Row& row) { return row.address < address; });
  for (auto row = first; row != lines.rows.end() && row->address == address; ++row) {
    if (!row->stmt) continue;
    const char* file = lines.File(*row);
    bool own = file && out.decl.file == file;
    if (!out.line_start || own) {
      out.line_start = true;
      if (file) out.at.file = file;
      out.at.line = static_cast<uint64_t>(row->line);
    }
    if (own) break;
  }
}

}  // namespace kprobectl::dwarf
