// SPDX-License-Identifier: GPL-2.0-or-later
//
// A typed value the kernel can fetch, arch-neutral: what a source of types
// and locations (DWARF, BTF) hands the resolver. Start from a register's
// value, a function's Nth argument at its entry, a static address or a constant, then follow `derefs` (value =
// *(value + d)) in order; `type` reads the final value. For a string type
// the last step names the address the string is read from, as the kernel's
// "+0(%di):string" does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kprobectl/fetch_type.h"

namespace kprobectl {

struct VariableFetch {
  enum Root { kRegister, kStatic, kConstant, kArgument } root = kRegister;
  unsigned dwarf_register = 0;  // kRegister: DWARF's number (Arch::DwarfRegisterName)
  unsigned argument = 0;        // kArgument: the Nth integer argument at the function's entry (1-based; BTF)
  uint64_t address = 0;         // kStatic: the object's address in the ELF image
  int64_t constant = 0;         // kConstant
  std::vector<int64_t> derefs;  // kStatic: derefs[0] applies to `address`
  FetchType type;               // what reads the final value
  std::string name;             // default argument name: the last member or variable name
  std::string variable;         // the variable it is (of), for $vars / $params
  std::string c_type;           // the C type, for messages and listings
};

}  // namespace kprobectl
