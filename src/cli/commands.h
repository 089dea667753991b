// SPDX-License-Identifier: GPL-2.0-or-later
//
// The commands behind the CLI. Each takes the parsed options and the output
// stream and returns a Result; only RunCli prints errors.
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "kprobectl/aggregation.h"
#include "kprobectl/debuginfo.h"
#include "kprobectl/elf_image.h"
#include "kprobectl/event_names.h"
#include "kprobectl/kernel_features.h"
#include "kprobectl/probe_spec.h"
#include "kprobectl/resolve.h"
#include "kprobectl/result.h"
#include "kprobectl/system_view.h"
#include "kprobectl/target.h"
#include "kprobectl/trace_event_def.h"
#include "kprobectl/tracefs_dir.h"

namespace kprobectl::cli {

struct Options {
  std::string exec;                      // -x BINARY
  std::string vmlinux;                   // -k VMLINUX
  std::string module;                    // -m NAME|PATH.ko
  std::vector<std::string> source_dirs;  // -s DIR
  bool no_inlines = false;               // --no-inlines
  bool externs = false;                  // vars --externs
  bool ranges = false;                   // vars --range
  std::string tracefs;                   // --tracefs DIR
  bool force = false;                    // -f
  bool quiet = false;                    // -q
  bool verbose = false;                  // -v
  bool dry_run = false;                  // -n / --dry-run: add (and trace) as perf's, writing nothing
  bool definitions = false;              // -D: print the definitions instead of adding
  unsigned max_probes = 128;             // --max-probes N: places one spec may expand to (perf's MAX_PROBES)
  std::string filter;                    // --filter FILTER: funcs' names, vars' variables (perf's spelling)
  bool demangle_kernel = false;          // --demangle-kernel (perf's; kprobectl demangles C++ names anyway)
  // --bootconfig or --cmdline: print the definitions as the kernel reads
  // them at boot ("bootconfig", "cmdline"), write nothing.
  std::string boot_form;
  unsigned maxactive = 0;   // --maxactive N
  bool fprobe = false;      // --fprobe
  bool sdt = false;         // funcs --sdt: USDT markers, not functions
  int target_ns = 0;        // --target-ns PID: -x inside that process's mount namespace
  bool btf = false;         // --btf
  std::string btf_file;     // --btf-file FILE
  std::string cache_dir;    // the debuginfo index cache; empty with --no-cache
  std::string runtime_dir;  // records of trace's temporary probes; empty: none
  bool progress = false;    // stderr is a terminal: show a slow index build's progress
  bool json = false;        // --json: list, funcs, vars as JSON, one object a line
  // The running system's files (RunCli's caller says where: this machine's,
  // or a prepared tree in tests), read through this alone.
  KernelEnv env;
};

struct Streams {
  std::ostream& out;
  std::ostream& err;
};

Result<void> RunAdd(const Options& options, const std::vector<std::string>& specs, Streams io);
Result<void> RunDel(const Options& options, const std::vector<std::string>& patterns, Streams io);
Result<void> RunList(const Options& options, const std::vector<std::string>& patterns, Streams io);
Result<void> RunFuncs(const Options& options, const std::string& filter, Streams io);
// --stack: which stacks trace records after each event.
enum class StackMode {
  kNone,    // no --stack
  kAuto,    // --stack alone: each probe's own side, the kernel's after kernel probes, user space's after uprobes
  kKernel,  // --stack=kernel
  kUser,    // --stack=user
  kBoth,    // --stack=both
};
// --stack's value as the command line gives it ("auto" for the flag alone,
// empty when it is not given); anything else is refused, naming it.
Result<StackMode> ParseStackMode(const std::string& text);
struct TraceOptions {
  std::vector<std::string> events;  // [GROUP:]EVENT globs
  std::vector<std::string> probes;  // --probe SPEC, temporary
  double duration = 0;              // -d SECONDS; 0 = until the command ends or a signal
  std::string output;               // -o FILE
  bool json = false;                // --json: the same as --format json
  std::string format;               // --format: text (empty), json, folded, flamegraph, heatmap, timeline
  std::string filter;
  int pid = 0;
  bool all = false;  // -a: the whole system, not only the command's processes
  bool latency = false;
  unsigned buffer_kb = 0;              // per CPU; 0 = the kernel's default
  StackMode stack = StackMode::kNone;  // --stack[=kernel|user|both]
  std::vector<std::string> command;    // after --
  // hist: what to count (--key, --sum, --max, --sort, --top); none for trace.
  std::optional<AggregationWords> aggregate;
  double interval = 0;      // hist -i SECONDS: print every interval; 0 = at the end
  bool cumulative = false;  // hist --cumulative: intervals do not clear the counts
  bool user_space = false;  // hist --in-user-space: kprobectl counts, even where the kernel could
};
// The exit status: the command's, or 0.
Result<int> RunTrace(const Options& options, const TraceOptions& trace, Streams io);

struct ServeOptions {
  std::string config;      // --config FILE
  std::string listen;      // --listen ADDRESS:PORT, over the file's
  std::string web_config;  // --web.config.file FILE, over the file's web-config
  bool insecure = false;   // --insecure: beyond loopback without TLS and authentication
};
// Until a stop signal: the configuration's probes and aggregations kept in
// place, served at /metrics.
Result<void> RunServe(const Options& options, const ServeOptions& serve, Streams io);

Result<void> RunLine(const Options& options, const std::string& range, Streams io);
// Removes what a killed kprobectl trace left in tracefs (its instance and
// temporary probes), saying so; every command that writes to tracefs
// calls CleanLeftovers first, `clean` does only that.
Result<void> CleanLeftovers(const TracefsDir& dir, const Options& options, Streams io);
Result<void> RunClean(const Options& options, Streams io);
Result<void> RunVars(const Options& options, const std::string& spec, Streams io);

// The set-up the commands share (setup.cc): the target the options name
// (its progress line on `err` while an index is built), how resolution is
// asked, what -v reports.
Result<Target> OpenTargetOf(const Options& options, std::ostream& err, bool need_symbols = true,
                            bool btf_types = false);
// Whether any spec is an event probe (ev:SYSTEM:EVENT), whose pointer
// fields are typed from the running kernel's BTF.
bool AnyEventProbe(const std::vector<ProbeSpec>& specs);
// Before writing: whether this kernel takes the kinds of probe the specs
// make (kprobe_events, uprobe_events, event probes), with the evidence:
// `features` (read from `dir`), else the configuration, else `dir` asked.
Result<void> RequireKernelTakes(const std::vector<ProbeSpec>& specs, const Options& options, const TracefsDir& dir,
                                const KernelFeatures& features);
ResolveOptions ResolveOptionsOf(const Options& options);
// $XDG_CACHE_HOME/kprobectl, else ~/.cache/kprobectl; empty when neither is set.
std::string DefaultCacheDir();
IndexOptions MakeIndexOptions(const Options& options, std::ostream& err, const std::string& path);
// With -v: how the debuginfo's names were looked up (cache read, built, scan).
void ReportIndex(const Target& target, const Options& options, std::ostream& err);
// The instances left out (unless -q), and with -v the notes.
void ReportResolution(const Resolution& resolution, const Options& options, std::ostream& err);
Result<std::unique_ptr<TracefsDir>> OpenTracefs(const Options& options, bool may_mount = true);
// The passes add, -D and trace --probe share: Resolve, NameEvents (what it
// reports goes to `err`), Synthesize. `origins` receives each definition's.
// `keep_entry_args`: trace's and hist's (ResolveOptions::keep_entry_args).
Result<std::vector<TraceEventDef>> ResolveToDefinitions(const std::vector<ProbeSpec>& specs, Target& target,
                                                        const SystemView& system, const Options& options,
                                                        EventNamer& namer, std::ostream& err,
                                                        std::vector<ProbeOrigin>* origins = nullptr,
                                                        bool keep_entry_args = false);
// "(on compute+4 in /path/demo with a b)" as perf prints it; with `source`
// (from the DWARF) "(on compute:3@/src/demo.c in /path/demo with a b)".
std::string DescribeDefinition(const TraceEventDef& def, const ElfImage* image, const std::string& source = "");
// What it says after "on": "compute:3@/src/demo.c in /path/demo".
std::string WhereDefined(const TraceEventDef& def, const ElfImage* image, const std::string& source = "");

}  // namespace kprobectl::cli
