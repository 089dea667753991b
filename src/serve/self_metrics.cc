// SPDX-License-Identifier: GPL-2.0-or-later
//
// /proc/PID/stat (utime, stime, starttime in ticks since boot; vsize;
// rss in pages: proc(5)), /proc/stat's btime, /proc/PID/limits' "Max open
// files" and the entries of /proc/PID/fd, as client_golang's procfs reads
// them. Numbers printed as Prometheus reads them: integers as such,
// fractions in the shortest form that reads back the same.
#include "kprobectl/self_metrics.h"

#include <dirent.h>

#include <charconv>
#include <fstream>
#include <sstream>
#include <string_view>
#include <vector>

namespace kprobectl {

namespace {

Result<std::string> ReadProc(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Fail("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Decimal(double value) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return ec == std::errc() ? std::string(buffer, end) : "NaN";
}

Result<uint64_t> Unsigned(std::string_view text, const std::string& where) {
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || text.empty()) return Fail(where + ": '" + std::string(text) + "' is not a number");
  return n;
}

void Metric(std::string& out, const std::string& name, const std::string& type, const std::string& help,
            const std::string& value) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " + value + "\n";
}

}  // namespace

Result<ProcessStats> ReadProcessStats(const std::string& proc, const std::string& process, long ticks_per_second,
                                      long page_size) {
  std::string dir = proc + "/" + process;
  std::string stat = KP_TRY(ReadProc(dir + "/stat"));
  // The command may hold blanks and parentheses: the fields start after the last ')'.
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return Fail(dir + "/stat: no ')'");
  std::istringstream fields(stat.substr(close + 1));
  std::vector<std::string> f;  // f[0] is field 3 (state)
  for (std::string word; fields >> word;) f.push_back(word);
  if (f.size() < 22) return Fail(dir + "/stat: " + std::to_string(f.size() + 2) + " fields, not 24 or more");
  auto field = [&](size_t number) { return Unsigned(f[number - 3], dir + "/stat"); };
  uint64_t utime = KP_TRY(field(14)), stime = KP_TRY(field(15)), start = KP_TRY(field(22));
  ProcessStats s;
  s.cpu_seconds = static_cast<double>(utime + stime) / static_cast<double>(ticks_per_second);
  s.virtual_bytes = KP_TRY(field(23));
  s.resident_bytes = KP_TRY(field(24)) * static_cast<uint64_t>(page_size);
  std::string system = KP_TRY(ReadProc(proc + "/stat"));
  size_t btime = system.find("\nbtime ");
  if (btime == std::string::npos) return Fail(proc + "/stat: no btime");
  std::string_view boot = std::string_view(system).substr(btime + 7);
  boot = boot.substr(0, boot.find('\n'));
  s.start_time_seconds = static_cast<double>(KP_TRY(Unsigned(boot, proc + "/stat"))) +
                         static_cast<double>(start) / static_cast<double>(ticks_per_second);
  std::string limits = KP_TRY(ReadProc(dir + "/limits"));
  size_t open = limits.find("Max open files");
  if (open == std::string::npos) return Fail(dir + "/limits: no 'Max open files'");
  std::istringstream limit(limits.substr(open + 14));
  std::string soft;
  limit >> soft;
  s.max_fds = soft == "unlimited" ? 0 : KP_TRY(Unsigned(soft, dir + "/limits"));
  DIR* fds = opendir((dir + "/fd").c_str());
  if (!fds) return Fail("cannot read " + dir + "/fd");
  for (dirent* entry; (entry = readdir(fds));)
    if (entry->d_name[0] != '.') ++s.open_fds;
  closedir(fds);
  return s;
}

std::string RenderSelfMetrics(const std::string& version, const ProcessStats& p, const ScrapeStats& scrape,
                              const ReloadStats& reload) {
  std::string out;
  out += "# HELP kprobectl_build_info kprobectl's version\n# TYPE kprobectl_build_info gauge\n";
  out += "kprobectl_build_info{version=\"" + version + "\"} 1\n";
  Metric(out, "kprobectl_scrape_duration_seconds", "gauge", "Time this scrape took to read the counts",
         Decimal(scrape.duration_seconds));
  Metric(out, "kprobectl_scrape_errors_total", "counter", "Scrapes answered with an error",
         std::to_string(scrape.errors));
  if (scrape.events_lost)
    Metric(out, "kprobectl_events_lost_total", "counter",
           "Events the ring buffer lost before kprobectl counted them (overrun, dropped; all CPUs)",
           std::to_string(*scrape.events_lost));
  Metric(out, "kprobectl_config_last_reload_successful", "gauge",
         "Whether the last configuration reload attempt was successful.", reload.last_successful ? "1" : "0");
  Metric(out, "kprobectl_config_last_reload_success_timestamp_seconds", "gauge",
         "Timestamp of the last successful configuration reload.", Decimal(reload.last_success_seconds));
  Metric(out, "kprobectl_config_reload_failures_total", "counter", "Configuration reloads refused.",
         std::to_string(reload.failures));
  Metric(out, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
         Decimal(p.cpu_seconds));
  Metric(out, "process_open_fds", "gauge", "Number of open file descriptors.", std::to_string(p.open_fds));
  if (p.max_fds)
    Metric(out, "process_max_fds", "gauge", "Maximum number of open file descriptors.", std::to_string(p.max_fds));
  Metric(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
         std::to_string(p.resident_bytes));
  Metric(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
         std::to_string(p.virtual_bytes));
  Metric(out, "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
         Decimal(p.start_time_seconds));
  return out;
}

}  // namespace kprobectl
