// SPDX-License-Identifier: GPL-2.0-or-later
//
// add: parse every spec, resolve them all, name the events, then write them
// all or none. Nothing reaches the kernel until every spec has resolved.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

#include "commands.h"
#include "kprobectl/event_names.h"
#include "kprobectl/kernel_features.h"
#include "kprobectl/probe_events.h"
#include "kprobectl/resolve.h"
#include "kprobectl/strings.h"

namespace kprobectl::cli {

namespace {

class ScopedSignalBlock {
 public:
  ScopedSignalBlock() {
    sigset_t block;
    sigemptyset(&block);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&block, sig);
    sigprocmask(SIG_BLOCK, &block, &saved_);
  }
  ~ScopedSignalBlock() { sigprocmask(SIG_SETMASK, &saved_, nullptr); }
  ScopedSignalBlock(const ScopedSignalBlock&) = delete;
  ScopedSignalBlock& operator=(const ScopedSignalBlock&) = delete;

 private:
  sigset_t saved_;
};

}  // namespace

Result<std::unique_ptr<TracefsDir>> OpenTracefs(const Options& options, bool may_mount) {
  LocateOptions locate;
  locate.override_dir = options.tracefs;
  locate.may_mount = may_mount;
  std::string root = KP_TRY(LocateTracefs(locate));
  return std::make_unique<TracefsDir>(root);
}

Result<std::vector<TraceEventDef>> ResolveSpecs(const std::vector<ProbeSpec>& specs, TargetFiles& files,
                                                const KernelFeatures& features, const Options& options,
                                                EventNamer& namer, std::vector<std::string>* notes,
                                                std::vector<size_t>* origins) {
  std::vector<TraceEventDef> defs;
  DefinitionOptions definition_options{options.force, options.maxactive};
  FindOptions find{!options.no_inlines, options.source_dirs};
  for (const ProbeSpec& spec : specs) {
    std::vector<TraceEventDef> more;
    if (!files.image) {
      more = KP_TRY(BuildKernelDefinitions({spec}, features, definition_options, namer));
    } else if (files.debuginfo && spec.point.version.empty()) {
      // DWARF first: it knows inlined copies and variables. A plain symbol
      // that the DWARF lacks (assembly, another language) falls back to
      // the ELF symbol table.
      EventNamer attempt = namer;
      auto dwarf = BuildDwarfDefinitions({spec}, *files.debuginfo, *files.image, files.kind, features,
                                         definition_options, find, attempt, notes);
      if (dwarf) {
        namer = attempt;
        more = std::move(*dwarf);
      } else if (NeedsDebuginfo(spec)) {
        return std::unexpected(dwarf.error());
      } else if (files.kind == ProbeKind::kKernel) {
        auto symbols = BuildKernelDefinitionsFromImage(spec, *files.image, features, definition_options, namer);
        if (!symbols) return std::unexpected(dwarf.error());
        more = std::move(*symbols);
      } else {
        auto resolved = ResolveUserProbe(spec, *files.image);
        if (!resolved) return std::unexpected(dwarf.error());
        more = KP_TRY(BuildUserDefinitions({*resolved}, *files.image, features, namer));
      }
    } else if (NeedsDebuginfo(spec)) {
      auto why = RequireDebuginfo(files);
      if (!why) return Fail("'" + DescribePoint(spec.point) + "' needs debuginfo: " + why.error().message,
                            why.error().hint);
    } else if (files.kind == ProbeKind::kKernel) {
      more = KP_TRY(BuildKernelDefinitionsFromImage(spec, *files.image, features, definition_options, namer));
    } else {
      ResolvedProbe resolved = KP_TRY(ResolveUserProbe(spec, *files.image));
      more = KP_TRY(BuildUserDefinitions({resolved}, *files.image, features, namer));
    }
    if (origins) origins->insert(origins->end(), more.size(), static_cast<size_t>(&spec - specs.data()));
    defs.insert(defs.end(), more.begin(), more.end());
  }
  return defs;
}

Result<void> RunAdd(const Options& options, const std::vector<std::string>& spec_texts, Streams io) {
  std::vector<ProbeSpec> specs;
  for (const std::string& text : spec_texts) specs.push_back(KP_TRY(ParseProbeSpec(text)));
  ProbeKind kind = options.exec.empty() ? ProbeKind::kKernel : ProbeKind::kUser;

  // A dry run works without tracefs (perf -D does too): then we assume every
  // feature and no existing event.
  std::unique_ptr<TracefsDir> dir;
  KernelFeatures features;
  std::set<std::string> existing;
  if (auto opened = OpenTracefs(options, !options.dry_run); opened) {
    dir = std::move(*opened);
    features = ReadFeatures(*dir);
    if (!options.dry_run) KP_TRY_VOID(RequireProbeKind(features, kind));
    if (dir->Exists(EventsFile(kind)) || !options.dry_run) existing = KP_TRY(ProbeEvents(*dir).Names());
  } else if (!options.dry_run) {
    return std::unexpected(opened.error());
  } else {
    features = AllFeatures();
  }
  if (kind == ProbeKind::kKernel && options.maxactive && !features.kprobe_maxactive)
    return Fail("this kernel does not take --maxactive for return probes");
  if (kind == ProbeKind::kUser && options.maxactive)
    return Fail("--maxactive is for kernel return probes", "user return probes have no such limit");

  EventNamer namer(existing, options.force);
  TargetFiles files = KP_TRY(OpenTargetFiles(options, io.err));
  std::vector<std::string> notes;
  std::vector<size_t> origins;
  std::vector<TraceEventDef> defs = KP_TRY(ResolveSpecs(specs, files, features, options, namer, &notes, &origins));
  if (kind == ProbeKind::kKernel) {
    // The running kernel's lists, unless this only prints definitions for an image (-k -D).
    bool running = features.kprobe_events && ((options.vmlinux.empty() && options.module.empty()) || !options.dry_run);
    std::vector<std::string> left_out;
    KP_TRY_VOID(CheckKernelProbes(defs, origins, files, dir.get(), options, running, &left_out));
    if (!options.quiet)
      for (const std::string& line : left_out) io.err << "kprobectl: " << line << "\n";
  }
  ReportIndex(files, options, io.err);
  if (options.verbose)
    for (const std::string& note : notes) io.err << "note: " << note << "\n";
  const ElfImage* image = files.kind == ProbeKind::kUser ? files.image.get() : nullptr;

  if (options.dry_run) {
    for (const TraceEventDef& def : defs) io.out << FormatDefinition(def) << "\n";
    return {};
  }
  auto log = [&](std::string_view line) {
    if (options.verbose) io.err << line << "\n";
  };
  {
    // Ctrl-C between two writes would leave half the probes behind: hold
    // SIGINT/SIGTERM/SIGHUP until Add() has written all or taken all back.
    ScopedSignalBlock hold_signals;
    KP_TRY_VOID(CleanLeftovers(*dir, options, io));
    KP_TRY_VOID(ProbeEvents(*dir, log).Add(defs));
  }
  if (options.quiet) return {};
  io.out << (defs.size() == 1 ? "Added new event:\n" : "Added new events:\n");
  for (const TraceEventDef& def : defs)
    io.out << "  " << def.FullName() << "\t"
           << DescribeDefinition(def, image, SourceOfDefinition(def, files.image.get(), files.debuginfo.get())) << "\n";
  io.out << "\nYou can now record them, e.g.:\n"
         << "  echo 1 > " << dir->PathOf("events/" + defs.front().group + "/" + defs.front().event + "/enable")
         << "\n  cat " << dir->PathOf("trace_pipe") << "\n";
  return {};
}

}  // namespace kprobectl::cli
