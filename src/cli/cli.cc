// SPDX-License-Identifier: GPL-2.0-or-later
//
// Argument parsing (CLI11 lives only here). Two spellings of every command:
//   kprobectl [-x BIN] add SPEC [ARG...]     kprobectl [-x BIN] -a 'SPEC ARG...'
//   kprobectl del PATTERN...                 kprobectl -d PATTERN
//   kprobectl list [PATTERN...]              kprobectl -l [PATTERN]
//   kprobectl funcs [--sdt] [FILTER]         kprobectl -F [FILTER]
//   kprobectl line FUNC[@SRC][:N[+M|-N2]]   kprobectl -L ...
//   kprobectl vars PROBE                     kprobectl -V PROBE
//   kprobectl add --dry-run SPEC             kprobectl -D 'SPEC ARG...'
// Words after the options with no command are one probe, as in perf probe.
#include "kprobectl/cli.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>

#include "commands.h"
#include "kprobectl/kernel_image.h"
#include "kprobectl/strings.h"

namespace kprobectl {

namespace {

void PrintError(const Error& error, std::ostream& err) {
  err << "kprobectl: error: " << error.message << "\n";
  if (!error.hint.empty()) err << "  hint: " << error.hint << "\n";
}

}  // namespace

namespace {

// Everything the command line can say, filled in by CLI11.
struct CommandLine {
  cli::Options options;
  cli::TraceOptions trace;
  std::string stack;  // trace --stack[=MODE], as written
  bool no_cache = false;
  bool bootconfig = false, cmdline = false;
  std::vector<std::string> add_specs, del_patterns, definitions, words;
  std::string list_pattern, funcs_filter, line_range, vars_spec;
  std::vector<std::string> add_words, del_words, list_words;
  std::string funcs_words, line_words, vars_words;
  CLI::Option* list_flag = nullptr;
  CLI::Option* funcs_flag = nullptr;
  // perf's one-letter commands (-a -D -d -l -F -L -V), in declaration order.
  std::vector<CLI::Option*> action_flags;
  std::vector<CLI::Option*> paths;  // -x, -k, -m: never empty when given
  CLI::App *add = nullptr, *del = nullptr, *list = nullptr, *funcs = nullptr, *line = nullptr, *vars = nullptr,
           *trace_command = nullptr, *clean = nullptr, *hist_command = nullptr;
  AggregationWords aggregate;  // hist's
  cli::ServeOptions serve;
  CLI::App* serve_command = nullptr;
};

// The options before any command, and perf's one-letter commands.
void DeclareGlobalOptions(CLI::App& app, CommandLine& c) {
  cli::Options& o = c.options;
  c.paths = {app.add_option("-x,--exec", o.exec, "Probe user space: an executable or shared library (path, or a name)"),
             app.add_option("-k,--vmlinux", o.vmlinux, "Kernel image with debuginfo, for kernel probes"),
             app.add_option("-m,--module", o.module, "Kernel module: a loaded module's name, or PATH.ko")};
  app.add_option("-s,--source", o.source_dirs, "Directory to find source files in (repeatable)");
  app.add_flag("--no-inlines", o.no_inlines, "Leave out inlined copies of functions");
  app.add_flag("--no-cache", c.no_cache, "Neither read nor write the debuginfo index cache");
  app.add_flag("--externs", o.externs, "vars: show global variables too");
  app.add_flag("--range", o.ranges, "vars: show where each variable has a location");
  app.add_option("--tracefs", o.tracefs, "Use this tracefs directory instead of finding the mounted one");
  app.add_flag("-f,--force", o.force, "add: append _1, _2... to names that exist; del: disable enabled events first");
  app.add_flag("-q,--quiet", o.quiet, "Print only errors");
  app.add_flag("-v,--verbose", o.verbose, "Show every line written to tracefs");
  app.add_flag("-n,--dry-run", o.dry_run,
               "add: do everything but write: say what would be added (perf's dry run; -D prints definitions)");
  app.add_option("--max-probes", o.max_probes,
                 "The most probes one spec may make (a glob, a much-inlined function); 0: no limit")
      ->default_val(128);
  app.add_option("--filter", o.filter,
                 "funcs: the functions to list, vars: the variables to show (globs combined with ! & | ( ))");
  app.add_flag("--demangle-kernel", o.demangle_kernel,
               "Kernel symbols demangled (perf's option; kprobectl shows C++ names demangled anyway)");
  app.add_flag("--bootconfig", c.bootconfig,
               "Print the kernel probes as a bootconfig defines them at boot "
               "(ftrace.event.kprobes.EVENT.probes), write nothing");
  app.add_flag("--cmdline", c.cmdline,
               "Print the kernel probes as the kernel command line's kprobe_event= "
               "defines them at boot, write nothing");
  app.add_option("--maxactive", o.maxactive, "Kernel return probes: instances tracked at once");
  app.add_flag("--fprobe", o.fprobe, "Kernel function entries and returns as fprobe events (Linux 6.5)");
  app.add_option("--target-ns", o.target_ns,
                 "With -x: the binary as process PID sees it, in its mount namespace (a container)")
      ->type_name("PID");
  app.add_flag("--sdt", o.sdt, "funcs: list the binary's USDT markers (SDT notes) instead of its functions");
  app.add_flag("--json", o.json, "list, funcs, vars: JSON, one object a line (trace and hist take it too)");
  app.add_option("--btf", o.btf_file,
                 "Kernel parameters and types from BTF, even where there is DWARF; with FILE, from that file "
                 "(raw BTF, or an ELF file's .BTF)")
      ->expected(0, 1)
      ->type_name("[FILE]");
  c.list_flag = app.add_option("-l,--list", c.list_pattern, "List probe events, optionally matching [GROUP:]EVENT")
                    ->expected(0, 1);
  c.funcs_flag =
      app.add_option("-F,--funcs", c.funcs_filter, "List functions that can be probed (a filter glob)")->expected(0, 1);
  c.action_flags = {
      app.add_option("-a,--add", c.add_specs, "Add a probe: 'SPEC [ARG...]' (repeatable)"),
      app.add_option("-D,--definition", c.definitions,
                     "Print the definition for 'SPEC [ARG...]', write nothing (repeatable)"),
      app.add_option("-d,--del", c.del_patterns, "Delete events matching [GROUP:]EVENT globs (repeatable)"),
      c.list_flag,
      c.funcs_flag,
      app.add_option("-L,--line", c.line_range,
                     "Show source lines that can be probed: FUNC[@SRC][:START[+COUNT|-END]] or SRC[:START...]"),
      app.add_option("-V,--vars", c.vars_spec, "Show the variables available at a probe point")};
  app.add_option("probe", c.words, "Probe to add: SPEC [ARG...] (perf probe style)");
}

void DeclareCommands(CLI::App& app, CommandLine& c) {
  c.add = app.add_subcommand("add", "Add probe events: add [-a 'SPEC ARG...']... [SPEC [ARG...]]");
  c.add->add_option("probe", c.add_words, "SPEC [ARG...]: the words make one probe");
  c.add->add_option("-a", c.add_specs, "Another probe, 'SPEC [ARG...]' (repeatable)");
  c.del = app.add_subcommand("del", "Delete probe events: del [GROUP:]EVENT...");
  c.del->add_option("pattern", c.del_words, "[GROUP:]EVENT globs")->required();
  c.list = app.add_subcommand("list", "List probe events: list [[GROUP:]EVENT...]");
  c.list->add_option("pattern", c.list_words, "[GROUP:]EVENT globs");
  c.funcs = app.add_subcommand("funcs", "List probe-able functions: funcs [FILTER] (or --filter FILTER)");
  c.funcs->add_option("filter", c.funcs_words, "Glob filter: '!', '&', '|' and parentheses combine globs");
  c.line = app.add_subcommand("line", "Show source lines that can be probed: line FUNC[@SRC][:START[+COUNT|-END]]");
  c.line->add_option("range", c.line_words, "FUNC[@SRC][:START[+COUNT|-END]] or SRC[:START[+COUNT|-END]]")->required();
  c.vars = app.add_subcommand("vars", "Show the variables available at a probe point: vars PROBE");
  c.vars->add_option("probe", c.vars_words, "A probe point, e.g. FUNC:RLN")->required();
  c.clean = app.add_subcommand("clean", "Remove what a killed 'kprobectl trace' left in tracefs");
  for (CLI::App* sub : {c.add, c.del, c.list, c.funcs, c.line, c.vars, c.clean}) sub->fallthrough();
}

void DeclareTrace(CLI::App& app, CommandLine& c) {
  cli::TraceOptions& t = c.trace;
  CLI::App* trace = app.add_subcommand("trace", "Trace probe events: trace [GROUP:EVENT-GLOB...] [-- COMMAND ARGS...]");
  trace->add_option("events", t.events, "[GROUP:]EVENT globs (default: every probe* group)");
  trace->add_option("--probe", t.probes, "A temporary probe, 'SPEC [ARG...]', removed at the end (repeatable)");
  trace->add_option("-d,--duration", t.duration, "Stop after this many seconds");
  trace->add_option("-o,--output", t.output, "Write the events (or the --format's picture) to FILE");
  trace->add_flag("--json", t.json, "One JSON object per event (--format json)");
  trace
      ->add_option("--format", t.format,
                   "What to write: text (the default), json, folded (stacks, for flame graph tools), flamegraph "
                   "(an SVG), heatmap (an SVG of --latency), timeline (Trace Event Format JSON, for Perfetto)")
      ->type_name("FORMAT");
  trace->add_option("--filter", t.filter, "Kernel-side event filter, e.g. 'a > 5'");
  trace->add_option("--pid", t.pid, "Only events of this process");
  trace->add_flag("-a,--all", t.all, "With -- COMMAND: events of the whole system, not only the command's");
  trace->add_flag("-n,--dry-run", c.options.dry_run, "Print the probes it would add and the events it would trace");
  trace->add_flag("--latency", t.latency, "Time each call from entry to return; histograms at the end");
  trace->add_option("--buffer-size", t.buffer_kb, "Ring buffer per CPU, in KB");
  // A flag with an optional =VALUE: '--stack' never takes the next word.
  trace->add_flag("--stack{auto}", c.stack,
                  "A call stack after each event, symbolised: --stack (each probe's own side), --stack=kernel, "
                  "--stack=user, --stack=both");
  trace->fallthrough();
  c.trace_command = trace;
}

// hist: trace's way of running, counting instead of printing. Keys and
// modifiers as the kernel's hist triggers (and trace-cmd hist) spell them,
// comm and pid as bpftrace's.
void DeclareHist(CLI::App& app, CommandLine& c) {
  cli::TraceOptions& t = c.trace;
  AggregationWords& a = c.aggregate;
  CLI::App* hist = app.add_subcommand(
      "hist", "Count probe events by key, in the kernel: hist [GROUP:EVENT-GLOB...] -k KEY [-- COMMAND ARGS...]");
  hist->add_option("events", t.events, "[GROUP:]EVENT globs (default: every probe* group)");
  hist->add_option("--probe", t.probes, "A temporary probe, 'SPEC [ARG...]', removed at the end (repeatable)");
  hist->add_option("-k,--key", a.keys,
                   "Count by: comm, pid, kstack (the kernel's stack), ustack (user space's), an argument's NAME, "
                   "NAME.log2, NAME.buckets=N (repeatable, or KEY,KEY; default comm)");
  hist->add_option("--sum", a.sums, "Also sum this argument per key (repeatable)");
  hist->add_option("--max", a.maxes, "Also keep this argument's maximum per key (repeatable; kprobectl counts)");
  hist->add_option("--sort", a.sort,
                   "Sort by a column: hits, a key, sum(NAME), max(NAME); .ascending or .descending (default: hits, "
                   "descending)");
  hist->add_option("--top", a.top, "Print only the first N rows");
  hist->add_option("-i,--interval", t.interval,
                   "Print the counts every SECONDS (and start again, unless --cumulative)");
  hist->add_flag("--cumulative", t.cumulative, "With -i: keep counting across intervals");
  hist->add_flag("--latency", t.latency,
                 "Count return probes by the time since their entry (key ns.log2), paired per thread in the kernel");
  hist->add_flag("--in-user-space", t.user_space,
                 "Count in kprobectl, copying every event, even where the kernel's hist triggers could");
  hist->add_option("-d,--duration", t.duration, "Stop after this many seconds");
  hist->add_option("-o,--output", t.output, "Write the counts (or the --format's picture) to FILE");
  hist->add_flag("--json", t.json, "One JSON object per table (--format json); with -i, a stream of them");
  hist->add_option("--format", t.format,
                   "What to write: text (the default), json, folded (stack keys' stacks, for flame graph tools), "
                   "flamegraph (an SVG of the stack keys), heatmap (an SVG of --latency, a column every -i)")
      ->type_name("FORMAT");
  hist->add_option("--filter", t.filter, "Count only events that pass this filter, e.g. 'a > 5'");
  hist->add_option("--pid", t.pid, "Only events of this process");
  hist->add_flag("-a,--all", t.all, "With -- COMMAND: events of the whole system, not only the command's");
  hist->add_flag("-n,--dry-run", c.options.dry_run, "Print the probes it would add and the triggers it would write");
  hist->add_option("--buffer-size", t.buffer_kb, "Ring buffer per CPU, in KB (when kprobectl counts)");
  hist->fallthrough();
  c.hist_command = hist;
  CLI::App* serve = app.add_subcommand(
      "serve", "Keep a file's probes and aggregations in place and serve their counts to Prometheus at /metrics");
  serve->add_option("-c,--config", c.serve.config, "The configuration: probe and hist lines (see the manual)")
      ->required();
  serve->add_option("--listen", c.serve.listen, "ADDRESS:PORT to listen on (default 127.0.0.1:9464, or the file's)");
  serve->add_option("--web.config.file", c.serve.web_config,
                    "TLS and basic authentication, in the Prometheus exporter-toolkit's format (see the manual)");
  serve->add_flag("--insecure", c.serve.insecure,
                  "Listen beyond loopback without TLS or authentication (refused without it)");
  serve->fallthrough();
  c.serve_command = serve;
}

// --version: the version, and what this build can do.
std::string VersionText() {
  std::string architectures;
  for (const Arch& arch : Architectures())
    architectures += (architectures.empty() ? "" : ", ") + std::string(arch.name());
  return "kprobectl " KPROBECTL_VERSION
         "\n"
         "architectures: " +
         architectures +
         " (each target's own, from its ELF machine or the running kernel's)\n"
         "probes: kprobes, kretprobes, fprobes (--fprobe), tracepoint probes (tp:), event probes (ev:), uprobes, "
         "uretprobes, USDT markers with semaphores, boot-time definitions (--cmdline, --bootconfig); tracefs "
         "kprobe_events, uprobe_events, dynamic_events; each kernel feature as the kernel's tracefs README and "
         "config say\n"
         "user space: C, C++ (demangled names, overloads), Go (results by name, goroutines), Rust (demangled "
         "names, strings); binaries in containers (--target-ns)\n"
         "debuginfo: DWARF 2-5 through libdw " KPROBECTL_LIBDW_VERSION
         " (split functions, inlined copies, clones), index cache, debuginfod (when DEBUGINFOD_URLS is set); "
         "kernel BTF through libbpf when there is no DWARF (--btf)\n"
         "kernel modules: .ko, .ko.xz, .ko.zst, also before they load; read against the kernel they were built for\n"
         "trace: libtracefs and libtraceevent (text, JSON, latency, stacks)\n"
         "hist: counts, sums and log2 latencies, in the kernel (hist triggers, synthetic events) where it can, "
         "else in kprobectl\n"
         "serve: the hist aggregations as Prometheus metrics (libmicrohttpd, loaded when serve runs)";
}

// How a message names an option: perf's "switch -d", by its short name.
std::string SwitchName(const CLI::Option* option) {
  return "switch " +
         (option->get_snames().empty() ? "--" + option->get_lnames().front() : "-" + option->get_snames().front());
}

// The actions the command line asks for (perf-style options in the order
// given, then subcommands and a probe's words); more than one is a
// mistake, never a guess.
std::vector<std::string> Actions(const CommandLine& c, const CLI::App& app) {
  std::vector<std::string> out;
  std::vector<const CLI::Option*> seen;
  for (const CLI::Option* option : app.parse_order()) {
    bool action = std::find(c.action_flags.begin(), c.action_flags.end(), option) != c.action_flags.end();
    // -a before 'add' adds more probes with it.
    if (!action || (option == c.action_flags.front() && c.add->parsed())) continue;
    if (std::find(seen.begin(), seen.end(), option) == seen.end()) seen.push_back(option);
  }
  // -l and -F given no value are in no parse order.
  for (const CLI::Option* flag : {c.list_flag, c.funcs_flag})
    if (flag->count() && std::find(seen.begin(), seen.end(), flag) == seen.end()) seen.push_back(flag);
  for (const CLI::Option* option : seen) out.push_back(SwitchName(option));
  for (CLI::App* sub :
       {c.add, c.del, c.list, c.funcs, c.line, c.vars, c.clean, c.trace_command, c.hist_command, c.serve_command})
    if (*sub) out.push_back("the command '" + sub->get_name() + "'");
  if (!c.words.empty()) out.push_back("a probe ('" + Join(c.words, " ") + "')");
  return out;
}

// perf's "switch `a' requires a value" for an option given nothing.
std::optional<std::string> MissingValue(const CLI::ArgumentMismatch& e, const CLI::App& app) {
  std::string_view what = e.what();
  size_t colon = what.find(": ");
  if (colon == std::string_view::npos || !what.ends_with(" missing")) return std::nullopt;
  const CLI::Option* option = app.get_option_no_throw(std::string(what.substr(0, colon)));
  if (!option) return std::nullopt;
  return SwitchName(option) + " requires a value";
}

// What the command line asks for, run; its exit status.
int Dispatch(CommandLine& c, const CLI::App& app, cli::Streams io) {
  auto joined = [](const std::vector<std::string>& w) { return Join(w, " "); };
  cli::Options& o = c.options;
  Result<void> result;
  if (*c.add) {
    if (!c.add_words.empty()) c.add_specs.push_back(joined(c.add_words));
    if (c.add_specs.empty()) {
      PrintError({"add needs a probe", "e.g. kprobectl -x ./demo add 'compute $arg1 $arg2'"}, io.err);
      return 2;
    }
    result = cli::RunAdd(o, c.add_specs, io);
  } else if (*c.del) {
    result = cli::RunDel(o, c.del_words, io);
  } else if (*c.clean) {
    result = cli::RunClean(o, io);
  } else if (*c.list || c.list_flag->count()) {
    if (!c.list_pattern.empty()) c.list_words.push_back(c.list_pattern);
    result = cli::RunList(o, c.list_words, io);
  } else if (*c.funcs || c.funcs_flag->count()) {
    // The filter as perf spells it (--filter) or as a word (funcs FILTER, -F FILTER).
    std::string word = !c.funcs_words.empty() ? c.funcs_words : c.funcs_filter;
    if (!word.empty() && !o.filter.empty() && word != o.filter) {
      PrintError({"two filters: '" + word + "' and --filter '" + o.filter + "'", "give one"}, io.err);
      return 2;
    }
    result = cli::RunFuncs(o, !word.empty() ? word : o.filter, io);
  } else if (*c.line || !c.line_range.empty()) {
    result = cli::RunLine(o, *c.line ? c.line_words : c.line_range, io);
  } else if (*c.vars || !c.vars_spec.empty()) {
    result = cli::RunVars(o, *c.vars ? c.vars_words : c.vars_spec, io);
  } else if (!c.del_patterns.empty()) {
    result = cli::RunDel(o, c.del_patterns, io);
  } else if (!c.definitions.empty()) {
    o.definitions = true;
    result = cli::RunAdd(o, c.definitions, io);
  } else {
    if (!c.words.empty()) c.add_specs.push_back(joined(c.words));
    if (c.add_specs.empty()) {  // nothing asked: the usage, as an error's
      io.err << app.help();
      return 2;
    }
    result = cli::RunAdd(o, c.add_specs, io);
  }
  if (!result) {
    PrintError(result.error(), io.err);
    return 1;
  }
  return 0;
}

int DispatchTrace(CommandLine& c, cli::Streams io) {
  c.trace.json |= c.options.json;  // kprobectl --json trace ...
  if (c.trace.duration < 0) {
    PrintError({"--duration must be positive", ""}, io.err);
    return 2;
  }
  auto stack = cli::ParseStackMode(c.stack);
  if (!stack) {
    PrintError(stack.error(), io.err);
    return 1;
  }
  c.trace.stack = *stack;
  auto status = cli::RunTrace(c.options, c.trace, io);
  if (!status) {
    PrintError(status.error(), io.err);
    return 1;
  }
  return *status;
}

}  // namespace

int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return RunCli(args, out, err, KernelEnv::Running());
}

int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, const KernelEnv& env) {
  CommandLine c;
  c.options.env = env;
  CLI::App app{"kprobectl: kernel and user-space dynamic probes from the command line"};
  app.name("kprobectl");
  app.set_version_flag("--version", VersionText());
  app.require_subcommand(0, 1);
  app.fallthrough();
  DeclareGlobalOptions(app, c);
  DeclareCommands(app, c);
  DeclareTrace(app, c);
  DeclareHist(app, c);
  // Everything after "--" is the command trace runs.
  std::vector<std::string> own_args = args;
  if (auto dashes = std::find(own_args.begin(), own_args.end(), "--"); dashes != own_args.end()) {
    c.trace.command.assign(dashes + 1, own_args.end());
    own_args.erase(dashes, own_args.end());
  }
  std::vector<std::string> reversed(own_args.rbegin(), own_args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    app.exit(e, out, err);
    return 0;
  } catch (const CLI::CallForVersion& e) {
    out << VersionText() << "\n";
    return 0;
  } catch (const CLI::ArgumentMismatch& e) {
    PrintError({MissingValue(e, app).value_or(e.what()), "see 'kprobectl --help'"}, err);
    return 2;
  } catch (const CLI::ParseError& e) {
    PrintError({e.what(), "see 'kprobectl --help'"}, err);
    return 2;
  }
  if (!c.no_cache) c.options.cache_dir = cli::DefaultCacheDir();
  if (c.bootconfig && c.cmdline) {
    PrintError({"--bootconfig and --cmdline were both given", "pick the form the kernel is booted with"}, err);
    return 2;
  }
  if (c.bootconfig) c.options.boot_form = "bootconfig";
  if (c.cmdline) c.options.boot_form = "cmdline";
  // A boot form prints definitions (as -D), writing nothing.
  if (!c.options.boot_form.empty()) c.options.definitions = c.options.dry_run = true;
  c.options.btf = app.count("--btf") > 0;
  const char* runtime_dir = std::getenv("KPROBECTL_RUNTIME_DIR");
  c.options.runtime_dir = runtime_dir ? runtime_dir : env.runtime_dir;
  c.options.progress = &err == &std::cerr && isatty(STDERR_FILENO);
  auto actions = Actions(c, app);
  if (actions.size() > 1) {
    PrintError({actions[1] + " cannot be used with " + actions[0],
                "one action at a time: run kprobectl once for each (several probes go in one -a/-D each, or one "
                "'add -a ... -a ...')"},
               err);
    return 2;
  }
  bool lists = *c.funcs || c.funcs_flag->count() || *c.vars || !c.vars_spec.empty();
  if (!c.options.filter.empty() && !lists) {
    PrintError({"--filter is for funcs (-F) and vars (-V)", "trace's event filter is 'trace --filter EXPR'"}, err);
    return 2;
  }
  bool json_answers = lists || *c.list || c.list_flag->count() || *c.trace_command || *c.hist_command;
  if (c.options.json && !json_answers) {
    PrintError({"--json is for list, funcs, vars, trace and hist", "see 'kprobectl --help'"}, err);
    return 2;
  }
  for (CLI::Option* path : c.paths)
    if (path->count() && path->as<std::string>().empty()) {
      PrintError({path->get_name() + " was given an empty name", "give the file to probe (or leave the option out)"},
                 err);
      return 2;
    }
  cli::Streams io{out, err};
  if (*c.serve_command) {
    auto served = cli::RunServe(c.options, c.serve, io);
    if (served) return 0;
    PrintError(served.error(), err);
    return 1;
  }
  if (*c.hist_command) c.trace.aggregate = c.aggregate;
  if (*c.trace_command || *c.hist_command) return DispatchTrace(c, io);
  if (!c.trace.command.empty()) {
    PrintError({"a command after -- is for 'kprobectl trace' and 'kprobectl hist'",
                "kprobectl trace [EVENTS] -- COMMAND ARGS..."},
               err);
    return 2;
  }
  return Dispatch(c, app, io);
}

}  // namespace kprobectl
