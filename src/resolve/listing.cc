// SPDX-License-Identifier: GPL-2.0-or-later
//
// line: a function's or a file's source with the lines that can be probed,
// found as a probe point is: a clone's name (clamp.constprop.0) is its
// function's, as for add, -D and vars; a Go function's "main.handle" is that function.
#include "kprobectl/resolve.h"

namespace kprobectl {

namespace {

// Whether `name` is a function symbol of the target's file (read now: line
// does not read the symbols otherwise), and whether that file is Go's.
struct FunctionSymbol {
  bool found = false, go = false;
};
FunctionSymbol FindFunctionSymbol(const Target& target, const std::string& name) {
  const ElfImage* image = target.image.get();
  std::optional<ElfImage> opened;
  if (!image && !target.path.empty())
    if (auto read = ElfImage::Open(target.path)) image = &opened.emplace(std::move(*read));
  const ElfSymbol* s = image ? image->Find(name) : nullptr;
  return {s && s->type == ElfSymbol::kFunction, image && image->go()};
}

}  // namespace

Result<SourceListing> ListSource(const LineRange& range, Target& target, const FindOptions& find) {
  Debuginfo* debuginfo = KP_TRY(target.RequireDebuginfo());
  auto listing = debuginfo->Listing(range, find);
  if (listing) return listing;
  // "clamp.constprop.0" reads as a file name (a '.'), or as a function
  // the DWARF knows by its original name only.
  std::string name = !range.function.empty() ? range.function : range.file;
  FunctionSymbol symbol = name.find('.') == std::string::npos ? FunctionSymbol{} : FindFunctionSymbol(target, name);
  if (!symbol.found) return listing;
  LineRange base = range;
  // A Go function's '.' is a scope ("main.handle"), never a clone's suffix.
  base.function = symbol.go ? name : EventBaseFromSymbol(name);
  if (range.function.empty()) {
    base.file.clear();
    // Read as a file, it was listed from line 1 (the parser's default for
    // a file); a function's listing starts at its declaration, line 0.
    if (base.start == 1 && !base.end) base.start = 0;
  }
  return debuginfo->Listing(base, find);
}

}  // namespace kprobectl
