// SPDX-License-Identifier: GPL-2.0-or-later
//
// add (and -D): the passes, in order. Nothing reaches the kernel until
// every spec has resolved; then all are written, or none.
//   1. parse every spec;
//   2. tracefs, and what this kernel's dynamic events support (a dry run
//      works without: every feature assumed, as perf -D does);
//   3. the target, and what the running system says of it;
//   4. resolve, name, synthesize (the resolve stage);
//   5. print them (-D), or write them all or none (-n: none), and say so.
// What a pipe consumes (-D's definitions) goes to stdout; what is said to
// the person ("Added new event:", perf's stream for it too) to stderr.
#include <signal.h>

#include <set>

#include "commands.h"
#include "kprobectl/boot_forms.h"
#include "kprobectl/probe_events.h"

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

// perf's account of what was added; -n says the same of what would be.
void PrintAdded(const std::vector<TraceEventDef>& defs, const std::vector<ProbeOrigin>& origins, const Target& target,
                const TracefsDir& dir, std::ostream& err) {
  const ElfImage* image = target.kind == Target::kUserBinary ? target.image.get() : nullptr;
  err << (defs.size() == 1 ? "Added new event:\n" : "Added new events:\n");
  for (size_t i = 0; i < defs.size(); ++i)
    err << "  " << defs[i].FullName() << "\t"
        << DescribeDefinition(defs[i], image, DescribeOrigin(origins[i], defs[i].retprobe)) << "\n";
  err << "\nYou can now record them, e.g.:\n"
      << "  kprobectl trace '" << defs.front().FullName() << "' -- COMMAND\n"
      << "  echo 1 > " << dir.PathOf("events/" + defs.front().Path() + "/enable") << "; cat "
      << dir.PathOf("trace_pipe") << "\n";
}

// --bootconfig, --cmdline: the definitions as the kernel reads them at boot.
Result<void> PrintBootForm(const std::vector<TraceEventDef>& defs, const Options& options, Streams io) {
  if (options.boot_form == "cmdline") {
    io.out << KP_TRY(FormatKprobeEventParameter(defs));
    return {};
  }
  std::vector<std::string> notes;
  std::string text = KP_TRY(FormatBootconfig(defs, &notes));
  if (!options.quiet)
    for (const std::string& note : notes) io.err << "kprobectl: " << note << "\n";
  io.out << text;
  return {};
}

}  // namespace

Result<void> RunAdd(const Options& options, const std::vector<std::string>& spec_texts, Streams io) {
  if (!options.boot_form.empty())
    KP_TRY_VOID(RequireBootKind(options.exec.empty() ? ProbeKind::kKernel : ProbeKind::kUser));
  std::vector<ProbeSpec> specs;
  for (const std::string& text : spec_texts) specs.push_back(KP_TRY(ParseProbeSpec(text)));

  // -D and -n write nothing: they work without tracefs, and on kernels
  // without kprobes, for another kernel's image (-k, -m PATH.ko).
  bool write = !options.dry_run && !options.definitions;
  std::unique_ptr<TracefsDir> dir;
  if (auto opened = OpenTracefs(options, write); opened)
    dir = std::move(*opened);
  else if (write)
    return std::unexpected(opened.error());
  // The tracefs README, read once for both checks below.
  KernelFeatures features = dir ? ReadFeatures(*dir) : AllFeatures();
  if (write) KP_TRY_VOID(RequireKernelTakes(specs, options, *dir, features));

  Target target = KP_TRY(OpenTargetOf(options, io.err, true, AnyEventProbe(specs)));
  if (write) KP_TRY_VOID(CheckArchRunsHere(target, options.env));
  // The running kernel's lists apply unless this only prints definitions
  // for another image (-k -D, -m PATH.ko -D).
  bool for_running = (options.vmlinux.empty() && options.module.empty()) || write;
  SystemView system = ReadSystemView(dir.get(), features, options.env, target, for_running);
  if (!for_running) system.features = AllFeatures();  // definitions for another kernel: its features unknown
  // Boot-time definitions are for a kernel that has none yet.
  EventNamer namer(options.boot_form.empty() ? system.existing_events : std::set<std::string>{}, options.force);
  std::vector<ProbeOrigin> origins;
  std::vector<TraceEventDef> defs =
      KP_TRY(ResolveToDefinitions(specs, target, system, options, namer, io.err, &origins));
  ReportIndex(target, options, io.err);

  if (!options.boot_form.empty()) return PrintBootForm(defs, options, io);
  if (options.definitions) {
    for (const TraceEventDef& def : defs) io.out << FormatDefinition(def) << "\n";
    return {};
  }
  auto log = [&](std::string_view line) {
    if (options.verbose) io.err << line << "\n";
  };
  if (options.dry_run) {
    // perf's dry run: the account of an add, names and all, and no write.
    for (const TraceEventDef& def : defs) log("dry run, not written: " + FormatDefinition(def));
    TracefsDir usual("/sys/kernel/tracing");  // for the example, when none was found
    if (!options.quiet) PrintAdded(defs, origins, target, dir ? *dir : usual, io.err);
    return {};
  }
  {
    // Ctrl-C between two writes would leave half the probes behind: hold
    // SIGINT/SIGTERM/SIGHUP until Add() has written all or taken all back.
    ScopedSignalBlock hold_signals;
    KP_TRY_VOID(CleanLeftovers(*dir, options, io));
    KP_TRY_VOID(ProbeEvents(*dir, log).Add(defs));
  }
  if (!options.quiet) PrintAdded(defs, origins, target, *dir, io.err);
  return {};
}

}  // namespace kprobectl::cli
