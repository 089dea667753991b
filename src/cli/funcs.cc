// SPDX-License-Identifier: GPL-2.0-or-later
//
// funcs: the functions of a binary or kernel image that can be probed, from
// its symbols.
#include <algorithm>
#include <set>

#include "commands.h"
#include "kprobectl/glob.h"
#include "kprobectl/kernel_image.h"

namespace kprobectl::cli {

Result<void> RunFuncs(const Options& options, const std::string& filter_text, Streams io) {
  // -x, -k, -m, or else the running kernel's image, found as for add.
  TargetFiles files = KP_TRY(OpenTargetFiles(options, io.err));
  if (!files.image) return std::unexpected(files.debuginfo_error);
  const ElfImage& image = *files.image;
  // perf's default filter hides compiler-internal names.
  auto filter = KP_TRY(GlobFilter::Parse(filter_text.empty() ? "!_*" : filter_text));
  // A kernel image: leave out what kprobe_events would refuse.
  KprobeBlacklist blacklist;
  TraceableFunctions traceable;
  if (files.kind == ProbeKind::kKernel) {
    blacklist = KP_TRY(KprobeBlacklist::FromImage(image));
    traceable = KP_TRY(TraceableFunctions::FromImage(image));
  }
  std::set<std::string> names;
  for (const ElfSymbol& s : image.symbols())
    if (s.type == ElfSymbol::kFunction && s.value != 0 && filter.Matches(s.name) && !blacklist.Find(s.value) &&
        traceable.Traceable(s))
      names.insert(s.version.empty() ? s.name : s.name + "@" + (s.default_version ? "@" : "") + s.version);
  for (const std::string& name : names) io.out << name << "\n";
  return {};
}

}  // namespace kprobectl::cli
