// SPDX-License-Identifier: GPL-2.0-or-later
//
// trace: enable events in a private instance, read the ring buffer, print,
// and leave the system as it was. The passes, in order:
//   1. temporary probes (--probe) are added, all or none;
//   2. the events to trace are chosen (globs, or every probe* group);
//   3. a private instance is made and the events enabled there;
//   4. the command (after --) is started; signals arrive on a signalfd;
//   5. the per-CPU buffers are read, merged by time and printed until the
//      command exits, the duration ends, or a signal comes;
//   6. on every path: the instance is disabled and removed, and temporary
//      probes deleted (RAII, so an error return cleans up the same way).
#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <set>

#include "commands.h"
#include "kprobectl/glob.h"
#include "kprobectl/kernel_features.h"
#include "kprobectl/probe_events.h"
#include "kprobectl/resolve.h"
#include "kprobectl/strings.h"
#include "kprobectl/trace_decoder.h"
#include "kprobectl/trace_printer.h"
#include "kprobectl/trace_session.h"
#include "kprobectl/trace_symbols.h"

namespace kprobectl::cli {

namespace {

// Deletes the temporary probes when tracing ends, however it ends.
class TemporaryProbes {
 public:
  TemporaryProbes(const ProbeEvents& events, Streams io) : events_(events), io_(io) {}
  ~TemporaryProbes() {
    for (auto it = defs_.rbegin(); it != defs_.rend(); ++it) {
      auto removed = events_.Remove(*it);
      if (!removed) io_.err << "kprobectl: error: " << removed.error().message << "\n";
    }
  }
  TemporaryProbes(const TemporaryProbes&) = delete;
  TemporaryProbes& operator=(const TemporaryProbes&) = delete;
  Result<void> Add(const std::vector<TraceEventDef>& defs) {
    sigset_t block, saved;
    sigemptyset(&block);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&block, sig);
    sigprocmask(SIG_BLOCK, &block, &saved);
    auto added = events_.Add(defs);
    if (added) defs_.insert(defs_.end(), defs.begin(), defs.end());
    sigprocmask(SIG_SETMASK, &saved, nullptr);
    return added;
  }

 private:
  const ProbeEvents& events_;
  Streams io_;
  std::vector<TraceEventDef> defs_;
};

// Signals as file-descriptor events: SIGINT/SIGTERM/SIGHUP stop tracing,
// SIGCHLD says the command ended. The old mask comes back on destruction.
class SignalWatch {
 public:
  SignalWatch() {
    sigemptyset(&mask_);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&mask_, sig);
    sigprocmask(SIG_BLOCK, &mask_, &saved_);
    fd_ = signalfd(-1, &mask_, SFD_CLOEXEC | SFD_NONBLOCK);
    old_pipe_ = signal(SIGPIPE, SIG_IGN);  // a closed reader is a write error, not a kill
  }
  ~SignalWatch() {
    if (fd_ >= 0) close(fd_);
    signal(SIGPIPE, old_pipe_);
    sigprocmask(SIG_SETMASK, &saved_, nullptr);
  }
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;
  int fd() const { return fd_; }
  const sigset_t& saved() const { return saved_; }
  // The next pending signal, or 0.
  int Next() {
    signalfd_siginfo info;
    return read(fd_, &info, sizeof info) == sizeof info ? static_cast<int>(info.ssi_signo) : 0;
  }

 private:
  sigset_t mask_, saved_;
  int fd_ = -1;
  sighandler_t old_pipe_;
};

Result<pid_t> StartCommand(const std::vector<std::string>& argv, const sigset_t& mask) {
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return Fail(std::string("pipe: ") + std::strerror(errno));
  pid_t pid = fork();
  if (pid < 0) return Fail(std::string("cannot start the command: ") + std::strerror(errno));
  if (pid == 0) {
    sigprocmask(SIG_SETMASK, &mask, nullptr);
    signal(SIGPIPE, SIG_DFL);
    // The command gets stdin, stdout and stderr, not our ring-buffer pipes
    // (libtracefs opens them without O_CLOEXEC) or the output file.
    close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    int error = errno;
    (void)!write(report[1], &error, sizeof error);
    _exit(127);
  }
  close(report[1]);
  int error = 0;
  ssize_t n = read(report[0], &error, sizeof error);
  close(report[0]);
  if (n == sizeof error) {
    waitpid(pid, nullptr, 0);
    return Fail("cannot run '" + argv[0] + "': " + std::strerror(error), "check the command after --");
  }
  return pid;
}

Result<void> WriteAll(int fd, std::string& buffer, const std::string& where) {
  size_t done = 0;
  while (done < buffer.size()) {
    ssize_t n = write(fd, buffer.data() + done, buffer.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail("cannot write the trace to " + where + ": " + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  buffer.clear();
  return {};
}

struct EventPattern {
  std::string group = "*", event;
};

EventPattern ParseEventPattern(const std::string& text) {
  size_t sep = text.find_first_of(":/");
  if (sep == std::string::npos) return {"*", text};
  return {text.substr(0, sep), text.substr(sep + 1)};
}

}  // namespace

Result<int> RunTrace(const Options& options, const TraceOptions& trace, Streams io) {
  auto dir = KP_TRY(OpenTracefs(options));
  auto log = [&](std::string_view line) {
    if (options.verbose) io.err << line << "\n";
  };
  ProbeEvents events(*dir, log);
  TemporaryProbes temporary(events, io);
  KernelFeatures features = ReadFeatures(*dir);

  // 1. Temporary probes, all or none.
  std::vector<TraceEventDef> added;
  TargetFiles files;
  if (!trace.probes.empty()) {
    std::vector<ProbeSpec> specs;
    for (const std::string& text : trace.probes) specs.push_back(KP_TRY(ParseProbeSpec(text)));
    KP_TRY_VOID(RequireProbeKind(features, options.exec.empty() ? ProbeKind::kKernel : ProbeKind::kUser));
    files = KP_TRY(OpenTargetFiles(options, io.err));
    EventNamer namer(KP_TRY(events.Names()), true);
    std::vector<std::string> notes;
    std::vector<size_t> origins;
    added = KP_TRY(ResolveSpecs(specs, files, features, options, namer, &notes, &origins));
    std::vector<std::string> left_out;
    if (options.exec.empty()) KP_TRY_VOID(CheckKernelProbes(added, origins, files, dir.get(), options, true, &left_out));
    if (!options.quiet)
      for (const std::string& line : left_out) io.err << "kprobectl: " << line << "\n";
    if (options.verbose)
      for (const std::string& note : notes) io.err << "note: " << note << "\n";
  }

  // 2. The events: globs over what exists, or every probe* group.
  std::vector<TraceEventDef> all = KP_TRY(events.List());
  std::vector<TraceEventDef> selected;
  std::set<std::string> hidden;
  std::vector<EventPattern> patterns;
  for (const std::string& glob : trace.events) patterns.push_back(ParseEventPattern(glob));
  if (patterns.empty() && added.empty()) patterns.push_back({"probe*", "*"});
  for (const TraceEventDef& def : all)
    for (const EventPattern& p : patterns)
      if (GlobMatch(p.group, def.group) && GlobMatch(p.event, def.event)) {
        selected.push_back(def);
        break;
      }
  if (trace.latency) {
    // A return probe needs its entry to time the call: add a hidden one.
    std::set<std::string> entries;
    for (const TraceEventDef& def : selected)
      if (!def.retprobe) entries.insert(FormatTarget(def.target));
    for (const TraceEventDef& def : added)
      if (!def.retprobe) entries.insert(FormatTarget(def.target));
    std::vector<TraceEventDef> extra;
    EventNamer namer(KP_TRY(events.Names()), true);
    for (const auto* list : {&selected, &added})
      for (const TraceEventDef& def : *list) {
        if (!def.retprobe || entries.contains(FormatTarget(def.target))) continue;
        TraceEventDef entry = def;
        entry.retprobe = false;
        entry.maxactive = 0;
        entry.args.clear();
        std::string base = def.event.ends_with("__return") ? def.event.substr(0, def.event.size() - 8) : def.event;
        entry.event = KP_TRY(namer.Take(def.group, base + "__entry", false, false));
        entries.insert(FormatTarget(def.target));
        hidden.insert(entry.group + "/" + entry.event);
        extra.push_back(entry);
      }
    added.insert(added.end(), extra.begin(), extra.end());
  }
  KP_TRY_VOID(temporary.Add(added));
  selected.insert(selected.end(), added.begin(), added.end());
  if (selected.empty())
    return Fail(trace.events.empty() ? "there are no probe events to trace (no event in a probe* group)"
                                     : "no probe event matches " + Join(trace.events, " "),
                "add probes first ('kprobectl add ...'), or give them with --probe 'SPEC'");

  // 3. A private instance, the events enabled there.
  auto session = KP_TRY(TraceSession::Create(*dir, "kprobectl-" + std::to_string(getpid()), log));
  if (trace.buffer_kb) KP_TRY_VOID(session->SetBufferSizeKb(trace.buffer_kb));
  if (trace.pid) KP_TRY_VOID(session->SetPid(trace.pid));
  else session->ExcludePid(getpid());  // not our own reads of tracefs and /proc
  std::vector<std::string> names;
  for (const TraceEventDef& def : selected) names.push_back(def.group + "/" + def.event);
  std::vector<std::pair<std::string, std::string>> format_texts;
  for (const TraceEventDef& def : selected)
    format_texts.emplace_back(def.group, KP_TRY(dir->Read("events/" + def.group + "/" + def.event + "/format")));
  auto decoder = KP_TRY(EventDecoder::FromFormats(format_texts));

  // Plans, indexed by event id.
  std::map<std::string, std::unique_ptr<ElfImage>> images;
  std::vector<EventPlan> plans;
  std::vector<int> plan_of(65536, -1);
  for (size_t i = 0; i < selected.size(); ++i) {
    const TraceEventDef& def = selected[i];
    const EventFormat& format = decoder->formats()[i];
    EventPlan plan = KP_TRY(PlanEvent(format));
    plan.kernel = def.kind == ProbeKind::kKernel;
    plan.hidden = hidden.contains(names[i]);
    plan.latency_key = trace.latency ? FormatTarget(def.target) : std::string();
    if (def.target.kind == ProbeTarget::kFile) {
      auto [it, fresh] = images.try_emplace(def.target.path);
      if (fresh) {
        auto image = ElfImage::Open(def.target.path);
        if (image) it->second = std::make_unique<ElfImage>(std::move(*image));
      }
      const ElfImage* image = it->second.get();
      plan.location = Hex(def.target.offset);
      std::optional<uint64_t> vaddr = image ? image->VirtualAddress(def.target.offset) : std::nullopt;
      if (vaddr)
        if (const ElfSymbol* f = image->FunctionAt(*vaddr)) {
          plan.location = def.retprobe ? f->name : f->name + "+" + Hex(*vaddr - f->value);
          uint64_t func_vaddr = *vaddr;
          plan.caller = [image, func_vaddr](uint64_t func_ip, uint64_t ret_ip) -> std::string {
            uint64_t caller = ret_ip - (func_ip - func_vaddr);
            const ElfSymbol* c = image->FunctionAt(caller);
            return c ? c->name + "+" + Hex(caller - c->value) : std::string();
          };
        }
    } else if (def.target.kind == ProbeTarget::kSymbol) {
      plan.location = def.retprobe ? def.target.symbol : def.target.symbol + "+" + Hex(def.target.offset);
    } else {
      plan.location = Hex(def.target.address);
    }
    if (format.id >= 0 && format.id < 65536) plan_of[static_cast<size_t>(format.id)] = static_cast<int>(plans.size());
    plans.push_back(std::move(plan));
  }
  if (!trace.filter.empty())
    for (const std::string& name : names)
      if (!hidden.contains(name)) KP_TRY_VOID(session->SetFilter(name, trace.filter));
  for (const std::string& name : names) KP_TRY_VOID(session->Enable(name));
  // Declared after the session, so that on an early return it closes first:
  // an instance with open pipes cannot be removed.
  auto reader = KP_TRY(RingReader::Open(dir->root(), session->name()));

  bool any_kernel = std::any_of(plans.begin(), plans.end(), [](const EventPlan& p) { return p.kernel; });
  KernelSymbols kallsyms;
  if (any_kernel) {
    TracefsDir proc("/proc");
    if (auto text = proc.Read("kallsyms")) kallsyms = KernelSymbols::Parse(*text);
  }
  CommCache comms(*dir);
  Printer printer({trace.json, trace.latency}, [&](int pid) { return comms.Lookup(pid); },
                  [&](uint64_t address) { return kallsyms.Lookup(address); });

  int out_fd = 1;
  std::string out_name = "standard output";
  if (!trace.output.empty()) {
    out_fd = open(trace.output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out_fd < 0) return Fail("cannot write '" + trace.output + "': " + std::strerror(errno));
    out_name = trace.output;
  }
  struct CloseFd {
    int fd;
    ~CloseFd() {
      if (fd > 2) close(fd);
    }
  } close_out{out_fd};

  // 4. The command, and signals.
  SignalWatch signals;
  pid_t child = -1;
  int exit_status = 0;
  if (!trace.command.empty()) child = KP_TRY(StartCommand(trace.command, signals.saved()));
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(trace.duration * 1000));

  // 5. Read, merge, print.
  uint64_t missed = 0;
  std::vector<uint8_t> page;
  std::vector<std::vector<uint8_t>> pages;
  std::vector<Record> records;
  std::string buffer;
  auto drain = [&]() -> Result<void> {
    pages.clear();
    records.clear();
    for (int cpu = 0; cpu < reader->cpus(); ++cpu)
      for (size_t reads = 0; reads < 4096; ++reads) {
        size_t n = KP_TRY(reader->ReadPage(cpu, page));
        if (n == 0) break;
        page.resize(n);
        pages.push_back(page);
        KP_TRY_VOID(decoder->DecodePage(pages.back(), cpu, records, &missed));
      }
    // Pages of one CPU are in order; a stable sort merges the CPUs by time.
    std::stable_sort(records.begin(), records.end(), [](const Record& a, const Record& b) { return a.ts < b.ts; });
    comms.Refresh();
    for (const Record& r : records) {
      int index = r.type >= 0 && r.type < 65536 ? plan_of[static_cast<size_t>(r.type)] : -1;
      if (index < 0) continue;
      printer.Print(plans[static_cast<size_t>(index)], r, buffer);
      if (buffer.size() > (1 << 20)) KP_TRY_VOID(WriteAll(out_fd, buffer, out_name));
    }
    return WriteAll(out_fd, buffer, out_name);
  };
  // Pages keep pointers valid while their records print: reserve up front.
  pages.reserve(static_cast<size_t>(reader->cpus()) * 4096);
  bool stop = false;
  Result<void> failure;
  while (!stop) {
    int timeout = 100;
    if (trace.duration > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) stop = true;
      timeout = static_cast<int>(std::clamp<int64_t>(left.count(), 0, 100));
    }
    pollfd pfd{signals.fd(), POLLIN, 0};
    if (!stop && poll(&pfd, 1, timeout) > 0) {
      for (int sig = signals.Next(); sig; sig = signals.Next()) {
        if (sig != SIGCHLD) {
          stop = true;
          if (child > 0) kill(child, sig);  // pass it on: the command ends too
          continue;
        }
        int status = 0;
        if (child > 0 && waitpid(child, &status, WNOHANG) == child) {
          exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
          child = -1;
          stop = true;
        }
      }
    }
    auto drained = drain();
    if (!drained) {
      failure = drained;
      break;
    }
  }
  if (child > 0) {
    // Stopped by a signal or an error while the command still runs.
    int status = 0;
    if (waitpid(child, &status, WNOHANG) == 0) {
      kill(child, SIGTERM);
      waitpid(child, &status, 0);
    }
    exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  if (failure) {
    auto last = drain();  // what arrived while we stopped
    if (!last) failure = last;
  }

  // 6. The summary; then the instance and the temporary probes go.
  // The kernel's per-CPU counts, or what the pages said was missed if more.
  auto stats = session->Stats();
  uint64_t counted = 0;
  std::vector<std::string> per_cpu;
  for (size_t cpu = 0; cpu < stats.size(); ++cpu) {
    uint64_t n = stats[cpu].overrun + stats[cpu].dropped;
    counted += n;
    if (n) per_cpu.push_back("cpu" + std::to_string(cpu) + ": " + std::to_string(n));
  }
  uint64_t lost = std::max(counted, missed);
  if (trace.latency) {
    std::string histograms = printer.Histograms();
    if (!histograms.empty()) io.err << histograms;
  }
  std::string summary = "kprobectl: " + std::to_string(printer.printed()) + " events printed, " +
                         std::to_string(lost) + " lost to ring-buffer overruns";
  if (!per_cpu.empty()) summary += " (" + Join(per_cpu, ", ") + ")";
  std::vector<std::string> misses;
  for (ProbeKind kind : {ProbeKind::kKernel, ProbeKind::kUser}) {
    auto profile = events.Profile(kind);
    if (!profile) continue;
    for (const TraceEventDef& def : selected)
      if (def.retprobe && def.kind == kind)
        if (const ProfileEntry* entry = FindProfileEntry(*profile, def); entry && entry->misses.value_or(0) > 0)
          misses.push_back(def.FullName() + " " + std::to_string(*entry->misses));
  }
  if (!misses.empty()) summary += "; return probes missed: " + Join(misses, ", ");
  if (!options.quiet) io.err << summary << "\n";
  reader.reset();  // its open pipes keep the instance busy
  auto closed = session->Close();
  if (!failure) return std::unexpected(failure.error());
  if (!closed) return std::unexpected(closed.error());
  return exit_status;
}

}  // namespace kprobectl::cli
