// SPDX-License-Identifier: GPL-2.0-or-later
//
// trace (and hist, which counts what trace would print): the passes, in
// order. What must be undone (temporary probes, the instance, the command,
// the ring buffer's pipes) is made by a TracingRun (tracing_run.h), whose
// members say the teardown order: on every path (the command's end, -d, a
// signal, an error, a reader gone) its destructor takes it all down in
// reverse, with the stop signals still held.
//   1. what a killed run left behind is removed; temporary probes resolved;
//   2. the plan: events selected, hidden latency entries named (trace_plan);
//   3. the temporary probes recorded, then added, all or none;
//   4. a private instance, filtered to the command's processes (started,
//      held before exec) or --pid, then the events enabled there;
//   5. the command released; the tracer prints until it stops;
//   6. the summary; then instance, probes and record go, in that order.
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <string_view>
#include <utility>

#include "commands.h"
#include "hist_run.h"
#include "kprobectl/kernel_image.h"
#include "kprobectl/leftovers.h"
#include "kprobectl/probe_events.h"
#include "kprobectl/strings.h"
#include "kprobectl/trace_locations.h"
#include "kprobectl/trace_plan.h"
#include "kprobectl/trace_process.h"
#include "kprobectl/trace_session.h"
#include "kprobectl/trace_symbols.h"
#include "kprobectl/tracer.h"
#include "kprobectl/unwind.h"
#include "outputs.h"
#include "status_line.h"
#include "temporary_probes.h"
#include "trace_answers.h"
#include "tracing_run.h"

namespace kprobectl::cli {

namespace {

// Which stacks --stack records: the kernel's after kernel events, user
// space's after uprobes (auto), or as asked for every event. A user stack
// is unwound through CFI where the probe captured what that needs (the
// uprobes trace adds itself); elsewhere the kernel walks frame pointers
// (options/userstacktrace).
struct Stacks {
  bool kernel = false, user = false, own_side = false;
};

bool WantsUserStack(const TraceOptions& trace, ProbeKind kind) {
  return trace.stack == StackMode::kUser || trace.stack == StackMode::kBoth ||
         (trace.stack == StackMode::kAuto && kind == ProbeKind::kUser);
}

bool Captured(const TraceEventDef& def) {
  return std::any_of(def.args.begin(), def.args.end(),
                     [](const FetchArg& a) { return a.name.starts_with(kCaptureRegisterPrefix); });
}

Stacks StacksFor(const TraceOptions& trace, const TracePlan& plan) {
  Stacks out;
  out.own_side = trace.stack == StackMode::kAuto;
  for (const TraceEventDef& def : plan.events) {
    if (trace.stack == StackMode::kKernel || trace.stack == StackMode::kBoth ||
        (trace.stack == StackMode::kAuto && def.kind == ProbeKind::kKernel))
      out.kernel = true;
    if (WantsUserStack(trace, def.kind) && !Captured(def)) out.user = true;
  }
  return out;
}

}  // namespace

Result<StackMode> ParseStackMode(const std::string& text) {
  constexpr std::pair<std::string_view, StackMode> kModes[] = {{"", StackMode::kNone},
                                                               {"auto", StackMode::kAuto},
                                                               {"kernel", StackMode::kKernel},
                                                               {"user", StackMode::kUser},
                                                               {"both", StackMode::kBoth}};
  for (const auto& [name, mode] : kModes)
    if (text == name) return mode;
  return Fail("--stack=" + text + ": which stack to record is 'kernel', 'user' or 'both'",
              "--stack alone records each probe's own side: the kernel's stack for kernel probes, user space's for "
              "uprobes");
}

Result<std::vector<TraceEventDef>> ResolveTemporary(const Options& options, const TraceOptions& trace,
                                                    const TracefsDir& dir, const KernelFeatures& features,
                                                    EventNamer& namer, Streams io, bool keep_entry_args) {
  if (trace.probes.empty()) return std::vector<TraceEventDef>{};
  std::vector<ProbeSpec> specs;
  for (const std::string& text : trace.probes) specs.push_back(KP_TRY(ParseProbeSpec(text)));
  if (!options.dry_run) KP_TRY_VOID(RequireKernelTakes(specs, options, dir, features));
  Target target = KP_TRY(OpenTargetOf(options, io.err, true, AnyEventProbe(specs)));
  if (!options.dry_run) KP_TRY_VOID(CheckArchRunsHere(target, options.env));
  SystemView system = ReadSystemView(&dir, features, options.env, target, true);
  auto defs = KP_TRY(ResolveToDefinitions(specs, target, system, options, namer, io.err, nullptr, keep_entry_args));
  // Their user stacks, unwound through CFI: what that needs, captured.
  for (TraceEventDef& def : defs)
    if (def.kind == ProbeKind::kUser && WantsUserStack(trace, def.kind)) AddStackCapture(def, *target.arch);
  return defs;
}

// This run, as the records of temporary probes name it.
TraceRun Self(const KernelEnv& env) { return ProcessRun(env.proc, getpid()).value_or(TraceRun{getpid(), {}}); }

namespace {

// A captured user stack's frames, through each file's CFI, named.
UnwindFrames UnwindWith(Unwinder& unwinder, EventLocations& locations, const Arch& arch) {
  return [&unwinder, &locations, &arch](const EventPlan& plan, int pid, uint64_t probe_ip, const CapturedState& state) {
    CapturedStack stack;
    for (auto [dwarf, value] : state.registers) stack.registers[dwarf] = value;
    stack.pc_register = arch.pc_dwarf();
    stack.sp_register = arch.sp_dwarf();
    stack.stack_start = stack.registers.contains(stack.sp_register) ? stack.registers[stack.sp_register] : 0;
    stack.stack = state.stack;
    auto find = [&](uint64_t address) -> std::optional<LoadedFile> {
      auto loaded = locations.FileAt(pid, address, &plan, probe_ip);
      if (!loaded) return std::nullopt;
      return LoadedFile{loaded->path, loaded->bias};
    };
    std::vector<std::string> frames;
    std::optional<EventLocations::Loaded> callee;
    uint64_t callee_pc = 0;
    for (uint64_t pc : unwinder.Unwind(stack, find)) {
      auto loaded = locations.FileAt(pid, pc, &plan, probe_ip);
      if (loaded)
        frames.push_back(locations.FrameName(*loaded, pc));
      else if (callee && locations.UnderReturnProbe(*callee, callee_pc))
        frames.push_back("[uretprobe trampoline] (a return probe holds this frame's return address)");
      else
        frames.push_back(Hex(pc) + " ([unknown])");
      callee = loaded;
      callee_pc = pc;
    }
    return frames;
  };
}

// "group/event" as the kernel's trace names it: "group:event".
std::string FullNameOf(std::string path) { return path.replace(path.find('/'), 1, ":"); }

// -n: what would be added (temporary probes, hidden entries) and traced,
// and which return's arguments an entry keeps.
void PrintPlan(const TracePlan& plan, std::ostream& out) {
  for (const TraceEventDef& def : plan.add) out << FormatDefinition(def) << "\n";
  std::vector<std::string> traced;
  for (const TraceEventDef& def : plan.events)
    traced.push_back(def.FullName() + (plan.hidden.contains(def.Path()) ? " (hidden)" : ""));
  out << "# traced: " << Join(traced, " ") << "\n";
  for (const auto& [ret, kept] : plan.kept) {
    std::vector<std::string> names;
    for (const FetchArg& arg : kept.args)
      if (arg.at_entry) names.push_back(arg.name);
    out << "# kept for " << FullNameOf(ret) << " by " << FullNameOf(kept.entry) << ": " << Join(names, " ") << "\n";
  }
}

// Prints until the command ends, the time is up, a stop signal comes, or
// the output fails. A stop signal is passed on to the command.
Result<void> TraceLoop(const TraceOptions& trace, StopSignals& signals, TracedCommand* command, Tracer& tracer,
                       RingReader& reader, CommCache& comms, EventLocations& locations, uint64_t buffer_bytes,
                       const std::function<Result<void>()>& every = {}) {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(trace.duration * 1000));
  // User stacks are named from the processes' maps: the command's are
  // read often, before a short-lived one is gone.
  bool keep_maps = command && trace.stack != StackMode::kNone;
  auto last_drain = Clock::now();
  int interval = 100;
  // The stop signals, then the ring buffers: a flood wakes the loop when a
  // buffer is half full, whatever the interval.
  std::vector<pollfd> fds{{signals.fd(), POLLIN, 0}};
  for (int fd : reader.PollFds()) fds.push_back({fd, POLLIN, 0});
  for (bool stop = false; !stop;) {
    int timeout = std::min(interval, keep_maps ? 10 : 100);
    if (trace.duration > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      stop = left <= 0;
      timeout = static_cast<int>(std::clamp<int64_t>(left, 0, timeout));
    }
    if (!stop && poll(fds.data(), fds.size(), timeout) > 0 && fds[0].revents)
      for (int sig = signals.Next(); sig; sig = signals.Next()) {
        if (sig == SIGCHLD) continue;
        stop = true;
        if (command && !command->Poll()) kill(command->pid(), sig);
      }
    if (keep_maps) locations.RememberTree(command->pid());
    if (command && command->Poll()) stop = true;
    comms.Refresh();
    KP_TRY_VOID(tracer.Drain(reader));
    auto now = Clock::now();
    interval =
        DrainIntervalMs(tracer.busiest_bytes(), std::chrono::duration<double>(now - last_drain).count(), buffer_bytes);
    last_drain = now;
    if (every && !stop) KP_TRY_VOID(every());
  }
  return {};
}

// Events lost to overruns: the kernel's per-CPU counts, or what the pages
// said if more; `per_cpu` gets the CPUs that lost any.
uint64_t Lost(const Tracer& tracer, const TraceSession& session, std::vector<std::string>* per_cpu = nullptr) {
  auto stats = session.Stats();
  uint64_t counted = 0;
  for (size_t cpu = 0; cpu < stats.size(); ++cpu) {
    uint64_t n = stats[cpu].overrun + stats[cpu].dropped;
    counted += n;
    if (n && per_cpu) per_cpu->push_back("cpu" + std::to_string(cpu) + ": " + std::to_string(n));
  }
  return std::max(counted, tracer.missed());
}

// The summary line: events printed, lost (the kernel's per-CPU counts, or
// what the pages said if more), kernel return probes' misses, and returns
// whose kept arguments were unknown (their entries not recorded).
std::string Summary(uint64_t printed, std::string_view what, const Tracer& tracer, const TraceSession& session,
                    const ProbeEvents& events, const std::vector<TraceEventDef>& traced, uint64_t unknown) {
  std::vector<std::string> per_cpu;
  std::string summary = "kprobectl: " + std::to_string(printed) + " events " + std::string(what) + ", " +
                        std::to_string(Lost(tracer, session, &per_cpu)) + " lost to ring-buffer overruns";
  if (!per_cpu.empty()) summary += " (" + Join(per_cpu, ", ") + ")";
  std::vector<std::string> misses;
  for (ProbeKind kind : {ProbeKind::kKernel, ProbeKind::kUser}) {
    auto profile = events.Profile(kind);
    if (!profile) continue;
    for (const TraceEventDef& def : traced)
      if (def.retprobe && def.kind == kind)
        if (const ProfileEntry* entry = FindProfileEntry(*profile, def); entry && entry->misses.value_or(0) > 0)
          misses.push_back(def.FullName() + " " + std::to_string(*entry->misses));
  }
  if (!misses.empty()) summary += "; return probes missed: " + Join(misses, ", ");
  if (unknown)
    summary += "; " + std::to_string(unknown) + " returns with arguments kept by an entry that was not recorded (" +
               (what == "counted" ? "not counted" : "printed as ?") + ")";
  return summary;
}

// The events' formats, decoded, and how each prints.
struct Decoding {
  std::unique_ptr<EventDecoder> decoder;
  std::vector<EventPlan> plans;
  StackPlan stacks;
};

Result<Decoding> DecodingFor(const TracefsDir& dir, const TracePlan& plan, const Stacks& stacks,
                             EventLocations& locations) {
  std::vector<std::pair<std::string, std::string>> formats;
  for (const TraceEventDef& def : plan.events)
    formats.emplace_back(def.group, KP_TRY(dir.Read("events/" + def.Path() + "/format")));
  // The stack records' formats: ftrace's own events.
  if (stacks.kernel) formats.emplace_back("ftrace", KP_TRY(dir.Read("events/ftrace/kernel_stack/format")));
  if (stacks.user) formats.emplace_back("ftrace", KP_TRY(dir.Read("events/ftrace/user_stack/format")));
  Decoding out{KP_TRY(EventDecoder::FromFormats(formats)), {}, {}};
  std::map<std::string, size_t> index;  // "group/event" -> its plan
  for (size_t i = 0; i < plan.events.size(); ++i) {
    const TraceEventDef& def = plan.events[i];
    const std::string path = def.Path();
    EventPlan p = KP_TRY(PlanEvent(out.decoder->formats()[i], def.type == ProbeType::kEventProbe));
    p.kernel = def.kind == ProbeKind::kKernel;
    p.hidden = plan.hidden.contains(path);
    if (auto opens = plan.opens.find(path); opens != plan.opens.end()) p.opens = opens->second;
    p.latency_return = plan.returns.contains(path);  // a return instruction: timed from its function's entry
    locations.Locate(def, p);
    index[path] = out.plans.size();
    out.plans.push_back(std::move(p));
  }
  // The calls' entries and returns, paired as the plan says.
  for (const auto& [entry, returns] : plan.opens)
    for (const std::string& ret : returns) out.plans[index.at(ret)].call_key = ret;
  for (const auto& [ret, kept] : plan.kept)
    KP_TRY_VOID(PlanKeptArgs(out.plans[index.at(ret)], out.plans[index.at(kept.entry)], kept));
  const EventFormat* kernel = nullptr;
  const EventFormat* user = nullptr;
  for (size_t i = plan.events.size(); i < out.decoder->formats().size(); ++i) {
    const EventFormat& f = out.decoder->formats()[i];
    (f.name == "kernel_stack" ? kernel : user) = &f;
  }
  out.stacks = PlanStacks(kernel, user);
  out.stacks.own_side = stacks.own_side;
  return out;
}

// The session's filters, then its events on: after the command's pid is in.
Result<void> EnableAll(TraceSession& session, const TracePlan& plan, const TraceOptions& trace) {
  for (const TraceEventDef& def : plan.events) {
    std::string name = def.Path();
    if (!trace.filter.empty() && !plan.hidden.contains(name)) KP_TRY_VOID(session.SetFilter(name, trace.filter));
    KP_TRY_VOID(session.Enable(name));
  }
  return {};
}

// Where the trace goes: standard output, or -o FILE.
struct Output {
  std::ofstream file;
  std::ostream* stream = nullptr;
  std::string name;
};

Result<void> OpenOutput(const TraceOptions& trace, Streams io, Output& out) {
  out.stream = &io.out;
  out.name = "standard output";
  if (trace.output.empty()) return {};
  out.file.open(trace.output, std::ios::out | std::ios::trunc | std::ios::binary);
  if (!out.file) return Fail("cannot write '" + trace.output + "': " + std::strerror(errno));
  out.stream = &out.file;
  out.name = trace.output;
  return {};
}

// The traced probes' hits in the kernel's profiles (every process's), for
// the live status where the kernel counts.
uint64_t TracedProbeHits(const ProbeEvents& events, const std::vector<TraceEventDef>& traced) {
  uint64_t hits = 0;
  for (ProbeKind kind : {ProbeKind::kKernel, ProbeKind::kUser}) {
    auto profile = events.Profile(kind);
    if (!profile) continue;
    for (const TraceEventDef& def : traced)
      if (def.kind == kind)
        if (const ProfileEntry* entry = FindProfileEntry(*profile, def)) hits += entry->hits;
  }
  return hits;
}

// Temporary probes resolved, then the plan.
Result<TracePlan> PlanFor(const Options& options, const TraceOptions& trace, const TracingRun& run, Streams io) {
  EventNamer namer(KP_TRY(run.events().Names()), true);
  // A return's arguments the kernel cannot keep: kept by an entry probe
  // of ours, paired with it by PlanTrace (trace_plan.h).
  auto temporary = KP_TRY(ResolveTemporary(options, trace, run.dir(), run.features(), namer, io, true));
  std::vector<TraceEventDef> existing = KP_TRY(run.events().List());
  // --latency: Go's FUNC%return is probes on return instructions, timed
  // from the function's entry as a return probe is.
  std::map<std::string, std::optional<ElfImage>> images;
  auto return_site_of = [&](const TraceEventDef& def) -> std::optional<ReturnSite> {
    if (def.kind != ProbeKind::kUser || def.target.kind != ProbeTarget::kFile) return std::nullopt;
    auto [at, added] = images.try_emplace(def.target.path);
    if (added)
      if (auto image = ElfImage::Open(def.target.path)) at->second = std::move(*image);
    return at->second ? GoReturnSite(def, *at->second) : std::nullopt;
  };
  return PlanTrace({trace.events, trace.latency}, existing, temporary, namer, return_site_of);
}

}  // namespace

Result<int> RunTrace(const Options& options, const TraceOptions& given, Streams io) {
  OutputFormat format = KP_TRY(ChooseFormat(given));
  TraceOptions trace = WithFormatNeeds(WithStackKeys(given), format);
  // The stop signals held from here until the very end (nothing
  // interrupts the cleanup), tracefs and its features read; everything the
  // run makes in the kernel is its, taken down when it goes.
  auto run = KP_TRY(TracingRun::Open(options, io));
  const TracefsDir& dir = run->dir();
  if (!options.dry_run) KP_TRY_VOID(CleanLeftovers(dir, options, io));
  const KernelEnv& env = options.env;
  TracePlan plan = KP_TRY(PlanFor(options, trace, *run, io));  // 1-2
  std::optional<HistRun> hist;
  if (trace.aggregate) hist.emplace(KP_TRY(HistRun::Plan(trace, plan, run->features().hist)));
  if (options.dry_run) {
    PrintPlan(plan, io.out);
    if (hist) hist->PrintTriggers(io.out);
    return 0;
  }
  if (hist) io.err << hist->Note();

  // 3. Recorded, then added, all or none.
  KP_TRY_VOID(run->AddProbes(plan.add));

  // 4. A private instance; the command, held before exec, is filtered in
  // before any event is on.
  KP_TRY_VOID(run->CreateSession(trace.buffer_kb, trace.pid));
  TraceSession& session = run->session();
  EventLocations locations(env.proc);
  // Counted in the kernel, stacks are the triggers' keys: none recorded.
  Stacks stacks = hist && hist->in_kernel() ? Stacks{} : StacksFor(trace, plan);
  Decoding decoding = KP_TRY(DecodingFor(dir, plan, stacks, locations));
  if (stacks.kernel) KP_TRY_VOID(session.SetOption("stacktrace", true));
  if (stacks.user) KP_TRY_VOID(session.SetOption("userstacktrace", true));
  // Events to our standard output: the command's goes to our standard
  // error, so that a pipe (jq, grep) gets the events alone.
  int command_stdout = trace.output.empty() ? STDERR_FILENO : -1;
  if (!trace.command.empty())
    KP_TRY_VOID(run->StartCommand(trace.command, command_stdout, trace.stack != StackMode::kNone));
  TracedCommand* command = run->command();
  if (command && !trace.pid && !trace.all) KP_TRY_VOID(session.FollowPid(command->pid()));
  // Counted in the kernel, the events are not enabled: their triggers see
  // them, the ring buffer does not.
  if (hist && hist->in_kernel())
    KP_TRY_VOID(hist->Start(session));
  else
    KP_TRY_VOID(EnableAll(session, plan, trace));
  KP_TRY_VOID(run->OpenReader());

  // 5. The command runs; print until it stops.
  bool kernel_addresses = stacks.kernel || std::any_of(decoding.plans.begin(), decoding.plans.end(),
                                                       [](const EventPlan& p) { return p.kernel; });
  // Counting prints no address but a kernel stack's: kallsyms (seconds of
  // CPU in a slow VM) unread otherwise.
  bool named = kernel_addresses && (!hist || hist->kernel_stacks());
  KernelSymbols kallsyms = KernelSymbols::FromFile(named ? env.kallsyms : std::string());
  CommCache comms(dir, env.proc);
  Unwinder unwinder;
  const Arch* arch = ArchOfUname(env.machine).value_or(nullptr);
  Printer printer(
      {format == OutputFormat::kJson, trace.latency, decoding.stacks}, [&](int pid) { return comms.Lookup(pid); },
      [&](uint64_t address) { return kallsyms.Lookup(address); },
      [&](int pid, uint64_t address) { return locations.UserFrame(pid, address); },
      arch ? UnwindWith(unwinder, locations, *arch) : UnwindFrames());
  Output output;
  KP_TRY_VOID(OpenOutput(trace, io, output));
  Tracer tracer(*decoding.decoder, std::move(decoding.plans), printer, *output.stream, output.name, decoding.stacks,
                arch ? arch->return_address_bytes() : 0);
  std::optional<HistAnswers> answers;
  std::optional<TracePictures> pictures;
  std::function<Result<void>()> every;
  if (hist) {
    if (!hist->in_kernel()) {
      KP_TRY_VOID(hist->Bind(
          decoding.decoder->formats(), [&](int pid) { return comms.Lookup(pid); },
          [&](const EventPlan& p, const Record& r, const EventStacks& s) { return printer.StackFrames(p, r, s); }));
      tracer.SetSink([&](const EventPlan& p, const Record& r, const EventStacks* s, const OpenCall* call) {
        hist->Add(p, r, s, call);
      });
    }
    answers.emplace(format, trace, hist->specs(), hist->in_kernel(), hist->Counted());
  } else if (IsPicture(format)) {
    pictures.emplace(format, plan, tracer.plans(), printer, comms, env.proc);
    pictures->Attach(tracer);
  }
  // The live status, when a run is long and its events do not go to the
  // same terminal.
  bool printing_here = !hist && !IsPicture(format) && trace.output.empty() && isatty(STDOUT_FILENO);
  StatusLine status(
      io.err, options.progress && !printing_here && (trace.duration > 0 || trace.interval > 0 || command != nullptr));
  const ProbeEvents& events = run->events();
  bool kernel_counts = hist && hist->in_kernel();
  uint64_t hits_before = kernel_counts && status.on() ? TracedProbeHits(events, plan.events) : 0;
  every = [&]() -> Result<void> {
    if (kernel_counts && status.on())
      status.Update(TracedProbeHits(events, plan.events) - hits_before, "probe hits, every process's",
                    "counted in the kernel");
    else if (status.on())
      status.Update(hist       ? hist->hits()
                    : pictures ? pictures->events()
                               : printer.printed(),
                    "events", std::to_string(Lost(tracer, session)) + " lost");
    if (!hist || !hist->Due()) return {};
    status.Clear();
    return tracer.Emit(answers->Report(KP_TRY(hist->Tables(dir, session, !trace.cumulative)), false));
  };
  auto started = std::chrono::steady_clock::now();
  if (command) KP_TRY_VOID(command->Release());
  // Its mappings read at its exec, where the kernel stops it for us: a
  // command too short for the loop's reads still has its program's frames
  // named (the libraries ld.so maps later need the loop's reads).
  if (command && trace.stack != StackMode::kNone) command->AtExec([&](pid_t pid) { locations.RememberTree(pid); });
  // The kernel's default when it cannot say (1.4 MB per CPU on x86-64).
  uint64_t buffer_bytes = session.BufferSizeKb().value_or(1408) * 1024;
  Result<void> traced =
      TraceLoop(trace, run->signals(), command, tracer, run->reader(), comms, locations, buffer_bytes, every);
  // A command that was passed a signal gets a moment to end on its own.
  int exit_status = command ? command->Stop(SIGTERM, 2000) : 0;
  if (traced) (void)tracer.Drain(run->reader());  // what arrived while we stopped

  // 6. The answer's end, the summary; then the run's end (TracingRun).
  status.Clear();
  if (given.latency) io.err << printer.Histograms();
  Result<void> written;
  if (hist) {
    auto tables = hist->Tables(dir, session, false);
    written = tables ? tracer.Emit(answers->Report(*tables, true, Lost(tracer, session)))
                     : Result<void>(std::unexpected(tables.error()));
  } else if (pictures) {
    written = tracer.Emit(pictures->Draw(plan, SecondsSince(started), Lost(tracer, session)));
  }
  if (!written && traced && !tracer.reader_gone()) traced = std::unexpected(written.error());
  uint64_t seen = hist ? hist->hits() : pictures ? pictures->events() : printer.printed();
  if (!options.quiet && (!hist || !hist->in_kernel()))
    io.err << Summary(seen,
                      hist       ? "counted"
                      : pictures ? "recorded"
                                 : "printed",
                      tracer, session, events, plan.events, hist ? hist->unknown_entries() : printer.unknown_entries())
           << "\n";
  auto closed = run->Close();
  if (!traced && !tracer.reader_gone()) return std::unexpected(traced.error());
  if (!closed) return std::unexpected(closed.error());
  return exit_status;
}

}  // namespace kprobectl::cli
