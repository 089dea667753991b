// SPDX-License-Identifier: GPL-2.0-or-later
//
// A CU's own libdw handle. libdw reaches a unit only through every unit
// before it (dwarf_offdie interns them in file order): a warm look-up of a
// function in net/ of a vmlinux interned some 3,000 units, 4,500
// instructions each, for the one its index points at, which made its time
// grow with where the CU lies (mmput, in kernel/fork.c: 5.7M of a warm
// -D's 11M instructions). A window is a second private mapping of the file
// whose .debug_info section header is rewritten to cover that one unit:
// libdw opens it as a file of one CU, and a DIE at offset X of the file is
// at X - start in it. Only units whose abbreviations cannot refer outside
// themselves get one (no DW_FORM_ref_addr, supplementary or alternate
// files, type signatures, imported units); the caller reads the others
// through the whole file's handle. DIE offsets given out are the file's.
// A location expression's reference to a DIE (DW_OP_call_ref,
// DW_OP_implicit_pointer, DW_OP_GNU_variable_value) is a file offset a
// window does not map: nothing follows them today (dwarf_location.cc
// refuses them); whatever does must go through Die().
#pragma once

#include <elfutils/libdw.h>

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "dwarf_internal.h"

namespace kprobectl::dwarf {

class UnitWindows {
 public:
  // Null when the file cannot have windows: relocatable, .debug_info
  // absent or compressed, not ELF64 little-endian. `fd`, `file` and
  // `elf` (the whole file's) must outlive the object.
  // `units`: the CU DIEs' offsets, sorted (the index's).
  static std::unique_ptr<UnitWindows> Make(int fd, const unsigned char* file, size_t file_size, Elf* elf,
                                           std::vector<uint64_t> units);
  ~UnitWindows();
  UnitWindows(const UnitWindows&) = delete;
  UnitWindows& operator=(const UnitWindows&) = delete;

  // The DIE at the file's .debug_info `offset`, through its unit's window;
  // false when that unit has none (the caller asks the whole file's handle).
  bool Die(Dwarf_Off offset, Dwarf_Die* out);
  // The file's offset of a DIE read through a window or the whole file.
  Dwarf_Off Offset(Dwarf_Die* die) const;
  // The CU DIE whose unit's code holds `address`, from .debug_aranges read
  // here (libdw's dwarf_getaranges reads every unit's header through the
  // whole file's mapping: 100 MB resident on a vmlinux); none without it.
  std::optional<uint64_t> UnitDieAt(uint64_t address) const;

 private:
  struct Window {
    void* map = nullptr;
    Elf* elf = nullptr;
    Dwarf* dwarf = nullptr;  // null: this unit cannot have a window
  };
  struct Unit {
    uint64_t start = 0, end = 0;  // in .debug_info
    Window window;
  };
  UnitWindows() = default;
  // The unit whose CU DIE is at `die`, from its header.
  std::optional<Unit> UnitOf(uint64_t die) const;
  Window Open(const Unit& unit) const;

  int fd_ = -1;
  const unsigned char* file_ = nullptr;
  size_t file_size_ = 0;
  uint64_t shdr_at_ = 0;  // the .debug_info section header, in the file
  RawSection shdrs_;      // the section header table, in the file
  RawSection info_, abbrev_;
  std::optional<RawSection> aranges_;
  std::vector<uint64_t> cu_dies_;           // sorted
  std::map<uint64_t, Unit> units_;          // by CU DIE, as they are asked for
  std::map<const Dwarf*, uint64_t> bases_;  // each window's start
};

}  // namespace kprobectl::dwarf
