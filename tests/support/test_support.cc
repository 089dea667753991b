// SPDX-License-Identifier: GPL-2.0-or-later
#include "test_support.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <thread>

#include "kprobectl/cli.h"
#include "kprobectl/strings.h"
#include "kprobectl/tracefs_dir.h"

namespace kprobectl::test {

std::string FixturePath(const std::string& name) { return std::string(KP_FIXTURE_DIR) + "/" + name; }
std::string DataPath(const std::string& name) { return std::string(KP_TEST_DATA_DIR) + "/" + name; }

std::string FixtureSourceDir() {
  std::string data = KP_TEST_DATA_DIR;
  return data.substr(0, data.size() - std::string("data").size()) + "fixtures";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

ScopedEnv::ScopedEnv(std::string name, const std::string& value) : name_(std::move(name)) {
  if (const char* old = getenv(name_.c_str())) old_ = old;
  setenv(name_.c_str(), value.c_str(), 1);
}

ScopedEnv::~ScopedEnv() {
  if (old_)
    setenv(name_.c_str(), old_->c_str(), 1);
  else
    unsetenv(name_.c_str());
}

CliResult RunKprobectl(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  CliResult result;
  result.status = RunCli(args, out, err);
  result.out = out.str();
  result.err = err.str();
  return result;
}

std::string WithoutIndexNote(const std::string& err) {
  std::string out;
  for (const std::string& line : SplitLines(err))
    if (!line.starts_with("kprobectl: debuginfo index: ")) out += line + "\n";
  return out;
}

Fields ParseFields(const std::string& text) {
  static const std::regex field_re(R"((\w+)=("[^"]*"|\{[^}]*\}|'[^']*'|\S+))");
  Fields out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), field_re); it != std::sregex_iterator(); ++it)
    out[(*it)[1]] = (*it)[2];
  return out;
}

std::map<std::string, std::vector<Fields>> TraceEvents(const std::vector<std::string>& lines) {
  static const std::regex line_re(
      R"(^\s*\S.*?\s+\[\d+\]\s+\S+\s+[\d.]+: (\w+): \(0x[0-9a-f]+( <- 0x[0-9a-f]+)?\)(.*)$)");
  std::map<std::string, std::vector<Fields>> out;
  for (const std::string& line : lines) {
    std::smatch m;
    INFO(line);
    REQUIRE(std::regex_match(line, m, line_re));
    out[m[1]].push_back(ParseFields(m[3]));
  }
  return out;
}

namespace {

int SpawnWith(const std::vector<std::string>& argv, const std::string& out_file, const std::string& err_file,
              bool own_group, int out_fd) {
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (own_group) setpgid(0, 0);
    int out = out_fd >= 0 ? out_fd
                          : open(out_file.empty() ? "/dev/null" : out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_file.empty() ? "/dev/null" : err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    std::vector<char*> cargv;
    for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  if (own_group) setpgid(pid, pid);  // either side may run first
  return pid;
}

}  // namespace

int Spawn(const std::vector<std::string>& argv, const std::string& out_file, const std::string& err_file) {
  return SpawnWith(argv, out_file, err_file, false, -1);
}

int SpawnGroup(const std::vector<std::string>& argv, const std::string& out_file, const std::string& err_file) {
  return SpawnWith(argv, out_file, err_file, true, -1);
}

int SpawnPiped(const std::vector<std::string>& argv, int* read_fd, const std::string& err_file) {
  int fds[2];
  REQUIRE(pipe2(fds, O_CLOEXEC) == 0);
  int pid = SpawnWith(argv, "", err_file, false, fds[1]);
  close(fds[1]);
  *read_fd = fds[0];
  return pid;
}

int Wait(int pid, int hang_seconds) {
  int status = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(hang_seconds);
  for (;;) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return -1;
    if (std::chrono::steady_clock::now() > deadline) {
      // A hang, not slowness: say so, then make sure it ends (SIGTERM lets
      // kprobectl clean up; SIGKILL if even that does not end it).
      FAIL_CHECK("process " << pid << " still running after " << hang_seconds << " s: a hang");
      kill(pid, SIGTERM);
      std::this_thread::sleep_for(std::chrono::seconds(5));
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string RunProgram(const std::vector<std::string>& argv, int* status) {
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(pipe_fds[1], 1);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    std::vector<char*> cargv;
    for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  std::string output;
  char buf[4096];
  ssize_t n;
  while ((n = read(pipe_fds[0], buf, sizeof buf)) > 0) output.append(buf, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  if (status) *status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
  return output;
}

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "kprobectl-test-XXXXXX").string();
  char* made = mkdtemp(pattern.data());
  REQUIRE(made != nullptr);
  path_ = made;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

FakeTracefs::FakeTracefs() {
  WriteFile(dir / "README", ReadFile(DataPath("readme-linux-6.18-no-kprobes.txt")));
  WriteFile(dir / "uprobe_events", "");
  WriteFile(dir / "error_log", "");
}

std::string RealTracefsOrSkip() {
  std::string reason;
  std::string root;
  if (geteuid() != 0) {
    reason = "not root";
  } else {
    // Where kprobectl finds it (a tracefs mount, else debugfs's tracing/),
    // mounting it as root when it is missing, as it would for a user.
    auto located = LocateTracefs(LocateOptions{});
    struct stat st;
    if (!located) {
      reason = located.error().message;
    } else {
      root = *located;
      if (stat((root + "/uprobe_events").c_str(), &st) != 0) reason = "no uprobe_events under " + root;
    }
  }
  if (reason.empty()) return root;
  const char* ci = std::getenv("CI");
  if (ci && std::string(ci) == "true") FAIL("end-to-end tests must run in CI, but: " + reason);
  std::cerr << "SKIPPED: end-to-end test needs root and tracefs with uprobe_events: " << reason << "\n";
  std::fflush(nullptr);
  std::_Exit(4);
}

VmKernel VmKernelOrSkip() {
  const char* info = std::getenv("KP_VM_KERNEL_INFO");
  std::vector<std::string> words = SplitWords(info ? ReadFile(info) : std::string());
  if (words.size() == 3) return {words[0], words[1], words[2]};
  const char* ci = std::getenv("CI");
  if (ci && std::string(ci) == "true") FAIL("no VM kernel: " << (info ? info : ""));
  WARN("SKIPPED: the VM's kernel was not fetched (tests/vm/kernel-info)");
  std::fflush(nullptr);
  std::_Exit(4);
}

bool WaitFor(const std::function<bool()>& condition, int seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::string UniqueGroup(const std::string& tag) { return "kpt" + tag + std::to_string(getpid()); }

std::vector<std::string> GroupDefinitions(const std::string& tracefs, const std::string& group) {
  std::vector<std::string> out;
  for (const std::string& line : SplitLines(ReadFile(tracefs + "/uprobe_events")))
    if (line.find(":" + group + "/") != std::string::npos) out.push_back(line);
  return out;
}

// Writes go through TracefsDir (one write(2) each): iostreams in append mode
// may seek first, which tracefs refuses with EINVAL.
GroupCleaner::~GroupCleaner() {
  TracefsDir dir(tracefs_);
  for (const std::string& line : GroupDefinitions(tracefs_, group_)) {
    std::string name = SplitWords(line)[0];
    name = name.substr(name.find(':') + 1);
    (void)dir.Write("events/" + name + "/enable", "0");
    auto removed = dir.Append("uprobe_events", "-:" + name + "\n");
    if (!removed) std::cerr << "test cleanup: " << removed.error().message << "\n";
  }
}

TraceInstance::TraceInstance(std::string tracefs, std::string group)
    : tracefs_(std::move(tracefs)), group_(std::move(group)), dir_(tracefs_ + "/instances/" + group_) {
  REQUIRE(mkdir(dir_.c_str(), 0755) == 0);
}

void TraceInstance::Enable(const std::string& event) {
  REQUIRE(TracefsDir(dir_).Write("events/" + group_ + "/" + event + "/enable", "1"));
  enabled_.push_back(event);
}

std::vector<std::string> TraceInstance::Lines() {
  std::vector<std::string> out;
  for (const std::string& line : SplitLines(ReadFile(dir_ + "/trace")))
    if (!line.starts_with("#") && !Trim(line).empty()) out.push_back(line);
  return out;
}

TraceInstance::~TraceInstance() {
  TracefsDir dir(dir_);
  for (const std::string& event : enabled_) (void)dir.Write("events/" + group_ + "/" + event + "/enable", "0");
  if (rmdir(dir_.c_str()) != 0) std::cerr << "test cleanup: cannot remove " << dir_ << "\n";
}

}  // namespace kprobectl::test
