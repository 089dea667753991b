// SPDX-License-Identifier: GPL-2.0-or-later
#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "kprobectl/trace_process.h"

namespace kprobectl {

namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// What the child writes when it cannot be stopped at its exec (no errno).
constexpr int kNotStopped = -1;

int StatusOf(int wstatus) { return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus); }

}  // namespace

StopSignals::StopSignals() {
  sigemptyset(&mask_);
  for (int sig : kStopSignals) sigaddset(&mask_, sig);
  sigaddset(&mask_, SIGCHLD);
  sigprocmask(SIG_BLOCK, &mask_, &saved_);
  fd_ = signalfd(-1, &mask_, SFD_CLOEXEC | SFD_NONBLOCK);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, &old_pipe_);
}

StopSignals::~StopSignals() {
  // What came during cleanup was handled by stopping: discard it, or
  // restoring the mask would deliver it now and kill us with its status.
  timespec zero{0, 0};
  sigset_t pending;
  sigemptyset(&pending);
  sigpending(&pending);
  for (int sig : kStopSignals)
    if (sigismember(&pending, sig) && !sigismember(&saved_, sig)) {
      sigset_t one;
      sigemptyset(&one);
      sigaddset(&one, sig);
      sigtimedwait(&one, nullptr, &zero);
    }
  if (fd_ >= 0) close(fd_);
  sigaction(SIGPIPE, &old_pipe_, nullptr);
  sigprocmask(SIG_SETMASK, &saved_, nullptr);
}

int StopSignals::Next() {
  signalfd_siginfo info;
  return read(fd_, &info, sizeof info) == sizeof info ? static_cast<int>(info.ssi_signo) : 0;
}

bool StopSignals::StopPending() const {
  sigset_t pending;
  sigemptyset(&pending);
  sigpending(&pending);
  for (int sig : kStopSignals)
    if (sigismember(&pending, sig)) return true;
  return false;
}

Result<TracedCommand> TracedCommand::Start(const std::vector<std::string>& argv, const sigset_t& mask, int stdout_fd,
                                           bool stop_at_exec) {
  int go[2], report[2];
  if (pipe2(go, O_CLOEXEC) != 0) return Fail(std::string("pipe: ") + std::strerror(errno));
  if (pipe2(report, O_CLOEXEC) != 0) {
    close(go[0]);
    close(go[1]);
    return Fail(std::string("pipe: ") + std::strerror(errno));
  }
  pid_t pid = fork();
  if (pid < 0) {
    int error = errno;
    for (int fd : {go[0], go[1], report[0], report[1]}) close(fd);
    return Fail(std::string("cannot start the command: ") + std::strerror(error));
  }
  if (pid == 0) {
    // Held until the parent has filtered our pid in; a parent that died
    // meanwhile (EOF) means: do not run at all.
    close(go[1]);
    char byte = 0;
    ssize_t n;
    while ((n = read(go[0], &byte, 1)) < 0 && errno == EINTR) {
    }
    if (n != 1) _exit(127);
    sigprocmask(SIG_SETMASK, &mask, nullptr);
    signal(SIGPIPE, SIG_DFL);
    if (stdout_fd >= 0 && dup2(stdout_fd, STDOUT_FILENO) < 0) _exit(127);
    // The command gets stdin, stdout and stderr, not our ring-buffer pipes
    // (libtracefs opens them without O_CLOEXEC) or the output file.
    close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
    // Stopped by the kernel at its exec (a SIGTRAP to its tracer, us),
    // when asked: its mappings are read there. Refused (seccomp, Yama's
    // scope 3), it says so and runs unstopped.
    if (stop_at_exec && ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0)
      (void)!write(report[1], &kNotStopped, sizeof kNotStopped);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    int error = errno;
    (void)!write(report[1], &error, sizeof error);
    _exit(127);
  }
  close(go[0]);
  close(report[1]);
  TracedCommand command(pid, go[1], report[0], argv[0]);
  command.stops_at_exec_ = stop_at_exec;
  return command;
}

TracedCommand::TracedCommand(TracedCommand&& other) noexcept
    : pid_(other.pid_),
      go_(other.go_),
      report_(other.report_),
      name_(std::move(other.name_)),
      status_(other.status_),
      stops_at_exec_(other.stops_at_exec_) {
  other.pid_ = -1;
  other.go_ = other.report_ = -1;
}

TracedCommand::~TracedCommand() {
  if (go_ >= 0) close(go_);  // a command never released exits (127) without running
  if (report_ >= 0) close(report_);
  // Released but still held at its exec: let go first (a stopped tracee
  // takes no SIGTERM).
  if (pid_ > 0 && go_ < 0 && stops_at_exec_) AtExec([](pid_t) {});
  if (pid_ > 0 && !status_) Stop(SIGTERM);
}

void TracedCommand::AtExec(const std::function<void(pid_t)>& look) {
  while (stops_at_exec_) {
    int wstatus = 0;
    while (waitpid(pid_, &wstatus, 0) < 0 && errno == EINTR) {
    }
    if (!WIFSTOPPED(wstatus)) {  // killed before it stopped
      status_ = StatusOf(wstatus);
      stops_at_exec_ = false;
      return;
    }
    if (WSTOPSIG(wstatus) != SIGTRAP) {
      // A signal that came before its exec (a traced task stops for each):
      // passed on, and the exec's stop still to come. ptrace takes the
      // signal's number in its pointer argument.
      auto passed = static_cast<intptr_t>(WSTOPSIG(wstatus));
      ptrace(PTRACE_CONT, pid_, nullptr, reinterpret_cast<void*>(passed));  // NOLINT(performance-no-int-to-ptr)
      continue;
    }
    look(pid_);
    ptrace(PTRACE_DETACH, pid_, nullptr, nullptr);  // and its SIGTRAP is dropped
    stops_at_exec_ = false;
    return;
  }
  // Unstopped: at most 100 ms for its /proc/PID/exe to be no longer ours
  // (a short command may be gone by then).
  char self[PATH_MAX], child[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self);
  std::string exe = "/proc/" + std::to_string(pid_) + "/exe";
  for (int i = 0; i < 1000 && n > 0; ++i, usleep(100)) {
    ssize_t m = readlink(exe.c_str(), child, sizeof child);
    if (m <= 0 || std::string_view(child, static_cast<size_t>(m)) != std::string_view(self, static_cast<size_t>(n)))
      break;
  }
  look(pid_);
}

Result<void> TracedCommand::Release() {
  char byte = 1;
  ssize_t written = write(go_, &byte, 1);
  close(go_);
  go_ = -1;
  int error = 0;
  ssize_t n = -1;
  if (written == 1)
    while ((n = read(report_, &error, sizeof error)) == sizeof error && error == kNotStopped) stops_at_exec_ = false;
  close(report_);
  report_ = -1;
  if (written != 1 || n == sizeof error) {
    int wstatus = 0;
    waitpid(pid_, &wstatus, 0);
    status_ = StatusOf(wstatus);
    stops_at_exec_ = false;
    return Fail("cannot run '" + name_ + "': " + std::strerror(written == 1 ? error : errno),
                "check the command after --");
  }
  return {};
}

std::optional<int> TracedCommand::Poll() {
  if (status_ || pid_ <= 0) return status_;
  int wstatus = 0;
  // A stop is no end (ptrace reports them to us while it is held at exec).
  if (waitpid(pid_, &wstatus, WNOHANG) == pid_ && !WIFSTOPPED(wstatus)) status_ = StatusOf(wstatus);
  return status_;
}

bool TracedCommand::WaitFor(int ms) {
  for (int waited = 0; !Poll() && waited < ms; waited += 10) usleep(10000);
  return Poll().has_value();
}

int TracedCommand::Stop(int sig, int grace_ms) {
  if (WaitFor(grace_ms)) return *status_;
  kill(pid_, sig);
  if (WaitFor(5000)) return *status_;
  kill(pid_, SIGKILL);
  int wstatus = 0;
  while (waitpid(pid_, &wstatus, 0) < 0 && errno == EINTR) {
  }
  status_ = StatusOf(wstatus);
  return *status_;
}

}  // namespace kprobectl
