// SPDX-License-Identifier: GPL-2.0-or-later
//
// The debuginfo stage: DWARF (through elfutils libdw, which stays in
// src/debuginfo) turned into plain data. In: an ELF file with DWARF, a probe
// point, variable expressions. Out: probe addresses with their source
// positions, variables as arch-neutral fetch paths (DWARF register numbers,
// offsets, types), source listings and variable listings.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kprobectl/arch.h"
#include "kprobectl/elf_image.h"
#include "kprobectl/line_range.h"
#include "kprobectl/probe_spec.h"
#include "kprobectl/result.h"
#include "kprobectl/variable_fetch.h"

namespace kprobectl {

struct SourceLine {
  std::string file;  // as the line table records it (absolute when it can be made so)
  uint64_t line = 0;
};

// A value whose place at an address Go's ABI gives rather than the
// DWARF: a Go function's result at one of its return instructions, where
// Go's DWARF (1.19) gives results no location (resolve/go_returns.cc).
struct AbiValue {
  std::string name;            // the DWARF's name of it: "err", "~r0"
  GoAbiPlace place;            // its registers, or its offset from the stack pointer
  unsigned stack_pointer = 0;  // the stack pointer's DWARF number
  std::string unplaceable;     // why its place is unknown (then `place` is not), said when it is fetched
  bool result = false;         // a result at a return instruction, else an argument at the entry
};

// One address a probe point resolved to.
struct DwarfAddress {
  uint64_t address = 0;
  std::string function;     // the function whose code this is; an inlined function's own name
  SourceLine decl;          // where `function` is declared
  SourceLine at;            // the source line at `address`; none at an entry with a declared file
  bool entry = false;       // the first instruction of `function`: arguments are where the ABI says
  bool inlined = false;     // a copy of `function` inlined into another
  bool line_start = false;  // a line-table row (is_stmt) starts at `address` (not looked for where `at` is not)
  uint64_t die_offset = 0;  // the function instance's DIE (for variable look-ups)
  // A return instruction of a Go function: its results are where
  // `results` says, whatever the DWARF's location lists say; $retval is the first.
  bool go_return = false;
  std::vector<AbiValue> results;
  // The first instruction of a Go function, its parameters where Go's ABI
  // puts them (`params`, the receiver first), whatever the DWARF's location
  // lists say: Go's own can be wrong there (a slice's four pieces for
  // three words, a struct's pieces without its padding).
  bool go_entry = false;
  std::vector<AbiValue> params;
};

// A Go function's receiver, argument or result, with its type as Go's ABI
// assigns it.
struct GoValue {
  std::string name;
  bool result = false;  // DW_AT_variable_parameter
  GoAbiType type;
  std::string unplaceable;  // why its type cannot be placed by Go's ABI (then `type` is not set)
};

struct VariableInfo {
  std::string name;
  std::string c_type;
  std::string underlying_type;  // c_type past its typedefs and qualifiers (Go's ".param0" is a string)
  bool parameter = false;
  bool external = false;                              // a global (--externs)
  bool available = false;                             // has a location at the address asked about
  std::vector<std::pair<uint64_t, uint64_t>> ranges;  // where it has a location, [start, end)
  // A struct split over several places there (DW_OP_piece): the members
  // that lie in one, which can be fetched ("optval.user"), and the others.
  bool in_pieces = false;
  std::vector<std::string> piece_members;
  std::vector<std::string> pieces_refused;
};

struct FindOptions {
  bool inlines = true;                   // probe inlined copies too
  std::vector<std::string> source_dirs;  // -s DIR, for ;PATTERN and listings
};

struct SourceListing {
  std::string header;  // "<FUNC@PATH:0>" or "<PATH:1>"
  std::string path;    // the source file shown
  bool have_source = false;
  std::vector<std::string> searched;  // where the text was looked for, when not found
  struct Line {
    uint64_t number;  // absolute
    int64_t shown;    // the number printed (relative for functions)
    bool probeable;
    std::string text;
  };
  std::vector<Line> lines;
};

// How names are looked up. With a cache directory, the first look-up reads
// the file's persistent index there (<build-id>.idx), or builds and writes
// it. Without one, each name is found by a scan for it (cold, but without
// reading every DIE).
struct IndexOptions {
  std::string cache_dir;  // empty: no persistent index (--no-cache)
  // Called while an index is built: CUs done, CUs in all. From the thread
  // that called the look-up.
  std::function<void(size_t, size_t)> progress;
  // With a valid cache file, each CU read through a libdw handle of its
  // own (a window) rather than after every CU before it; false: the whole
  // file's handle only (tests compare the two).
  bool unit_windows = true;
};

struct IndexStatus {
  enum Use {
    kUnused,      // no name looked up yet
    kScan,        // names found by scanning for them
    kWalk,        // every DIE walked, kept in memory
    kCacheRead,   // the cache file was valid
    kCacheBuilt,  // built and written to the cache
  } use = kUnused;
  std::string file;     // the cache file, when there is one
  std::string problem;  // why the cache file was rebuilt, or not written
};

class Debuginfo {
 public:
  // Opens an ELF file that carries DWARF (.debug_info).
  static Result<std::unique_ptr<Debuginfo>> Open(const std::string& path, const IndexOptions& options = {});

  // A kernel module (.ko, .ko.xz, .ko.zst): relocatable, so its sections
  // get addresses first (libdwfl lays them out); `symbols` receives its
  // symbols at those addresses. The DWARF may be missing (a stripped .ko):
  // then the result is null and `symbols` still filled.
  struct Module {
    std::unique_ptr<Debuginfo> debuginfo;
    std::vector<ElfSymbol> symbols;
    std::string dwarf_error;
    uint16_t machine = 0;  // its ELF header's e_machine
    bool elf64 = false;
    std::string build_id;  // its GNU build-id (hex); empty if none
    std::string btf;       // its .BTF section: split BTF over its kernel's; empty if none
    std::string modinfo;   // its .modinfo section ("key=value" strings, each ended by a NUL); empty if none
  };
  static Result<Module> OpenModule(const std::string& path);
  virtual ~Debuginfo() = default;

  virtual const std::string& path() const = 0;
  virtual IndexStatus index_status() = 0;

  // Every address of a probe point that needs or can use DWARF: FUNC (all
  // static duplicates, inlined copies, clones), FUNC@FILE, FUNC:RLN,
  // SRC:ALN, FUNC;PTN, SRC;PTN, FUNC+OFF.
  virtual Result<std::vector<DwarfAddress>> Resolve(const ProbePoint& point, const FindOptions& options) = 0;

  // Code built without optimization keeps variables in stack slots that its
  // prologue fills: at the entry they hold garbage. For such a function's
  // entry this returns the first address after the prologue (as perf
  // does); anything else comes back unchanged.
  virtual DwarfAddress AfterPrologue(const DwarfAddress& at) = 0;

  // The function (or inlined copy) whose code holds `address`.
  virtual Result<DwarfAddress> AtAddress(uint64_t address) = 0;
  // The function or inlined copy a probe at `address` is on: of those that
  // begin there, the outermost (the call made at that instruction, whose
  // own first statements may be copies too: Linux 5.10's inode_permission
  // inlined at vfs_tmpfile+27, sb_rdonly inlined at the start of that copy,
  // is inode_permission); where none begins there, AtAddress's.
  virtual Result<DwarfAddress> BeginningAt(uint64_t address) = 0;

  // A variable expression (var->member.field[N]) at an address.
  virtual Result<VariableFetch> Fetch(const DwarfAddress& at, const ArgExpr& expr, bool want_string) = 0;
  // $vars / $params: every variable with a location there; the names of
  // those without one go to `skipped`.
  virtual Result<std::vector<VariableFetch>> FetchAll(const DwarfAddress& at, bool params_only,
                                                      std::vector<std::string>* skipped) = 0;
  // The variables FetchAll considers, in its order, each with the name of
  // its type past typedefs (as TypeNameOf gives it), fetchable or not.
  struct Visible {
    std::string name, type;
  };
  virtual Result<std::vector<Visible>> VisibleAt(const DwarfAddress& at, bool params_only) = 0;
  // The type a variable expression leads to, past typedefs, as the
  // debuginfo names it ("string", "&str", "[]uint8"), for the language's
  // counted strings.
  virtual Result<std::string> TypeNameOf(const DwarfAddress& at, const ArgExpr& expr) = 0;
  // The language of the unit that holds `at` (its DW_AT_language), as far
  // as kprobectl treats languages apart: Go's and Rust's strings are counted.
  enum class Language { kOther, kGo, kRust };
  virtual Language LanguageAt(const DwarfAddress& at) = 0;
  // The receiver, arguments and results of the Go function at `at`, in
  // the DWARF's order (Go's: receiver, arguments, results).
  virtual Result<std::vector<GoValue>> GoValues(const DwarfAddress& at) = 0;
  // The fetch type for $retval of the function at `at`, if it has one.
  // An error when it returns a floating-point value, which is in a
  // floating-point register, not the one $retval reads.
  virtual Result<std::optional<FetchType>> ReturnType(const DwarfAddress& at) = 0;

  virtual Result<std::vector<VariableInfo>> Variables(const DwarfAddress& at, bool externs) = 0;
  virtual Result<SourceListing> Listing(const LineRange& range, const FindOptions& options) = 0;
};

}  // namespace kprobectl
