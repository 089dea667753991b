// SPDX-License-Identifier: GPL-2.0-or-later
//
// Helpers shared by the unit and end-to-end tests: fixture paths, running the
// CLI in-process, temporary directories, and access to the real tracefs.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kprobectl::test {

std::string FixturePath(const std::string& name);  // built by the test build
std::string DataPath(const std::string& name);     // tests/data
std::string FixtureSourceDir();                    // tests/fixtures
std::string ReadFile(const std::string& path);
// Every `from` in `text` replaced by `to`.
std::string Replace(std::string text, const std::string& from, const std::string& to);
void WriteFile(const std::string& path, const std::string& text);

struct CliResult {
  int status = 0;
  std::string out, err;
};
CliResult RunKprobectl(const std::vector<std::string>& args);
// `err` without -v's "kprobectl: debuginfo index: ..." line, which says
// whether this run built the cache's index or read it (the tests share one
// cache directory, so either can happen): the rest of -v's text is exact.
std::string WithoutIndexNote(const std::string& err);

// Starts a program in the background with stdout and stderr sent to files
// (empty: /dev/null); returns its pid.
int Spawn(const std::vector<std::string>& argv, const std::string& out_file = "", const std::string& err_file = "");
// As Spawn, in a process group of its own (whose id is the pid): a signal to
// the group reaches it and its children, as a terminal's Ctrl-C does.
int SpawnGroup(const std::vector<std::string>& argv, const std::string& out_file = "",
               const std::string& err_file = "");
// As Spawn, with stdout a pipe whose read end comes back in `read_fd`.
int SpawnPiped(const std::vector<std::string>& argv, int* read_fd, const std::string& err_file = "");
// Waits for it; returns the exit status, or 128 + the signal that ended it.
// A process still running after `hang_seconds` is a hang: the test fails,
// the process is stopped, and -1 comes back.
int Wait(int pid, int hang_seconds = 120);

// Runs a program, returns its stdout (and exit status through `status`).
std::string RunProgram(const std::vector<std::string>& argv, int* status = nullptr);

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A directory that looks like this machine's tracefs (Linux 6.18 without
// kprobes): its README, an empty uprobe_events and error_log.
struct FakeTracefs {
  TempDir dir;
  FakeTracefs();
  std::string path() const { return dir.path(); }
};

// Sets an environment variable for a scope (XDG_CACHE_HOME, to point the
// CLI's debuginfo cache at a test's own directory), then puts it back.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::string& value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// The real tracefs with uprobe_events, or: skip the test (exit code 4, which
// ctest reports as skipped) with the reason, or fail when CI=true, where the
// end-to-end tests must run.
std::string RealTracefsOrSkip();

// The VM's kernel as tests/vm/kernel-info wrote it to $KP_VM_KERNEL_INFO
// ("VERSION VMLINUZ VMLINUX"), or: skip the test (exit code 4) when the
// set-up could not fetch it, or fail when CI=true.
struct VmKernel {
  std::string version, vmlinuz, vmlinux;
};
VmKernel VmKernelOrSkip();

// Polls `condition` every 50 ms for up to `seconds`; whether it came true.
// A bound that only catches a hang, never a verdict on speed.
bool WaitFor(const std::function<bool()>& condition, int seconds = 20);

// A group name unique to this process, e.g. "kpt12345".
std::string UniqueGroup(const std::string& tag);

// Removes every event of `group` (disabling it everywhere first) when it goes
// out of scope, so a failing test leaves nothing behind.
class GroupCleaner {
 public:
  GroupCleaner(std::string tracefs, std::string group) : tracefs_(std::move(tracefs)), group_(std::move(group)) {}
  ~GroupCleaner();
  GroupCleaner(const GroupCleaner&) = delete;
  GroupCleaner& operator=(const GroupCleaner&) = delete;

 private:
  std::string tracefs_, group_;
};

// Lines of uprobe_events that belong to `group`.
std::vector<std::string> GroupDefinitions(const std::string& tracefs, const std::string& group);

// A private tracefs instance that records the events of one group; removed
// (after disabling) when it goes out of scope.
class TraceInstance {
 public:
  TraceInstance(std::string tracefs, std::string group);
  ~TraceInstance();
  TraceInstance(const TraceInstance&) = delete;
  TraceInstance& operator=(const TraceInstance&) = delete;
  void Enable(const std::string& event);
  std::vector<std::string> Lines();  // the instance's trace, without comments

 private:
  std::string tracefs_, group_, dir_;
  std::vector<std::string> enabled_;
};

// The kernel's text trace of probe events, parsed:
//   "target_O2-123 [001] ..... 12.345678: compute: (0x5588aa001350) a=5 b=9"
// gives events["compute"] = {{"a", "5"}, {"b", "9"}}, one map per event in
// order. Quoted strings, {arrays} and 'c' chars keep their quotes.
using Fields = std::map<std::string, std::string>;
Fields ParseFields(const std::string& text);
std::map<std::string, std::vector<Fields>> TraceEvents(const std::vector<std::string>& lines);

}  // namespace kprobectl::test
