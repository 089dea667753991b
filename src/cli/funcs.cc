// SPDX-License-Identifier: GPL-2.0-or-later
//
// funcs: the functions of a binary that can be probed, from its symbols.
#include <algorithm>
#include <set>

#include "commands.h"
#include "kprobectl/glob.h"

namespace kprobectl::cli {

Result<void> RunFuncs(const Options& options, const std::string& filter_text, Streams io) {
  if (options.exec.empty())
    return Fail("listing kernel functions needs the kernel's debuginfo, which is not supported yet",
                "list a program's functions with -x BINARY");
  std::string path = KP_TRY(FindBinary(options.exec));
  ElfImage image = KP_TRY(ElfImage::Open(path));
  // perf's default filter hides compiler-internal names.
  auto filter = KP_TRY(GlobFilter::Parse(filter_text.empty() ? "!_*" : filter_text));
  std::set<std::string> names;
  for (const ElfSymbol& s : image.symbols())
    if (s.type == ElfSymbol::kFunction && s.value != 0 && filter.Matches(s.name))
      names.insert(s.version.empty() ? s.name : s.name + "@" + (s.default_version ? "@" : "") + s.version);
  for (const std::string& name : names) io.out << name << "\n";
  return {};
}

}  // namespace kprobectl::cli
