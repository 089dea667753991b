// SPDX-License-Identifier: GPL-2.0-or-later
//
// Probe points to addresses. FUNC reaches every instance: each static
// function of the name, each inlined copy (unless --no-inlines), each clone.
// Line numbers become the first address of each block of is_stmt rows for
// that line (a loop header has one in the test and one in the increment;
// an inlined function has one per copy), so every path through the line is
// caught once.
#include <dwarf.h>

#include <algorithm>
#include <optional>
#include <set>

#include "dwarf_internal.h"
#include "kprobectl/cxx_names.h"
#include "kprobectl/glob.h"
#include "kprobectl/strings.h"

namespace kprobectl::dwarf {

namespace {

bool FileMatches(DwarfInfo& info, const ReadyDwarf& dwarf, const FunctionInstance& fn, const std::string& file) {
  if (file.empty()) return true;
  Dwarf_Die die = dwarf.Die(fn.die);
  const char* decl = info.DeclFile(&die);
  if (decl && PathMatches(decl, file)) return true;
  Dwarf_Die cu = dwarf.CuOf(&die);
  const char* cu_name = dwarf_diename(&cu);
  return cu_name && PathMatches(cu_name, file);
}

// Lines relative to a declaration, for messages: "7 and 9", "7".
std::string NearestLines(const std::vector<uint64_t>& lines, uint64_t target, uint64_t base) {
  std::optional<uint64_t> below, above;
  for (uint64_t l : lines) {
    if (l < target && (!below || l > *below)) below = l;
    if (l > target && (!above || l < *above)) above = l;
  }
  std::vector<std::string> parts;
  if (below) parts.push_back(std::to_string(*below - base));
  if (above) parts.push_back(std::to_string(*above - base));
  if (parts.empty()) return {};
  return (parts.size() == 1 ? "the nearest line with code is " : "the nearest lines with code are ") +
         Join(parts, " and ");
}

// A probe on a line is at that line, whatever other rows share its address.
DwarfAddress AtLine(DwarfAddress at, const DwarfInfo::LineHit& hit) {
  at.at = {hit.file, hit.line};
  return at;
}

bool LazyMatch(std::string_view pattern, std::string_view line) {
  auto squeeze = [](std::string_view s) {
    std::string out;
    for (char c : s)
      if (!std::isspace(static_cast<unsigned char>(c))) out += c;
    return out;
  };
  return GlobMatch(squeeze(pattern), squeeze(line));
}

}  // namespace

Result<std::vector<DwarfAddress>> DwarfInfo::Resolve(const ProbePoint& point, const FindOptions& options) {
  // A look-up waits for the units it needs (Instances, UnitsWithFile).
  if (!point.function.empty()) return ResolveFunction(point, options);
  return ResolveSourceLine(point, options);
}

namespace {

// gcc records its options in DW_AT_producer: "GNU C17 12.2.0 -mtune=generic -g -O2".
bool Optimized(Dwarf_Die* cu) {
  Dwarf_Attribute attr;
  const char* producer = dwarf_formstring(dwarf_attr(cu, DW_AT_producer, &attr));
  if (!producer) return true;  // unknown: trust the locations as they are
  // The last -O wins, as on gcc's command line; none means -O0.
  std::string_view p(producer);
  size_t at = p.rfind(" -O");
  return at != std::string_view::npos && (at + 3 >= p.size() || p[at + 3] != '0');
}

}  // namespace

DwarfAddress DwarfInfo::AfterPrologue(const DwarfAddress& at) {
  ReadyDwarf dwarf = Ready();
  if (!at.entry || at.inlined) return at;
  Dwarf_Die fn = dwarf.Die(at.die_offset);
  Dwarf_Die cu = dwarf.CuOf(&fn);
  if (Optimized(&cu)) return at;
  // The prologue ends where the function's next line-table row starts,
  // as perf takes it.
  auto ranges = Ranges(&fn);
  std::optional<uint64_t> next;
  for (const LineTable::Row& row : Lines(&cu).rows) {
    const uint64_t addr = row.address;
    bool in_fn = false;
    for (const AddressRange& r : ranges) in_fn |= addr >= r.start && addr < r.end;
    if (in_fn && addr > at.address && (!next || addr < *next)) next = addr;
  }
  if (!next) return at;
  DwarfAddress out = Describe(dwarf, {at.die_offset, false}, *next);
  out.entry = false;
  return out;
}

Result<DwarfAddress> DwarfInfo::AtAddress(uint64_t address) {
  ReadyDwarf dwarf = Ready();
  Dwarf_Die cu;
  if (!dwarf.UnitAt(address, &cu)) return Fail("no debuginfo describes the code at " + Hex(address) + " in " + path_);
  Dwarf_Die* scopes = nullptr;
  int n = dwarf_getscopes(&cu, address, &scopes);
  for (int i = 0; i < n; ++i) {
    int tag = dwarf_tag(&scopes[i]);
    if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine) continue;
    DwarfAddress out = Describe(dwarf, {dwarf.Offset(&scopes[i]), tag == DW_TAG_inlined_subroutine}, address);
    free(scopes);
    return out;
  }
  free(scopes);
  // libdw looks for scopes only inside DIEs whose ranges hold the address:
  // a function defined inside another's scope but placed outside its code
  // (a lambda's operator() in main's class) is found by a walk of the CU.
  if (auto nested = NestedFunctionAt(&cu, address)) return Describe(dwarf, {dwarf.Offset(&*nested), false}, address);
  return Fail("no function in the debuginfo contains " + Hex(address));
}

Result<DwarfAddress> DwarfInfo::BeginningAt(uint64_t address) {
  DwarfAddress innermost = KP_TRY(AtAddress(address));
  if (!innermost.inlined) return innermost;
  // dwarf_getscopes follows an inlined copy into its abstract definition;
  // the copies it is nested in are its DIE's parents, outermost last.
  ReadyDwarf dwarf = Ready();
  Dwarf_Die die = dwarf.Die(innermost.die_offset);
  Dwarf_Die* scopes = nullptr;
  int n = dwarf_getscopes_die(&die, &scopes);
  std::optional<DwarfAddress> outermost;
  for (int i = n - 1; i > 0 && !outermost; --i) {
    int tag = dwarf_tag(&scopes[i]);
    if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine) continue;
    DwarfAddress at = Describe(dwarf, {dwarf.Offset(&scopes[i]), tag == DW_TAG_inlined_subroutine}, address);
    if (at.entry) outermost = std::move(at);
  }
  free(scopes);
  return outermost ? *outermost : innermost;
}

// What a function look-up met on the way, for the error when it finds no address.
struct DwarfInfo::FunctionSearch {
  bool found_any = false, skipped_inline = false;
  // FUNC:RLN where no instance has code: the line asked for, and the lines
  // every instance has code on (one declaration: absolute lines agree).
  struct NoCode {
    std::string name, file;
    uint64_t line = 0, base = 0;
    bool past_end = false;
    std::set<uint64_t> code;
  };
  std::optional<NoCode> no_code;
  std::set<std::string> other_overloads;  // parameter lists a C++ name has, when none matched
};

Result<void> DwarfInfo::ResolveInstance(const ReadyDwarf& dwarf, const FunctionInstance& fn, const std::string& name,
                                        const ProbePoint& point, const FindOptions& options, FunctionSearch& search,
                                        std::vector<DwarfAddress>& out) {
  Dwarf_Die die = dwarf.Die(fn.die);
  uint64_t entry = 0;
  if (!EntryAddress(&die, &entry)) return {};
  if (!point.line && !point.lazy_pattern) {
    uint64_t address = entry + point.offset.value_or(0);
    if (point.offset) {
      bool inside = false;
      uint64_t size = 0;
      for (const AddressRange& r : Ranges(&die)) {
        inside |= address >= r.start && address < r.end;
        if (r.start == entry) size = r.end - r.start;
      }
      if (!inside)
        return Fail("offset " + std::to_string(*point.offset) + " is outside '" + name + "' (" + std::to_string(size) +
                        " bytes) in " + path_,
                    "give an offset below the function's size");
    }
    out.push_back(Describe(dwarf, fn, address));
    return {};
  }
  DwarfAddress where = Describe(dwarf, fn, entry);
  auto ranges = Ranges(&die);
  Dwarf_Die cu = dwarf.CuOf(&die);
  if (point.line) {
    uint64_t line = where.decl.line + *point.line;
    // Past the function's end, a row in a copy's ranges is its caller's.
    bool past_end = line > LastOwnLine(&cu, where.decl.file, where.decl.line);
    auto hits = past_end ? std::vector<LineHit>() : LineAddresses(&cu, where.decl.file, line, &ranges);
    // Line 0, the declaration, begins at the entry when no row says where.
    if (hits.empty() && *point.line == 0) hits.push_back({entry, line, where.decl.file});
    if (hits.empty()) {
      if (!search.no_code) search.no_code = {name, where.decl.file, line, where.decl.line, past_end, {}};
      for (uint64_t l : OwnCodeLines(&cu, where.decl.file, where.decl.line, ranges)) search.no_code->code.insert(l);
      return {};
    }
    for (const LineHit& hit : hits) out.push_back(AtLine(Describe(dwarf, fn, hit.address), hit));
    return {};
  }
  // FUNC;PATTERN: the function's own lines whose text matches.
  std::vector<std::string> searched;
  auto text = KP_TRY(ReadSource(&cu, where.decl.file, options, &searched));
  for (uint64_t line : OwnCodeLines(&cu, where.decl.file, where.decl.line, ranges)) {
    if (line == 0 || line > text.size() || !LazyMatch(*point.lazy_pattern, text[line - 1])) continue;
    for (const LineHit& hit : LineAddresses(&cu, where.decl.file, line, &ranges))
      out.push_back(AtLine(Describe(dwarf, fn, hit.address), hit));
  }
  return {};
}

Error DwarfInfo::NoAddress(const ProbePoint& point, const FunctionSearch& search) {
  std::string what = DescribePoint(point);
  if (const auto& n = search.no_code) {
    std::string nearest = NearestLines({n->code.begin(), n->code.end()}, n->line, n->base);
    return {"line " + std::to_string(n->line - n->base) + " of " + n->name + " (" + n->file + ":" +
                std::to_string(n->line) + ") " + (n->past_end ? "is past its end" : "has no code") +
                (nearest.empty() ? "" : "; " + nearest),
            "list the lines that have code with 'kprobectl line " + point.function + "'"};
  }
  if (!search.found_any && !search.other_overloads.empty()) {
    CxxName written = SplitCxxName(point.function);
    return {"no overload of '" + written.qualified + "' takes " + written.params + " in " + path_,
            "its overloads take " +
                Join(std::vector<std::string>(search.other_overloads.begin(), search.other_overloads.end()), ", ")};
  }
  if (!search.found_any && !IsGlob(point.function) && InlineOnly(point.function))
    return {"'" + point.function + "' exists only as inlined code in " + path_ +
                ": the compiler folded every call of it into its callers and left no address where one begins",
            "probe the callers, or a line of theirs where it was called ('kprobectl line CALLER')"};
  if (!search.found_any)
    return {"no function '" + point.function + "'" + (point.file.empty() ? "" : " in " + point.file) +
                " in the debuginfo of " + path_,
            "list functions with 'kprobectl funcs'"};
  if (search.skipped_inline)
    return {"'" + what + "': " + point.function + " exists only as inlined copies here, and " +
                (point.retprobe ? "an inlined copy has no return to probe"
                 : point.offset ? "an offset into an inlined copy means nothing"
                                : "--no-inlines leaves them out"),
            point.retprobe ? "probe the lines after the call in its callers, or the call's line"
                           : "probe a line of it (FUNC:LINE), or drop --no-inlines"};
  if (point.lazy_pattern)
    return {"no line of " + point.function + " matches the pattern '" + *point.lazy_pattern + "'",
            "see its lines with 'kprobectl line " + point.function + "'"};
  return {"'" + what + "' has no address in the debuginfo of " + path_, ""};
}

Result<std::vector<DwarfAddress>> DwarfInfo::ResolveFunction(const ProbePoint& point, const FindOptions& options) {
  // C++: the qualified name finds every overload; a parameter list written
  // after it picks those whose demangled linkage name has those types.
  CxxName written = IsCxxName(point.function) ? SplitCxxName(point.function) : CxxName{point.function, {}, {}};
  std::vector<std::string> names;
  // A name that is a function's own is that function, glob characters and
  // all: Go's "main.(*T).M" and "main.Sum[go.shape.int_0]".
  if (IsGlob(written.qualified) && written.qualified.find("operator") == std::string::npos &&
      Instances(written.qualified).instances.empty()) {
    for (const std::string& name : FunctionNames())
      if (GlobMatch(written.qualified, name)) names.push_back(name);
    std::sort(names.begin(), names.end());
  } else {
    names.push_back(written.qualified);
  }
  std::vector<DwarfAddress> out;
  FunctionSearch search;
  for (const std::string& name : names) {
    auto [dwarf, instances] = Instances(name);
    for (const FunctionInstance& fn : instances) {
      if (!FileMatches(*this, dwarf, fn, point.file)) continue;
      if (!written.params.empty()) {
        std::string params = ParamsOf(dwarf, fn);
        if (!ParamsMatch(written.params, params)) {
          search.other_overloads.insert(params);
          continue;
        }
      }
      search.found_any = true;
      if (fn.inlined && (!options.inlines || point.retprobe || point.offset)) {
        search.skipped_inline = true;
        continue;
      }
      KP_TRY_VOID(ResolveInstance(dwarf, fn, name, point, options, search, out));
    }
  }
  if (out.empty()) return std::unexpected(NoAddress(point, search));
  std::sort(out.begin(), out.end(), [](const DwarfAddress& a, const DwarfAddress& b) { return a.address < b.address; });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const DwarfAddress& a, const DwarfAddress& b) { return a.address == b.address; }),
            out.end());
  return out;
}

// The function a line of `file` at `address` belongs to: the innermost
// scope that is a function declared in that file (a call's line can start
// the code of the function inlined there, declared elsewhere), else the
// innermost function. (ScopeChain, not dwarf_getscopes: past an inlined
// copy libdw's scopes go on with its abstract definition, not its caller.)
std::optional<FunctionInstance> DwarfInfo::FunctionOfLine(Dwarf_Die* cu, const std::string& file, uint64_t address) {
  const std::vector<Dwarf_Die>& scopes = ScopeChain(cu, address);
  std::optional<size_t> chosen;
  for (size_t i = 0; i < scopes.size(); ++i) {
    Dwarf_Die scope = scopes[i];
    int tag = dwarf_tag(&scope);
    if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine) continue;
    if (!chosen) chosen = i;
    const char* decl = DeclFile(&scope);
    if (decl && file == decl) {
      chosen = i;
      break;
    }
  }
  if (!chosen) return std::nullopt;
  Dwarf_Die scope = scopes[*chosen];
  return FunctionInstance{OffsetOf(&scope), dwarf_tag(&scope) == DW_TAG_inlined_subroutine};
}

Result<std::vector<DwarfAddress>> DwarfInfo::ResolveSourceLine(const ProbePoint& point, const FindOptions& options) {
  std::vector<DwarfAddress> out;
  std::set<uint64_t> seen;
  bool file_found = false;
  std::vector<uint64_t> code_lines;
  std::string matched_file;
  std::vector<Dwarf_Off> units = UnitsWithFile(point.file);
  ReadyDwarf dwarf = Ready();
  for (Dwarf_Off cu_offset : units) {
    Dwarf_Die cu = dwarf.Die(cu_offset);
    std::set<std::string> matches;
    for (const std::string& name : SourceFiles(&cu))
      if (PathMatches(name, point.file)) matches.insert(name);
    for (const std::string& file : matches) {
      file_found = true;
      matched_file = file;
      std::vector<uint64_t> lines;
      if (point.line) {
        lines.push_back(*point.line);
      } else {
        std::vector<std::string> searched;
        auto text = KP_TRY(ReadSource(&cu, file, options, &searched));
        for (uint64_t l : CodeLines(&cu, file, nullptr))
          if (l > 0 && l <= text.size() && LazyMatch(*point.lazy_pattern, text[l - 1])) lines.push_back(l);
      }
      for (uint64_t line : lines) {
        for (const LineHit& hit : LineAddresses(&cu, file, line, nullptr)) {
          if (!seen.insert(hit.address).second) continue;
          auto fn = FunctionOfLine(&cu, file, hit.address);
          if (fn && (!fn->inlined || options.inlines)) out.push_back(AtLine(Describe(dwarf, *fn, hit.address), hit));
        }
      }
      auto more = CodeLines(&cu, file, nullptr);
      code_lines.insert(code_lines.end(), more.begin(), more.end());
    }
  }
  if (!out.empty()) {
    std::sort(out.begin(), out.end(),
              [](const DwarfAddress& a, const DwarfAddress& b) { return a.address < b.address; });
    return out;
  }
  if (!file_found)
    return Fail("no source file matching '" + point.file + "' in the debuginfo of " + path_,
                "give the path as the build recorded it, or a suffix of it (e.g. fs/open.c)");
  if (point.lazy_pattern)
    return Fail("no line of " + matched_file + " matches the pattern '" + *point.lazy_pattern + "'",
                "see the file's lines with 'kprobectl line " + point.file + "'");
  std::string nearest = NearestLines(code_lines, *point.line, 0);
  return Fail(
      matched_file + ":" + std::to_string(*point.line) + " has no code" + (nearest.empty() ? "" : "; " + nearest),
      "list the lines that have code with 'kprobectl line " + point.file + ":" +
          std::to_string(*point.line > 5 ? *point.line - 5 : 1) + "'");
}

}  // namespace kprobectl::dwarf
