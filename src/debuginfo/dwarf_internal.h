// SPDX-License-Identifier: GPL-2.0-or-later
//
// Shared by the files of the debuginfo stage, the only ones that see libdw.
// DwarfInfo implements Debuginfo over one Dwarf handle (libdw 0.188 is not
// thread-safe on a shared handle: the threads that build the index each
// get their own).
#pragma once

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "dwarf_units.h"
#include "index_file.h"
#include "kprobectl/debuginfo.h"

namespace kprobectl::dwarf {

// The one place that turns libdw's errors into messages.
std::string LastError();

std::string DieName(Dwarf_Die* die);  // follows abstract_origin/specification
// DW_AT_linkage_name (or gcc's older DW_AT_MIPS_linkage_name), followed
// through abstract_origin/specification; empty for C.
std::string LinkageName(Dwarf_Die* die);
// The name a function goes by: C++'s qualified one ("shop::Cart::add"),
// else DieName.
std::string FunctionName(Dwarf_Die* die);
// The innermost subprogram of a CU whose code holds `address`, by a walk
// of every DIE: libdw's scopes, and a look at the CU's own children, miss
// one defined inside another's scope but placed outside its code (a C++
// lambda's operator() inside main, a function inside a namespace).
std::optional<Dwarf_Die> NestedFunctionAt(Dwarf_Die* cu, uint64_t address);
// Whether a CU names its functions in scopes, C++'s or Rust's (DW_AT_language):
// they are found by qualified and linkage names, their scopes bound lines.
bool HasScopedNames(Dwarf_Die* cu);
bool TypeOf(Dwarf_Die* die, Dwarf_Die* type);  // DW_AT_type, integrated
// A location attribute (DW_AT_location, DW_AT_frame_base) of `die` in
// `out`, as libdw's location calls take it; null when it has none. Go
// writes a single expression as DW_FORM_block1 in DWARF 4 units, where the
// standard has DW_FORM_exprloc and libdw 0.188 refuses any block ("not a
// location list value"): a block1 under 128 bytes is an exprloc byte for
// byte (its one-byte length a ULEB128), and is given as one.
Dwarf_Attribute* LocationAttr(Dwarf_Die* die, unsigned name, Dwarf_Attribute* out);
// C spelling of a type: "int", "struct req*", "const char*", "void*".
std::string TypeName(Dwarf_Die* type);
// Peels typedef, const, volatile, restrict and atomic.
Dwarf_Die PeelType(Dwarf_Die type);

struct AddressRange {
  uint64_t start, end;  // [start, end)
};
std::vector<AddressRange> Ranges(Dwarf_Die* die);
// Where a function instance's code starts. DW_AT_entry_pc of an inlined
// copy can name an address where none of its code is (gcc gives such copies
// an empty first range): then the start of its first non-empty range.
bool EntryAddress(Dwarf_Die* die, uint64_t* address);

bool PathMatches(std::string_view full, std::string_view suffix);

// One piece of code: an out-of-line function or an inlined copy.
struct FunctionInstance {
  Dwarf_Off die;
  bool inlined;
  bool abstract = false;  // an inline's abstract definition: no code (see kAbstractFlag)
};
// A C++ instance's parameter list, from its demangled linkage name ("" for C).
std::string ParamsOf(const ReadyDwarf& dwarf, const FunctionInstance& fn);

// Where functions and globals are found by name: a cache file, an index
// built now, or (without a cache) a scan for one name (dwarf_index.cc,
// dwarf_scan.cc). Lists are sorted by DIE offset.
class NameIndex {
 public:
  virtual ~NameIndex() = default;
  // The instances of `name`; with `max_units`, only those in the first that
  // many CUs (in file order) that hold any.
  virtual std::vector<FunctionInstance> Functions(const std::string& name, size_t max_units = SIZE_MAX) = 0;
  // `name` is an inline function of which no code is left (every call of
  // it was folded into its callers without a trace of where it begins).
  virtual bool InlineOnly(const std::string& /*name*/) { return false; }
  virtual std::vector<Dwarf_Off> Globals(const std::string& name) = 0;
  virtual std::vector<std::string> FunctionNames() = 0;
  virtual std::vector<Dwarf_Off> Units() = 0;  // each CU's DIE
  // The CUs whose line tables name a file called `basename` (all CUs
  // unless the index knows).
  virtual std::vector<Dwarf_Off> UnitsWithFile(std::string_view /*basename*/) { return Units(); }
  virtual bool KnowsFiles() const { return false; }
  // The .debug_frame offset of the FDE for `address`, when the index has it.
  virtual std::optional<uint64_t> FrameFor(uint64_t) { return std::nullopt; }
};

// What one CU holds, in DIE order (function postings carry kInlinedFlag).
struct UnitNames {
  std::vector<std::pair<std::string, uint64_t>> functions, globals;
  std::vector<std::string> files;  // the basenames of its line table's files (full walks only)
};
// The sections a line program's header reads from (line_files.cc).
struct LineSections {
  std::span<const unsigned char> line, line_str, str;
};
// A line program's unit at `offset` of .debug_line: its version, offset
// size, (DWARF 5) address and segment selector sizes, and where its
// header's fields (past header_length), its program and its end are.
struct LineProgramUnit {
  unsigned version = 0, offset_size = 0, address_size = 0, segment_selector_size = 0;
  const unsigned char *fields = nullptr, *program = nullptr, *end = nullptr;
};
Result<LineProgramUnit> ReadLineProgramUnit(std::span<const unsigned char> line, uint64_t offset);
// The basenames of the files the line program at `offset` lists, sorted.
Result<std::vector<std::string>> LineProgramFiles(const LineSections& sections, uint64_t offset);
// The files of the line program at `offset` as libdw 0.188 names them, by
// DW_AT_decl_file's index (joined with their directories; before DWARF 5,
// with `comp_dir` for directory 0, and file 0 libdw's "???").
Result<std::vector<std::string>> LineProgramPaths(const LineSections& sections, uint64_t offset, const char* comp_dir);
// A CU's line table as libdw 0.188 gives it (line_table.cc): its rows
// sorted as dwarf_getsrclines sorts them, its files named as dwarf_linesrc
// names them; an error where the reader stops short of libdw (the caller
// asks libdw then).
struct LineTable {
  // 16 bytes: a CU's table is tens of thousands of rows, each page of
  // them a page fault.
  struct Row {
    uint64_t address;
    int32_t line;
    uint32_t file : 30;  // an index into `files`; kNoFile for none
    bool stmt : 1, end_sequence : 1;
  };
  static constexpr uint32_t kNoFile = (1u << 30) - 1;
  static_assert(sizeof(Row) == 16);
  std::vector<Row> rows;
  // By index, as dwarf_filesrc names them when `own` (read by
  // ReadLineTable); libdw's rows' files alone else.
  std::vector<std::string> files;
  bool own = false;
  // The row dwarf_getsrc_die gives for `address`: the last at or before
  // it, unless that ends a sequence; null else.
  const Row* At(uint64_t address) const;
  // Its file's name, as dwarf_linesrc gives it (null out of range).
  const char* File(const Row& row) const;
};
Result<LineTable> ReadLineTable(const LineSections& sections, uint64_t offset, const char* comp_dir,
                                unsigned address_size);
// Those basenames for a CU: from its header when `lines` is given and can
// be read, else through libdw.
std::vector<std::string> UnitFiles(Dwarf_Die* cu, const LineSections* lines);

// Walks the CU whose DIE is at `cu_offset`; with `only`, records that name
// only (and no files).
void WalkUnit(Dwarf* dwarf, Dwarf_Off cu_offset, const std::string* only, UnitNames* out,
              const LineSections* lines = nullptr);
// Walks `units` on one thread per handle; `progress` (done, total) is
// called from the calling thread, and so is `done_below` (a DIE offset in
// .debug_info below which no thread will read again).
IndexContents WalkUnits(const std::vector<Dwarf*>& handles, const std::vector<Dwarf_Off>& units,
                        const std::function<void(size_t, size_t)>& progress, const LineSections* lines,
                        const std::function<void(Dwarf_Off)>& done_below = nullptr);
std::vector<FunctionInstance> ToInstances(const std::vector<uint64_t>& postings);
std::vector<FunctionInstance> WithCode(std::vector<FunctionInstance> instances);
bool AllAbstract(const std::vector<FunctionInstance>& instances);
// Those of `instances` (sorted by offset) in their first `max_units` CUs;
// `units` are the CU DIEs' offsets, sorted.
std::vector<FunctionInstance> InFirstUnits(std::vector<FunctionInstance> instances, const std::vector<Dwarf_Off>& units,
                                           size_t max_units);
// `rebuild`: the index to use when a block of the view's file fails its
// check (a view this run serialized cannot fail: none then).
std::unique_ptr<NameIndex> MakeViewIndex(std::unique_ptr<IndexView> view,
                                         std::function<std::unique_ptr<NameIndex>()> rebuild = nullptr);

// .debug_frame's FDEs, for the index (dwarf_frames.cc).
std::vector<FrameEntry> ReadFrameTable(Elf* elf);
// libdw's CFI over one FDE and its CIE, copied out of `elf`'s .debug_frame.
struct MiniCfi {
  std::vector<uint64_t> image;  // the ELF image libelf reads (8-aligned)
  Elf* elf = nullptr;
  Dwarf* dwarf = nullptr;
  Dwarf_CFI* cfi = nullptr;
  MiniCfi() = default;
  MiniCfi(const MiniCfi&) = delete;
  MiniCfi& operator=(const MiniCfi&) = delete;
  ~MiniCfi();
};
std::unique_ptr<MiniCfi> MakeMiniCfi(Elf* elf, uint64_t fde_offset);

// A section's bytes in the file.
struct RawSection {
  uint64_t offset = 0, size = 0;
};
struct ScanInput {
  const ReadyDwarf* dwarf = nullptr;  // the handle, for walking the units a scan finds
  int fd = -1;
  RawSection info, str;
  std::vector<UnitSpan> units;                            // in file order
  std::function<std::unique_ptr<NameIndex>()> full_walk;  // for what a scan cannot answer
};
// libelf, for this stage (dwarf_elf.cc).
Elf* OpenElf(void* map, size_t size);  // null on failure: ElfError() says why
void CloseElf(Elf* elf);
std::string ElfError();
struct SectionInfo {
  RawSection raw;
  bool compressed = false;
};
// A section with bytes in the file, if there is one.
std::optional<SectionInfo> FindSection(Elf* elf, std::string_view name);
// A section's place in the file, unless it is absent, empty or compressed.
std::optional<RawSection> FindRawSection(Elf* elf, std::string_view name);
// A section's bytes as libelf hands them to libdw (dwarf_next_cfi), if it has any.
Elf_Data* SectionData(Elf* elf, std::string_view name);
// Where an ELF64 file's section header of `name` is, in the file.
std::optional<uint64_t> SectionHeaderOffset(Elf* elf, std::string_view name);
// Where the section header table is, in the file.
std::optional<RawSection> SectionHeaderTable(Elf* elf);
const unsigned char* ElfIdent(Elf* elf);
bool IsRelocatable(Elf* elf);  // ET_REL (or unreadable)
class DwarfInfo;
class UnitWindows;
std::unique_ptr<NameIndex> MakeScanIndex(ScanInput input);
// False when a form in .debug_abbrev could name a DIE from outside its CU
// or .debug_str, which the scan would miss.
Result<bool> AbbrevsAllowScan(int fd, const RawSection& abbrev);

class DwarfInfo : public Debuginfo {
 public:
  // Over `elf`, an ELF image at `map` (a read-only mapping of the file
  // open as `fd`, which this object unmaps and closes).
  DwarfInfo(std::string path, int fd, void* map, size_t map_size, Elf* elf, Dwarf* dwarf, IndexOptions options);
  // Over a module's relocated DWARF, which `dwfl` owns; `memory` is the
  // decompressed module libdwfl reads from (it does not free it), or null.
  DwarfInfo(std::string path, Dwfl* dwfl, Dwarf* dwarf, char* memory);
  ~DwarfInfo() override;
  DwarfInfo(const DwarfInfo&) = delete;
  DwarfInfo& operator=(const DwarfInfo&) = delete;

  const std::string& path() const override { return path_; }
  IndexStatus index_status() override {
    (void)Ready();
    return status_;
  }
  Result<std::vector<DwarfAddress>> Resolve(const ProbePoint& point, const FindOptions& options) override;
  Result<DwarfAddress> AtAddress(uint64_t address) override;
  Result<DwarfAddress> BeginningAt(uint64_t address) override;
  DwarfAddress AfterPrologue(const DwarfAddress& at) override;
  Result<VariableFetch> Fetch(const DwarfAddress& at, const ArgExpr& expr, bool want_string) override;
  Result<std::vector<VariableFetch>> FetchAll(const DwarfAddress& at, bool params_only,
                                              std::vector<std::string>* skipped) override;
  Result<std::string> TypeNameOf(const DwarfAddress& at, const ArgExpr& expr) override;
  Result<std::optional<FetchType>> ReturnType(const DwarfAddress& at) override;
  Result<std::vector<GoValue>> GoValues(const DwarfAddress& at) override;
  Language LanguageAt(const DwarfAddress& at) override;
  Result<std::vector<Visible>> VisibleAt(const DwarfAddress& at, bool params_only) override;
  Result<std::vector<VariableInfo>> Variables(const DwarfAddress& at, bool externs) override;
  Result<SourceListing> Listing(const LineRange& range, const FindOptions& options) override;

  // Shared by the implementation files. Every use of the Dwarf handle goes
  // through a ReadyDwarf (dwarf_units.h): Ready() waits for every unit;
  // the look-ups by name wait only for the units their answer is in.
  ReadyDwarf Ready();
  struct Found {
    ReadyDwarf dwarf;
    std::vector<FunctionInstance> instances;
  };
  Found Instances(const std::string& name, size_t max_units = SIZE_MAX);
  std::vector<std::string> FunctionNames() { return Index().FunctionNames(); }
  bool InlineOnly(const std::string& name) { return Index().InlineOnly(name); }
  std::vector<Dwarf_Off> Globals(const std::string& name);
  std::vector<Dwarf_Off> Units();
  // The CUs that can hold a source file given as a path or a suffix of one.
  std::vector<Dwarf_Off> UnitsWithFile(std::string_view path);
  DwarfAddress Describe(const ReadyDwarf& dwarf, const FunctionInstance& fn, uint64_t address);
  // dwarf_decl_file's answer, from the line program's header alone where it
  // can be read (libdw decodes and sorts the CU's whole line table for it:
  // a third of a warm look-up): null when there is none.
  const char* DeclFile(Dwarf_Die* die);
  // The line at `address` (out.at) and whether a row starts there.
  void LineAt(Dwarf_Die* cu, uint64_t address, DwarfAddress& out);
  // The CU's line table: read by ReadLineTable where it can be, else
  // libdw's rows (the same rows either way, tests compare them). Valid
  // until Lines is asked for kLineTables other CUs.
  const LineTable& Lines(Dwarf_Die* cu);
  static constexpr size_t kLineTables = 8;
  // The files of the CU's line program, as dwarf_getsrcfiles names them.
  std::vector<std::string> SourceFiles(Dwarf_Die* cu);
  // `at` with its line where Describe left it out (an entry), for messages.
  DwarfAddress WithLine(const DwarfAddress& at);
  // A DIE's .debug_info offset, whichever handle read it (ReadyDwarf::Offset).
  Dwarf_Off OffsetOf(Dwarf_Die* die) const;

  // Lines (dwarf_lines.cc).
  struct LineHit {
    uint64_t address;
    uint64_t line;
    std::string file;
  };
  // First addresses of each block of is_stmt rows for `line` of `file` in
  // the CU, limited to `ranges` when given.
  std::vector<LineHit> LineAddresses(Dwarf_Die* cu, std::string_view file, uint64_t line,
                                     const std::vector<AddressRange>* ranges);
  // Lines of `file` that have code, within `ranges` when given.
  std::vector<uint64_t> CodeLines(Dwarf_Die* cu, std::string_view file, const std::vector<AddressRange>* ranges);
  // The last line the source of a function declared at `decl_line` of
  // `file` can have (see dwarf_lines.cc); UINT64_MAX when nothing follows it.
  uint64_t LastOwnLine(Dwarf_Die* cu, const std::string& file, uint64_t decl_line);
  // CodeLines of a function instance within its `ranges`, without the
  // lines past its end: an inlined copy's ranges hold its callers' rows too.
  std::vector<uint64_t> OwnCodeLines(Dwarf_Die* cu, const std::string& file, uint64_t decl_line,
                                     const std::vector<AddressRange>& ranges);
  // What a listing shows: a function's lines or a file's, from one CU.
  struct ListingScope {
    Dwarf_Die cu;
    std::string path, header;
    uint64_t base = 0, first = 0, last = 0;  // lines: numbered from `base`, shown from first to last
    std::set<uint64_t> code;                 // lines with code
  };
  Result<ListingScope> FunctionScope(const LineRange& range);
  Result<ListingScope> FileScope(const LineRange& range);
  Result<std::vector<std::string>> ReadSource(Dwarf_Die* cu, const std::string& file, const FindOptions& options,
                                              std::vector<std::string>* searched);

  // The scopes that hold `address`, innermost first, then the CU; kept per
  // address (dwarf_vars.cc).
  const std::vector<Dwarf_Die>& ScopeChain(Dwarf_Die* cu, uint64_t address);
  // A global's definition by name, from any CU.
  std::optional<Dwarf_Die> Global(const std::string& name);

  // Fetch, with the hint that says where else the variable has a location
  // only when `explain` (it reads the function's line table).
  Result<VariableFetch> FetchVariable(const DwarfAddress& at, const ArgExpr& expr, bool want_string, bool explain);

  // The CFA at `address`, as a register and an offset (dwarf_location.cc).
  Result<std::pair<unsigned, int64_t>> CanonicalFrameAddress(uint64_t address);

 private:
  // The cache file is checked on the caller's thread, once, before the
  // first look-up (Settle): with a valid cache, a name's look-up needs no
  // DWARF, and ReadyFor() lets the unit reader stop after the last unit
  // the answer lies in.
  void Settle();
  ReadyDwarf ReadyFor(Dwarf_Off last_die);
  void CheckCache();
  bool CacheWritable();
  // Drops our view of .debug_info's pages in [begin, end) (offsets in the
  // section): what a walk through every CU leaves resident.
  void ReleaseInfo(uint64_t begin, uint64_t end);
  NameIndex& Index();
  std::unique_ptr<NameIndex> ChooseIndex();
  // The index built from the DWARF and written to the cache.
  std::unique_ptr<NameIndex> BuildIndex();
  IndexContents WalkAll();
  std::optional<ScanInput> ScanInputs();
  Result<std::vector<DwarfAddress>> ResolveFunction(const ProbePoint& point, const FindOptions& options);
  struct FunctionSearch;
  // One instance's addresses for FUNC, FUNC+OFF, FUNC:RLN or FUNC;PTN.
  Result<void> ResolveInstance(const ReadyDwarf& dwarf, const FunctionInstance& fn, const std::string& name,
                               const ProbePoint& point, const FindOptions& options, FunctionSearch& search,
                               std::vector<DwarfAddress>& out);
  // Why a look-up found no address, as precisely as the search can say.
  Error NoAddress(const ProbePoint& point, const FunctionSearch& search);
  Result<std::vector<DwarfAddress>> ResolveSourceLine(const ProbePoint& point, const FindOptions& options);
  std::optional<FunctionInstance> FunctionOfLine(Dwarf_Die* cu, const std::string& file, uint64_t address);

  std::string path_;
  int fd_ = -1;
  void* map_ = nullptr;
  size_t map_size_ = 0;
  Elf* elf_ = nullptr;
  IndexOptions options_;
  IndexKey key_;
  IndexStatus status_;
  std::unique_ptr<NameIndex> index_;
  std::unique_ptr<IndexView> cached_;                    // the valid cache file CheckCache() found
  std::map<uint64_t, std::unique_ptr<MiniCfi>> frames_;  // by FDE offset
  std::map<std::pair<const Dwarf*, uint64_t>, std::vector<Dwarf_Die>> scope_chains_;  // by handle, address
  std::map<std::tuple<Dwarf_Off, std::string, uint64_t>, uint64_t> last_own_lines_;   // by CU, file, declaration
  bool settled_ = false;
  std::optional<RawSection> info_section_;     // .debug_info in the file
  std::optional<LineSections> line_sections_;  // for file names without libdw's line tables
  std::map<uint64_t, std::optional<std::vector<std::string>>> decl_files_;  // LineProgramPaths by offset
  // Lines, the last few CUs' (by their offset): a walk over many CUs keeps
  // no more than these, as libdw's went with the windows it closed.
  std::deque<std::pair<uint64_t, LineTable>> line_tables_;
  std::unique_ptr<UnitWindows> windows_;  // with a valid cache file (Settle)
  UnitReader units_;                      // declared after what its thread's release callback uses
  std::optional<ReadyDwarf> ready_;       // the scan's permission, held while it lives
  Dwfl* dwfl_ = nullptr;
  char* memory_ = nullptr;
  Dwarf_CFI* cfi_debug_ = nullptr;  // .debug_frame
  Dwarf_CFI* cfi_eh_ = nullptr;     // .eh_frame
};

}  // namespace kprobectl::dwarf
