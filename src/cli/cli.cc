// SPDX-License-Identifier: GPL-2.0-or-later
//
// Argument parsing (CLI11 lives only here). Two spellings of every command:
//   kprobectl [-x BIN] add SPEC [ARG...]     kprobectl [-x BIN] -a 'SPEC ARG...'
//   kprobectl del PATTERN...                 kprobectl -d PATTERN
//   kprobectl list [PATTERN...]              kprobectl -l [PATTERN]
//   kprobectl funcs [FILTER]                 kprobectl -F [FILTER]
//   kprobectl line FUNC[:RLN[+NUM|-RLN2]]    kprobectl -L ...
//   kprobectl vars PROBE                     kprobectl -V PROBE
//   kprobectl add --dry-run SPEC             kprobectl -D 'SPEC ARG...'
// Words after the options with no command are one probe, as in perf probe.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "kprobectl/cli.h"
#include "kprobectl/kernel_image.h"
#include "kprobectl/strings.h"

namespace kprobectl {

namespace {

void PrintError(const Error& error, std::ostream& err) {
  err << "kprobectl: error: " << error.message << "\n";
  if (!error.hint.empty()) err << "  hint: " << error.hint << "\n";
}

}  // namespace

int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  cli::Options options;
  CLI::App app{"kprobectl: kernel and user-space dynamic probes from the command line"};
  app.name("kprobectl");
  app.set_version_flag("--version", "kprobectl 0.1.0");
  app.require_subcommand(0, 1);
  app.fallthrough();

  std::vector<std::string> add_specs, del_patterns, definitions, words;
  std::string list_pattern, funcs_filter, line_range, vars_spec;
  app.add_option("-x,--exec", options.exec, "Probe user space: an executable or shared library (path or name in PATH)");
  app.add_option("-k,--vmlinux", options.vmlinux, "Kernel image with debuginfo, for kernel probes");
  app.add_option("-m,--module", options.module, "Kernel module: a loaded module's name, or PATH.ko");
  app.add_option("-s,--source", options.source_dirs, "Directory to find source files in (repeatable)");
  app.add_flag("--no-inlines", options.no_inlines, "Leave out inlined copies of functions");
  bool no_cache = false;
  app.add_flag("--no-cache", no_cache, "Neither read nor write the debuginfo index cache");
  app.add_flag("--externs", options.externs, "vars: show global variables too");
  app.add_flag("--range", options.ranges, "vars: show where each variable has a location");
  app.add_option("--tracefs", options.tracefs, "Use this tracefs directory instead of finding the mounted one");
  app.add_flag("-f,--force", options.force, "add: append _1, _2... to names that exist; del: disable enabled events first");
  app.add_flag("-q,--quiet", options.quiet, "Print only errors");
  app.add_flag("-v,--verbose", options.verbose, "Show every line written to tracefs");
  app.add_flag("-n,--dry-run", options.dry_run, "Print the probe definitions, write nothing");
  app.add_option("--maxactive", options.maxactive, "Return probes: instances tracked at once (kprobes only)");
  app.add_option("-a,--add", add_specs, "Add a probe: 'SPEC [ARG...]' (repeatable)");
  app.add_option("-D,--definition", definitions, "Print the definition for 'SPEC [ARG...]', write nothing (repeatable)");
  app.add_option("-d,--del", del_patterns, "Delete events matching [GROUP:]EVENT globs (repeatable)");
  auto* list_flag = app.add_option("-l,--list", list_pattern, "List probe events, optionally matching [GROUP:]EVENT")
                        ->expected(0, 1);
  auto* funcs_flag = app.add_option("-F,--funcs", funcs_filter, "List functions that can be probed (a filter glob)")
                         ->expected(0, 1);
  app.add_option("-L,--line", line_range, "Show source lines that can be probed: FUNC[:RLN[+NUM|-RLN2]] or SRC[:ALN...]");
  app.add_option("-V,--vars", vars_spec, "Show the variables available at a probe point");
  app.add_option("probe", words, "Probe to add: SPEC [ARG...] (perf probe style)");

  std::vector<std::string> add_words, del_words, list_words;
  std::string funcs_words;
  auto* add = app.add_subcommand("add", "Add probe events: add [-a 'SPEC ARG...']... [SPEC [ARG...]]");
  add->add_option("probe", add_words, "SPEC [ARG...]: the words make one probe");
  add->add_option("-a", add_specs, "Another probe, 'SPEC [ARG...]' (repeatable)");
  auto* del = app.add_subcommand("del", "Delete probe events: del [GROUP:]EVENT...");
  del->add_option("pattern", del_words, "[GROUP:]EVENT globs")->required();
  auto* list = app.add_subcommand("list", "List probe events: list [[GROUP:]EVENT...]");
  list->add_option("pattern", list_words, "[GROUP:]EVENT globs");
  auto* funcs = app.add_subcommand("funcs", "List probe-able functions: funcs [FILTER]");
  funcs->add_option("filter", funcs_words, "Glob filter: '!', '&', '|' and parentheses combine globs");
  std::string line_words, vars_words;
  auto* line = app.add_subcommand("line", "Show source lines that can be probed: line FUNC[:RLN[+NUM|-RLN2]]");
  line->add_option("range", line_words, "FUNC[:RLN[+NUM|-RLN2]] or SRC[:ALN[+NUM|-ALN2]]")->required();
  auto* vars = app.add_subcommand("vars", "Show the variables available at a probe point: vars PROBE");
  vars->add_option("probe", vars_words, "A probe point, e.g. FUNC:RLN")->required();
  auto* clean = app.add_subcommand("clean", "Remove what a killed 'kprobectl trace' left in tracefs");
  for (CLI::App* sub : {add, del, list, funcs, line, vars, clean}) sub->fallthrough();

  // Everything after "--" is the command trace runs.
  cli::TraceOptions trace_options;
  std::vector<std::string> own_args = args;
  if (auto dashes = std::find(own_args.begin(), own_args.end(), "--"); dashes != own_args.end()) {
    trace_options.command.assign(dashes + 1, own_args.end());
    own_args.erase(dashes, own_args.end());
  }
  auto* trace = app.add_subcommand("trace", "Trace probe events: trace [GROUP:EVENT-GLOB...] [-- COMMAND ARGS...]");
  trace->add_option("events", trace_options.events, "[GROUP:]EVENT globs (default: every probe* group)");
  trace->add_option("--probe", trace_options.probes, "A temporary probe, 'SPEC [ARG...]', removed at the end (repeatable)");
  trace->add_option("-d,--duration", trace_options.duration, "Stop after this many seconds");
  trace->add_option("-o,--output", trace_options.output, "Write the events to FILE");
  trace->add_flag("--json", trace_options.json, "One JSON object per event");
  trace->add_option("--filter", trace_options.filter, "Kernel-side event filter, e.g. 'a > 5'");
  trace->add_option("--pid", trace_options.pid, "Only events of this process");
  trace->add_flag("-a,--all", trace_options.all, "With -- COMMAND: events of the whole system, not only the command's");
  trace->add_flag("-n,--dry-run", options.dry_run, "Print the probes it would add and the events it would trace");
  trace->add_flag("--latency", trace_options.latency, "Time each call from entry to return; histograms at the end");
  trace->add_option("--buffer-size", trace_options.buffer_kb, "Ring buffer per CPU, in KB");
  trace->fallthrough();

  std::vector<std::string> reversed(own_args.rbegin(), own_args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    app.exit(e, out, err);
    return 0;
  } catch (const CLI::CallForVersion& e) {
    out << "kprobectl 0.1.0\n";
    return 0;
  } catch (const CLI::ParseError& e) {
    PrintError({e.what(), "see 'kprobectl --help'"}, err);
    return 2;
  }

  if (!no_cache) options.cache_dir = cli::DefaultCacheDir();
  const char* runtime_dir = std::getenv("KPROBECTL_RUNTIME_DIR");
  options.runtime_dir = runtime_dir ? runtime_dir : KernelEnv::Running().runtime_dir;
  options.progress = &err == &std::cerr && isatty(STDERR_FILENO);
  cli::Streams io{out, err};
  Result<void> result;
  auto joined = [](const std::vector<std::string>& w) { return Join(w, " "); };
  if (*trace) {
    if (trace_options.duration < 0) {
      PrintError({"--duration must be positive", ""}, err);
      return 2;
    }
    auto status = cli::RunTrace(options, trace_options, io);
    if (!status) {
      PrintError(status.error(), err);
      return 1;
    }
    return *status;
  }
  if (!trace_options.command.empty()) {
    PrintError({"a command after -- is for 'kprobectl trace'", "kprobectl trace [EVENTS] -- COMMAND ARGS..."}, err);
    return 2;
  }
  if (*add) {
    if (!add_words.empty()) add_specs.push_back(joined(add_words));
    if (add_specs.empty()) {
      PrintError({"add needs a probe", "e.g. kprobectl -x ./demo add 'compute $arg1 $arg2'"}, err);
      return 2;
    }
    result = cli::RunAdd(options, add_specs, io);
  } else if (*del) {
    result = cli::RunDel(options, del_words, io);
  } else if (*clean) {
    result = cli::RunClean(options, io);
  } else if (*list || list_flag->count()) {
    if (!list_pattern.empty()) list_words.push_back(list_pattern);
    result = cli::RunList(options, list_words, io);
  } else if (*funcs || funcs_flag->count()) {
    result = cli::RunFuncs(options, !funcs_words.empty() ? funcs_words : funcs_filter, io);
  } else if (*line || !line_range.empty()) {
    result = cli::RunLine(options, *line ? line_words : line_range, io);
  } else if (*vars || !vars_spec.empty()) {
    result = cli::RunVars(options, *vars ? vars_words : vars_spec, io);
  } else if (!del_patterns.empty()) {
    result = cli::RunDel(options, del_patterns, io);
  } else if (!definitions.empty()) {
    options.dry_run = true;
    result = cli::RunAdd(options, definitions, io);
  } else {
    if (!words.empty()) add_specs.push_back(joined(words));
    if (add_specs.empty()) {
      out << app.help();
      return 2;
    }
    result = cli::RunAdd(options, add_specs, io);
  }
  if (!result) {
    PrintError(result.error(), err);
    return 1;
  }
  return 0;
}

}  // namespace kprobectl
