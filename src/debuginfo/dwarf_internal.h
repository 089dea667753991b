// SPDX-License-Identifier: GPL-2.0-or-later
//
// Shared by the files of the debuginfo stage, the only ones that see libdw.
// DwarfInfo implements Debuginfo over one Dwarf handle (libdw 0.188 is not
// thread-safe on a shared handle, and nothing here needs threads yet).
#pragma once

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "kprobectl/debuginfo.h"

namespace kprobectl::dwarf {

// The one place that turns libdw's errors into messages.
std::string LastError();

std::string DieName(Dwarf_Die* die);  // follows abstract_origin/specification
bool TypeOf(Dwarf_Die* die, Dwarf_Die* type);  // DW_AT_type, integrated
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
};

class DwarfInfo : public Debuginfo {
 public:
  DwarfInfo(std::string path, int fd, Dwarf* dwarf);
  // Over a module's relocated DWARF, which `dwfl` owns; `memory` is the
  // decompressed module libdwfl reads from (it does not free it), or null.
  DwarfInfo(std::string path, Dwfl* dwfl, Dwarf* dwarf, char* memory);
  ~DwarfInfo() override;
  DwarfInfo(const DwarfInfo&) = delete;
  DwarfInfo& operator=(const DwarfInfo&) = delete;

  const std::string& path() const override { return path_; }
  Result<std::vector<DwarfAddress>> Resolve(const ProbePoint& point, const FindOptions& options) override;
  Result<DwarfAddress> AtAddress(uint64_t address) override;
  DwarfAddress AfterPrologue(const DwarfAddress& at) override;
  Result<VariableFetch> Fetch(const DwarfAddress& at, const ArgExpr& expr, bool want_string) override;
  Result<std::vector<VariableFetch>> FetchAll(const DwarfAddress& at, bool params_only,
                                              std::vector<std::string>* skipped) override;
  std::string ReturnType(const DwarfAddress& at) override;
  Result<std::vector<VariableInfo>> Variables(const DwarfAddress& at, bool externs) override;
  Result<SourceListing> Listing(const LineRange& range, const FindOptions& options) override;

  // Shared by the implementation files.
  Dwarf* dwarf() const { return dwarf_; }
  Dwarf_Die Die(Dwarf_Off offset) const;
  Dwarf_Die CuOf(Dwarf_Die* die) const;
  const std::vector<FunctionInstance>* Instances(const std::string& name);
  std::vector<std::string> FunctionNames();
  const std::vector<Dwarf_Off>* Globals(const std::string& name);
  DwarfAddress Describe(const FunctionInstance& fn, uint64_t address);

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
  Result<std::vector<std::string>> ReadSource(Dwarf_Die* cu, const std::string& file,
                                              const FindOptions& options, std::vector<std::string>* searched);

  // The CFA at `address`, as a register and an offset (dwarf_location.cc).
  Result<std::pair<unsigned, int64_t>> CanonicalFrameAddress(uint64_t address);

 private:
  void BuildIndex();
  Result<std::vector<DwarfAddress>> ResolveFunction(const ProbePoint& point, const FindOptions& options);
  Result<std::vector<DwarfAddress>> ResolveSourceLine(const ProbePoint& point, const FindOptions& options);

  std::string path_;
  int fd_ = -1;
  Dwarf* dwarf_;
  Dwfl* dwfl_ = nullptr;
  char* memory_ = nullptr;
  Dwarf_CFI* cfi_debug_ = nullptr;  // .debug_frame
  Dwarf_CFI* cfi_eh_ = nullptr;     // .eh_frame
  bool indexed_ = false;
  std::unordered_map<std::string, std::vector<FunctionInstance>> functions_;
  std::unordered_map<std::string, std::vector<Dwarf_Off>> globals_;
  std::vector<Dwarf_Off> cus_;
};

}  // namespace kprobectl::dwarf
