// SPDX-License-Identifier: GPL-2.0-or-later
//
// The set-up every command shares: from the options to the stages' inputs.
// The running system is read here (through the stages' readers), once.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ostream>

#include "commands.h"
#include "kprobectl/kernel_config.h"

namespace kprobectl::cli {

std::string DefaultCacheDir() {
  const char* xdg = getenv("XDG_CACHE_HOME");
  if (xdg && *xdg == '/') return std::string(xdg) + "/kprobectl";
  const char* home = getenv("HOME");
  if (home && *home) return std::string(home) + "/.cache/kprobectl";
  return {};
}

IndexOptions MakeIndexOptions(const Options& options, std::ostream& err, const std::string& path) {
  IndexOptions out;
  out.cache_dir = options.cache_dir;
  // KPROBECTL_UNIT_WINDOWS=0: every CU through the whole file's handle, as
  // before windows (to compare the two; docs/speed.md).
  const char* windows = getenv("KPROBECTL_UNIT_WINDOWS");
  out.unit_windows = !windows || std::string_view(windows) != "0";
  if (!options.progress) return out;
  // A line that appears only when the build takes more than a moment, and
  // is erased when it ends.
  struct State {
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    int shown = -1;
  };
  auto state = std::make_shared<State>();
  std::string name = path.substr(path.rfind('/') + 1);
  out.progress = [state, name, &err](size_t done, size_t total) {
    if (done >= total) {
      if (state->shown >= 0) err << "\r\033[K" << std::flush;
      return;
    }
    if (std::chrono::steady_clock::now() - state->start < std::chrono::milliseconds(300)) return;
    int percent = static_cast<int>(done * 100 / std::max<size_t>(total, 1));
    if (percent == state->shown) return;
    state->shown = percent;
    err << "\rkprobectl: indexing the debuginfo of " << name << " (once per build): " << percent << "%" << std::flush;
  };
  return out;
}

bool AnyEventProbe(const std::vector<ProbeSpec>& specs) {
  return std::any_of(specs.begin(), specs.end(), [](const ProbeSpec& s) { return !s.point.event_name.empty(); });
}

Result<void> RequireKernelTakes(const std::vector<ProbeSpec>& specs, const Options& options, const TracefsDir& dir,
                                const KernelFeatures& features) {
  bool others =
      !std::all_of(specs.begin(), specs.end(), [](const ProbeSpec& s) { return !s.point.event_name.empty(); });
  if (others) KP_TRY_VOID(RequireProbeKind(features, options.exec.empty() ? ProbeKind::kKernel : ProbeKind::kUser));
  if (!AnyEventProbe(specs)) return {};
  // The README, then the configuration (nothing is written); else the
  // kernel is asked.
  std::optional<EventProbeSupport> support = EventProbesFromReadme(features);
  if (!support)
    if (auto config = ReadKernelConfig(options.env)) support = EventProbesFromConfig(config->text, config->source);
  if (!support) support = KP_TRY(AskKernelForEventProbes(dir));
  return RequireEventProbes(*support);
}

Result<Target> OpenTargetOf(const Options& options, std::ostream& err, bool need_symbols, bool btf_types) {
  TargetRequest request;
  request.exec = options.exec;
  request.vmlinux = options.vmlinux;
  request.module = options.module;
  request.force = options.force;
  request.need_symbols = need_symbols;
  request.btf = options.btf;
  request.btf_file = options.btf_file;
  request.target_ns = options.target_ns;
  request.btf_types = btf_types;
  // The progress line names the file; the running kernel's is found later.
  std::string named = !options.exec.empty() ? options.exec : !options.vmlinux.empty() ? options.vmlinux : "vmlinux";
  request.index = MakeIndexOptions(options, err, named);
  const KernelEnv& env = options.env;
  if (options.target_ns) {
    if (options.exec.empty())
      return Fail("--target-ns goes with -x: it says whose file system the binary is in",
                  "kprobectl --target-ns PID -x /usr/bin/app add FUNC");
    return OpenTarget(request, env, KP_TRY(SearchPathsOfProcess(env, options.target_ns)));
  }
  return OpenTarget(request, env, SearchPathsFrom(getenv("PATH"), getenv("LD_LIBRARY_PATH"), LibraryMachineOf(env)));
}

ResolveOptions ResolveOptionsOf(const Options& options) {
  ResolveOptions out;
  out.inlines = !options.no_inlines;
  out.source_dirs = options.source_dirs;
  out.maxactive = options.maxactive;
  out.force = options.force;
  out.fprobe = options.fprobe;
  out.max_probes = options.max_probes;
  return out;
}

void ReportIndex(const Target& target, const Options& options, std::ostream& err) {
  if (!options.verbose || !target.debuginfo) return;
  IndexStatus status = target.debuginfo->index_status();
  std::string what;
  switch (status.use) {
    case IndexStatus::kUnused:
      return;
    case IndexStatus::kScan:
      what = "none; each name found by a scan of " + target.debuginfo->path();
      break;
    case IndexStatus::kWalk:
      what = "every DIE of " + target.debuginfo->path() + " walked, kept in memory";
      break;
    case IndexStatus::kCacheRead:
      what = "read from " + status.file;
      break;
    case IndexStatus::kCacheBuilt:
      what = "built, written to " + status.file;
      break;
  }
  err << "kprobectl: debuginfo index: " << what << "\n";
  if (!status.problem.empty()) err << "kprobectl: debuginfo index: " << status.problem << "\n";
}

void ReportResolution(const Resolution& resolution, const Options& options, std::ostream& err) {
  if (!options.quiet)
    for (const std::string& line : resolution.left_out) err << "kprobectl: " << line << "\n";
  if (!options.verbose) return;
  for (const std::string& note : resolution.notes) err << "note: " << note << "\n";
  for (const ResolvedProbe& probe : resolution.probes)
    for (const ResolvedLocation& loc : probe.locations)
      for (const std::string& skipped : loc.skipped)
        err << "note: " << probe.group << ":" << loc.event << ": skipped " << skipped << "\n";
}

Result<std::unique_ptr<TracefsDir>> OpenTracefs(const Options& options, bool may_mount) {
  LocateOptions locate;
  locate.override_dir = options.tracefs;
  locate.may_mount = may_mount;
  std::string root = KP_TRY(LocateTracefs(locate));
  return std::make_unique<TracefsDir>(root);
}

Result<std::vector<TraceEventDef>> ResolveToDefinitions(const std::vector<ProbeSpec>& specs, Target& target,
                                                        const SystemView& system, const Options& options,
                                                        EventNamer& namer, std::ostream& err,
                                                        std::vector<ProbeOrigin>* origins, bool keep_entry_args) {
  ResolveOptions resolve = ResolveOptionsOf(options);
  resolve.keep_entry_args = keep_entry_args;
  Resolution resolution = KP_TRY(Resolve(specs, target, system, resolve));
  KP_TRY_VOID(NameEvents(resolution, namer));
  ReportResolution(resolution, options, err);
  if (origins)
    for (const ResolvedProbe& probe : resolution.probes)
      for (const ResolvedLocation& loc : probe.locations) origins->push_back(loc.origin);
  return Synthesize(resolution, target);
}

}  // namespace kprobectl::cli
