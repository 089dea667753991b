// SPDX-License-Identifier: GPL-2.0-or-later
//
// cputime FILE COMMAND [ARG...]: runs the command (its output untouched)
// and writes "WALL USER SYSTEM" to FILE, in seconds to the microsecond:
// the command's and its waited-for children's CPU time from wait4 (time(1)
// rounds to 10 ms, too coarse for a tracer's share of a few seconds).
// Exits with the command's status. For bench/trace, which subtracts the
// traced program's figures from the tracer's.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace {

double Seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: cputime FILE COMMAND [ARG...]\n");
    return 2;
  }
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[2], argv + 2);
    _exit(127);
  }
  int status = 0;
  struct rusage usage {};
  if (pid < 0 || wait4(pid, &status, 0, &usage) < 0) return 127;
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::FILE* out = std::fopen(argv[1], "w");
  if (!out) return 127;
  std::fprintf(out, "%.6f %.6f %.6f\n", wall, Seconds(usage.ru_utime), Seconds(usage.ru_stime));
  std::fclose(out);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
