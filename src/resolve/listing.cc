// SPDX-License-Identifier: GPL-2.0-or-later
//
// line: a function's or a file's source with the lines that can be probed,
// found as a probe point is: a clone's name (clamp.constprop.0) is its
// function's, as for add, -D and vars.
#include "kprobectl/resolve.h"

namespace kprobectl {

namespace {

// Whether `name` is a function symbol of the target's file (read now: line
// does not read the symbols otherwise).
bool IsFunctionSymbol(const Target& target, const std::string& name) {
  const ElfImage* image = target.image.get();
  std::optional<ElfImage> opened;
  if (!image && !target.path.empty())
    if (auto read = ElfImage::Open(target.path)) image = &opened.emplace(std::move(*read));
  const ElfSymbol* s = image ? image->Find(name) : nullptr;
  return s && s->type == ElfSymbol::kFunction;
}

}  // namespace

Result<SourceListing> ListSource(const LineRange& range, Target& target, const FindOptions& find) {
  Debuginfo* debuginfo = KP_TRY(target.RequireDebuginfo());
  auto listing = debuginfo->Listing(range, find);
  if (listing) return listing;
  // "clamp.constprop.0" reads as a file name (a '.'), or as a function
  // the DWARF knows by its original name only.
  std::string name = !range.function.empty() ? range.function : range.file;
  if (name.find('.') == std::string::npos || !IsFunctionSymbol(target, name)) return listing;
  LineRange base = range;
  base.function = EventBaseFromSymbol(name);
  if (range.function.empty()) base.file.clear();
  return debuginfo->Listing(base, find);
}

}  // namespace kprobectl
