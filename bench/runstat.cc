// SPDX-License-Identifier: GPL-2.0-or-later
//
// runstat [--env NAME=VALUE]... [--fresh DIR] RUNS COMMAND [ARG...]: runs
// the command RUNS times, its output thrown away, and prints
// "MEDIAN_WALL_MS MEDIAN_PEAK_RSS_KB FAILURES MEDIAN_CPU_MS". Wall time from
// a monotonic clock around fork..wait4; peak RSS and CPU time (user +
// system) are the child's from wait4, so each run is measured alone. CPU
// time is what a machine shared with other work does not inflate (wall
// time waits for a core). --env sets a variable in the command's
// environment and --fresh removes DIR before each run, untimed: neither
// costs the run an exec of env, a shell or rm, which on a machine where a
// process start costs milliseconds would be most of what is measured.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace {

template <typename T>
T Median(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string fresh;
  int first = 1;
  for (; first + 1 < argc; first += 2) {
    std::string option = argv[first];
    if (option == "--env")
      putenv(argv[first + 1]);
    else if (option == "--fresh")
      fresh = argv[first + 1];
    else
      break;
  }
  if (argc - first < 2) {
    std::fprintf(stderr, "usage: runstat [--env NAME=VALUE]... [--fresh DIR] RUNS COMMAND [ARG...]\n");
    return 2;
  }
  int runs = std::atoi(argv[first]);
  char** command = argv + first + 1;
  std::vector<double> wall;
  std::vector<long> rss;
  std::vector<double> cpu;
  int failures = 0;
  for (int i = 0; i < runs; ++i) {
    if (!fresh.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(fresh, ignored);
    }
    auto start = std::chrono::steady_clock::now();
    pid_t pid = fork();
    if (pid == 0) {
      int null = open("/dev/null", O_WRONLY);
      dup2(null, 1);
      dup2(null, 2);
      execvp(command[0], command);
      _exit(127);
    }
    int status = 0;
    struct rusage usage {};
    wait4(pid, &status, 0, &usage);
    wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    rss.push_back(usage.ru_maxrss);
    auto ms = [](const timeval& t) {
      return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3;
    };
    cpu.push_back(ms(usage.ru_utime) + ms(usage.ru_stime));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
  }
  std::printf("%.1f %ld %d %.2f\n", Median(wall), Median(rss), failures, Median(cpu));
  return 0;
}
