// SPDX-License-Identifier: GPL-2.0-or-later
//
// kprobectl serve's metrics about itself, named as Prometheus' client
// libraries name them (process_cpu_seconds_total, process_resident_memory_bytes,
// process_open_fds, ...; client_golang's process collector), with
// kprobectl_build_info and the scrapes' own duration and errors. In: a
// /proc (tests pass a prepared tree), the process's directory there, the
// clock ticks a second and the page size. Out: plain figures, then their
// exposition.
#pragma once

#include <cstdint>
#include <string>

#include "kprobectl/result.h"

namespace kprobectl {

struct ProcessStats {
  double cpu_seconds = 0;  // user + system
  uint64_t resident_bytes = 0;
  uint64_t virtual_bytes = 0;
  uint64_t open_fds = 0;
  uint64_t max_fds = 0;           // the soft limit; 0: unlimited
  double start_time_seconds = 0;  // since the epoch
};

// `proc` e.g. "/proc", `process` "self" or a pid.
Result<ProcessStats> ReadProcessStats(const std::string& proc, const std::string& process, long ticks_per_second,
                                      long page_size);

struct ScrapeStats {
  double duration_seconds = 0;  // this scrape's reading of the counts
  uint64_t errors = 0;          // scrapes answered with an error so far
};

std::string RenderSelfMetrics(const std::string& version, const ProcessStats& process, const ScrapeStats& scrape);

}  // namespace kprobectl
