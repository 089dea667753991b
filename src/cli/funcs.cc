// SPDX-License-Identifier: GPL-2.0-or-later
//
// funcs: the functions of a binary or kernel image that can be probed.
#include <algorithm>
#include <optional>

#include "commands.h"
#include "kprobectl/glob.h"
#include "kprobectl/json_object.h"
#include "kprobectl/lang_names.h"
#include "kprobectl/nearest_names.h"
#include "kprobectl/strings.h"

namespace kprobectl::cli {

namespace {

// funcs --sdt: one line per marker, its name padded, the arguments of its
// first site as its note writes them, and what else there is to know.
Result<void> ListMarkers(const Target& target, const std::string& filter_text, bool json, Streams io) {
  auto filter = KP_TRY(GlobFilter::Parse(filter_text.empty() ? "*" : filter_text));
  std::vector<MarkerSummary> markers = KP_TRY(ProbeableMarkers(target, filter));
  if (markers.empty() && filter_text.empty()) return Fail(target.path + " has no USDT markers (no .note.stapsdt)");
  size_t width = 0;
  for (const MarkerSummary& m : markers) width = std::max(width, m.name.size());
  for (const MarkerSummary& m : markers) {
    std::vector<std::string> args = SplitSdtArguments(m.args);
    if (json) {
      io.out << JsonObject()
                    .String("marker", m.name)
                    .Raw("args", JsonStrings(args))
                    .Number("sites", m.sites)
                    .Bool("semaphore", m.semaphore)
                    .str()
             << "\n";
      continue;
    }
    std::string line = m.name + std::string(width - m.name.size() + 2, ' ');
    for (size_t i = 0; i < args.size(); ++i) line += (i ? " arg" : "arg") + std::to_string(i + 1) + "=" + args[i];
    if (args.empty()) line += "(no arguments)";
    if (m.sites > 1) line += "  [" + std::to_string(m.sites) + " sites]";
    if (m.semaphore) line += "  [semaphore]";
    io.out << line << "\n";
  }
  return {};
}

}  // namespace

Result<void> RunFuncs(const Options& options, const std::string& filter_text, Streams io) {
  // -x, -k, -m, or else the running kernel's image, found as for add.
  Target target = KP_TRY(OpenTargetOf(options, io.err));
  if (options.sdt) return ListMarkers(target, filter_text, options.json, io);
  // perf's default filter hides compiler-internal names. In a Go binary a
  // glob is a Go name's: "(*T)" and "[...]" as in a probe point.
  std::function<std::string(std::string_view)> leaf;
  if (target.go()) leaf = GoGlob;
  auto filter = KP_TRY(GlobFilter::Parse(filter_text.empty() ? "!_*" : filter_text, leaf));
  // BTF alone has no addresses: the running kernel's own lists say what
  // ftrace traces and what kprobes refuse.
  std::optional<SystemView> running;
  if (!target.image && target.btf && target.kind == Target::kRunningKernel) {
    auto dir = OpenTracefs(options, false);
    running = ReadSystemView(dir ? dir->get() : nullptr, options.env, target, dir.has_value());
    if (!running->available_functions && !options.quiet)
      io.err << "kprobectl: note: " << running->available_functions_error
             << "; so this list has every function of the BTF, also those ftrace cannot trace, which kprobes refuse\n";
  }
  std::vector<std::string> names = KP_TRY(ProbeableFunctions(target, filter, running ? &*running : nullptr));
  for (const std::string& name : names)
    io.out << (options.json ? JsonObject().String("function", name).str() : name) << "\n";
  // A name, not a glob nor a filter, that is no function ("main.handel",
  // "depot::store::totl"): said, with the nearest ones.
  if (!names.empty() || filter_text.empty() || IsGlob(filter_text) ||
      filter_text.find_first_of("!&|() ") != std::string::npos)
    return {};
  NearestNames nearest(filter_text);
  for (const std::string& name :
       KP_TRY(ProbeableFunctions(target, *GlobFilter::Parse("*"), running ? &*running : nullptr)))
    nearest.Offer(name);
  std::vector<std::string> similar = nearest.Take();
  std::string what = target.path.empty() ? "the running kernel" : target.path;
  return Fail("no function '" + filter_text + "' in " + what + " that can be probed",
              similar.empty() ? "list them all with 'kprobectl funcs'" : "similar names: " + Join(similar, ", "));
}

}  // namespace kprobectl::cli
