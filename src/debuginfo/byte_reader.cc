// SPDX-License-Identifier: GPL-2.0-or-later
#include "byte_reader.h"

namespace kprobectl::dwarf {

bool AbbrevFormsAllowed(ByteReader r, bool one_table, const std::function<bool(uint64_t tag, uint64_t form)>& allowed) {
  while (r.Left() > 0) {
    const uint64_t code = r.Uleb();
    if (!r.ok) return false;
    if (code == 0) {  // a table's end
      if (one_table) return true;
      continue;
    }
    const uint64_t tag = r.Uleb();
    r.Skip(1);  // DW_CHILDREN_*
    if (!r.ok || !allowed(tag, 0)) return false;
    for (;;) {
      const uint64_t attr = r.Uleb(), form = r.Uleb();
      if (!r.ok) return false;
      if (attr == 0 && form == 0) break;
      if (!allowed(tag, form)) return false;
      if (form == 0x21) r.Uleb();  // DW_FORM_implicit_const's value: an SLEB128, as long as a ULEB128
    }
  }
  return r.ok && !one_table;  // one table ends with its 0 code
}

}  // namespace kprobectl::dwarf
