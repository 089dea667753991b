// SPDX-License-Identifier: GPL-2.0-or-later
//
// kprobectl serve's metrics about itself, named as Prometheus' client
// libraries name them (process_cpu_seconds_total, process_resident_memory_bytes,
// process_open_fds, ...; client_golang's process collector), with
// kprobectl_build_info, the scrapes' own duration and errors, events lost
// and reloads. In: a
// /proc (tests pass a prepared tree), the process's directory there, the
// clock ticks a second and the page size. Out: plain figures, then their
// exposition.
#pragma once

#include <cstdint>
#include <optional>
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
  // Events the ring buffer of serve's instance lost (overrun and dropped,
  // all CPUs); none when the kernel counts everything (hist triggers).
  std::optional<uint64_t> events_lost;
};

// Reloads (SIGHUP, POST /-/reload, a changed web configuration), named as
// Prometheus names its own.
struct ReloadStats {
  bool last_successful = true;
  double last_success_seconds = 0;  // since the epoch: the start, until a reload succeeds
  uint64_t failures = 0;
};

std::string RenderSelfMetrics(const std::string& version, const ProcessStats& process, const ScrapeStats& scrape,
                              const ReloadStats& reload);

}  // namespace kprobectl
