// SPDX-License-Identifier: GPL-2.0-or-later
//
// funcs: the functions of a target that can be probed, from its symbols;
// for a kernel, without those kprobe_events would refuse.
#include <set>

#include "kprobectl/resolve.h"

namespace kprobectl {

Result<std::vector<std::string>> ProbeableFunctions(const Target& target, const GlobFilter& filter) {
  if (!target.image) return std::unexpected(target.debuginfo_error);
  const ElfImage& image = *target.image;
  KprobeBlacklist blacklist;
  TraceableFunctions traceable;
  if (target.kernel()) {
    blacklist = KP_TRY(KprobeBlacklist::FromImage(image));
    traceable = KP_TRY(TraceableFunctions::FromImage(image));
  }
  std::set<std::string> names;
  for (const ElfSymbol& s : image.symbols())
    if (s.type == ElfSymbol::kFunction && s.value != 0 && filter.Matches(s.name) && !blacklist.Find(s.value) &&
        traceable.Traceable(s))
      names.insert(s.version.empty() ? s.name : s.name + "@" + (s.default_version ? "@" : "") + s.version);
  return std::vector<std::string>(names.begin(), names.end());
}

}  // namespace kprobectl
