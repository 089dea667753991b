// SPDX-License-Identifier: GPL-2.0-or-later
//
// kprobectl serve, the parts that need no kernel: its configuration file
// (probes to keep in place, aggregations over them, where to listen),
// parsed with errors that name FILE:LINE; the Prometheus text exposition
// (version 0.0.4) of probe hits and aggregation tables, label values
// escaped, series per aggregation bounded; and the answer to an HTTP
// request, read-only (GET and HEAD of /metrics).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kprobectl/aggregation.h"
#include "kprobectl/result.h"

namespace kprobectl {

struct ServeProbe {
  std::string exec;               // -x BINARY; empty: the kernel
  std::vector<std::string> spec;  // SPEC [ARG...]
  int line = 0;
};

struct ServeHist {
  std::string event;  // GROUP:EVENT
  AggregationWords words;
  std::string filter;
  std::string name;  // the metrics' name: kprobectl_NAME_...
  int line = 0;
};

struct ServeConfig {
  std::string address = "127.0.0.1";
  uint16_t port = 9464;
  unsigned max_series = 1000;  // label sets per aggregation
  std::string web_config;      // web-config FILE, beside this file when relative; empty: none
  bool enable_reload = false;  // POST /-/reload reads the file again, as SIGHUP does
  std::vector<ServeProbe> probes;
  std::vector<ServeHist> hists;
};

// `path` names the file in errors ("kprobectl.conf:3: ...").
Result<ServeConfig> ParseServeConfig(std::string_view text, const std::string& path);

// What a reload changes, line by line: a probe line is the same when its
// binary and words are, a hist line when its event, keys, values, filter
// and name are (where in the file, and comments, do not matter). Indexes
// into the running configuration's lines and the next one's.
struct ServeDiff {
  std::vector<std::pair<size_t, size_t>> kept_probes;  // running, next
  std::vector<size_t> added_probes;                    // next's
  std::vector<size_t> removed_probes;                  // running's
  std::vector<std::pair<size_t, size_t>> kept_hists;
  std::vector<size_t> added_hists;
  std::vector<size_t> removed_hists;
};
ServeDiff DiffServeConfigs(const ServeConfig& running, const ServeConfig& next);
// What a reload cannot change without a restart (the address listened on).
Result<void> CheckReloadable(const ServeConfig& running, const ServeConfig& next, const std::string& path);
// "ADDRESS:PORT" or ":PORT" (127.0.0.1).
Result<void> ParseListen(std::string_view text, ServeConfig& config);

// One aggregation's table and how it was asked for.
struct MetricsTable {
  std::string name;  // valid in a metric name
  const AggregationSpec* spec = nullptr;
  const AggTable* table = nullptr;
};
struct ProbeHits {
  std::string event;  // group:event
  uint64_t hits = 0;
  std::optional<uint64_t> misses;
  std::optional<uint64_t> read;  // events kprobectl read of it, where kprobectl counts it
};
// The exposition; at most `max_series` label sets an aggregation, the
// busiest kept, the rest counted in kprobectl_series_dropped.
std::string RenderMetrics(const std::vector<ProbeHits>& probes, const std::vector<MetricsTable>& tables,
                          unsigned max_series);

// The answer to one request. `metrics` renders the exposition (called only
// for GET and HEAD of /metrics); `reload` reads the configuration again
// (POST /-/reload; empty where the configuration does not enable it).
struct HttpAnswer {
  unsigned status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::string allow;             // for 405
  std::string www_authenticate;  // for 401
  bool head = false;             // the body's length, no body
};
HttpAnswer AnswerRequest(std::string_view method, std::string_view url,
                         const std::function<Result<std::string>()>& metrics, size_t max_body,
                         const std::function<Result<void>()>& reload = {});

}  // namespace kprobectl
