// SPDX-License-Identifier: GPL-2.0-or-later
//
// The names of the files a CU's line program lists, read from its header in
// .debug_line. libdw 0.188 offers them only through dwarf_getsrcfiles, which
// decodes the whole line program and keeps every row: across a vmlinux that
// is 350 ms and 330 MB, where these headers are a few hundred KB. Only what
// the index needs is read: each file's basename (the directory it is joined
// with does not change it). Anything this does not know (DW_FORM_strx, a
// truncated header) is an error, and the caller asks libdw instead.
#include <algorithm>
#include <cstring>
#include <optional>

#include "byte_reader.h"
#include "dwarf_internal.h"

namespace kprobectl::dwarf {

namespace {

std::string_view StringAt(std::span<const unsigned char> section, uint64_t offset, bool* ok) {
  if (offset >= section.size()) {
    *ok = false;
    return {};
  }
  const auto* start = section.data() + offset;
  const void* nul = std::memchr(start, 0, section.size() - offset);
  if (!nul) {
    *ok = false;
    return {};
  }
  return {reinterpret_cast<const char*>(start), static_cast<size_t>(static_cast<const unsigned char*>(nul) - start)};
}

std::string_view Basename(std::string_view path) { return path.substr(path.rfind('/') + 1); }

}  // namespace

namespace {

// One value of a DWARF 5 entry format: a string (`text`) or a number
// (`number`); false for a form this reader does not know.
bool ReadForm(ByteReader& r, uint64_t form, const LineSections& sections, unsigned offset_size, std::string_view* text,
              uint64_t* number) {
  bool ok = true;
  // clang-format off
  switch (form) {
    case 0x08: *text = r.String(); break;                                              // string
    case 0x1f: *text = StringAt(sections.line_str, r.Fixed(offset_size), &ok); break;  // line_strp
    case 0x0e: *text = StringAt(sections.str, r.Fixed(offset_size), &ok); break;       // strp
    case 0x0b: *number = r.Fixed(1); break;                                            // data1
    case 0x05: *number = r.Fixed(2); break;                                            // data2
    case 0x06: *number = r.Fixed(4); break;                                            // data4
    case 0x07: *number = r.Fixed(8); break;                                            // data8
    case 0x1e: r.Skip(16); break;                                                      // data16
    case 0x0f: *number = r.Uleb(); break;                                              // udata
    case 0x09: r.Skip(r.Uleb()); break;                                                // block
    default: return false;
  }
  // clang-format on
  return ok;
}

struct Entry {
  std::string_view path;
  uint64_t dir = 0;
};

// DWARF 5's directory or file entries, described by (content type, form)
// pairs: their paths (DW_LNCT_path) and directory indexes.
bool ReadEntries(ByteReader& r, const LineSections& sections, unsigned offset_size, bool files,
                 std::vector<Entry>& out) {
  unsigned formats = static_cast<unsigned>(r.Fixed(1));
  std::vector<std::pair<uint64_t, uint64_t>> format;
  bool path = false, dir = false;
  for (unsigned i = 0; i < formats; ++i) {
    uint64_t type = r.Uleb();
    format.emplace_back(type, r.Uleb());
    const uint64_t form = format.back().second;
    // As libdw requires: a path as a string, a directory index as a
    // constant, a path for each entry and a directory for each file.
    if (type == 1 /* DW_LNCT_path */ && form != 0x08 && form != 0x1f && form != 0x0e) return false;
    if (type == 2 /* DW_LNCT_directory_index */ && form != 0x0b && form != 0x05 && form != 0x06 && form != 0x07 &&
        form != 0x0f)
      return false;
    path |= type == 1;
    dir |= type == 2;
  }
  if (formats > 0 && (!path || (files && !dir))) return false;
  uint64_t count = r.Uleb();
  // Every form takes a byte at least: more entries than bytes left, or
  // entries with no content, is a corrupt header (and a loop of 2^64).
  if (count > r.Left() || (formats == 0 && count != 0)) return false;
  for (uint64_t e = 0; e < count && r.ok; ++e) {
    Entry entry;
    for (const auto& [type, form] : format) {
      std::string_view text;
      uint64_t number = 0;
      if (!ReadForm(r, form, sections, offset_size, &text, &number)) return false;
      if (type == 1 /* DW_LNCT_path */) entry.path = text;
      if (type == 2 /* DW_LNCT_directory_index */) entry.dir = number;
    }
    out.push_back(entry);
  }
  return r.ok;
}

// DWARF 2-4: include_directories, then file_names.
void ReadOldEntries(ByteReader& r, std::vector<Entry>& dirs, std::vector<Entry>& files) {
  for (std::string_view dir; r.ok && !(dir = r.String()).empty();) dirs.push_back({dir, 0});
  for (std::string_view name; r.ok && !(name = r.String()).empty();) {
    uint64_t dir = r.Uleb();
    r.Uleb();  // mtime
    r.Uleb();  // length
    files.push_back({name, dir});
  }
}

struct HeaderFiles {
  unsigned version = 0;
  std::vector<Entry> dirs, files;
};

Result<HeaderFiles> ReadHeaderFiles(const LineSections& sections, uint64_t offset) {
  const LineProgramUnit unit = KP_TRY(ReadLineProgramUnit(sections.line, offset));
  ByteReader r{unit.fields, unit.program};  // the header only
  const unsigned offset_size = unit.offset_size;
  HeaderFiles out;
  out.version = unit.version;
  r.Skip(out.version >= 4 ? 5 : 4);  // min_inst_length, [max_ops], default_is_stmt, line_base, line_range
  unsigned opcode_base = static_cast<unsigned>(r.Fixed(1));
  r.Skip(opcode_base > 0 ? opcode_base - 1 : 0);  // standard_opcode_lengths
  if (out.version < 5)
    ReadOldEntries(r, out.dirs, out.files);
  else if (!ReadEntries(r, sections, offset_size, false, out.dirs) ||
           !ReadEntries(r, sections, offset_size, true, out.files))
    return Fail("line program header with forms this reader does not know");
  if (!r.ok) return Fail("truncated line program header");
  // libdw refuses a header whose tables end before its length says.
  if (r.p != r.end) return Fail("line program header longer than its tables");
  return out;
}

}  // namespace

Result<LineProgramUnit> ReadLineProgramUnit(std::span<const unsigned char> line, uint64_t offset) {
  if (offset >= line.size()) return Fail("line program offset out of range");
  ByteReader r{line.data() + offset, line.data() + line.size()};
  LineProgramUnit unit;
  uint64_t length = r.Fixed(4);
  unit.offset_size = 4;
  if (length == 0xffffffff) {
    length = r.Fixed(8);
    unit.offset_size = 8;
  }
  if (!r.Need(length)) return Fail("truncated line program");
  unit.end = r.p + length;
  r.end = unit.end;
  unit.version = static_cast<unsigned>(r.Fixed(2));
  if (unit.version < 2 || unit.version > 5) return Fail("line program version " + std::to_string(unit.version));
  if (unit.version >= 5) {
    unit.address_size = static_cast<unsigned>(r.Fixed(1));
    unit.segment_selector_size = static_cast<unsigned>(r.Fixed(1));
  }
  const uint64_t header_length = r.Fixed(unit.offset_size);
  if (!r.Need(header_length)) return Fail("truncated line program header");
  unit.fields = r.p;
  unit.program = r.p + header_length;
  return unit;
}

Result<std::vector<std::string>> LineProgramFiles(const LineSections& sections, uint64_t offset) {
  HeaderFiles header = KP_TRY(ReadHeaderFiles(sections, offset));
  std::vector<std::string> out;
  for (const Entry& file : header.files) out.emplace_back(Basename(file.path));
  std::erase_if(out, [](const std::string& s) { return s.empty(); });
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<std::vector<std::string>> LineProgramPaths(const LineSections& sections, uint64_t offset, const char* comp_dir) {
  HeaderFiles header = KP_TRY(ReadHeaderFiles(sections, offset));
  // Before DWARF 5, directory 0 is the CU's comp_dir and file 0 is none
  // (libdw's "???"); from 5 on both tables begin at 0.
  std::vector<std::optional<std::string_view>> dirs;
  std::vector<std::string> out;
  if (header.version < 5) {
    dirs.push_back(comp_dir ? std::optional<std::string_view>(comp_dir) : std::nullopt);
    out.emplace_back("???");
  }
  // DWARF 5 without files: libdw's file 0 is its "???" still.
  if (header.version >= 5 && header.files.empty()) out.emplace_back("???");
  for (const Entry& dir : header.dirs) dirs.emplace_back(dir.path);
  for (const Entry& file : header.files) {
    if (file.dir >= dirs.size()) return Fail("a file's directory index is out of range");
    // As libdw joins them: an absolute name alone, else its directory, a
    // slash and the name (the name alone when the directory is unknown).
    if (file.path.starts_with('/') || !dirs[file.dir])
      out.emplace_back(file.path);
    else
      out.push_back(std::string(*dirs[file.dir]) + "/" + std::string(file.path));
  }
  return out;
}

}  // namespace kprobectl::dwarf
