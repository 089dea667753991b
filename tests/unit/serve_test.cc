// SPDX-License-Identifier: GPL-2.0-or-later
//
// kprobectl serve without a kernel: the configuration (errors naming
// FILE:LINE), the exposition (exact text), the answer to each kind of
// request (read-only), and the HTTP server for real on a loopback port: a
// client that sends half a request and waits, or sends garbage, holds up
// no other.
#include "kprobectl/serve.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "kprobectl/http_server.h"
#include "kprobectl/self_metrics.h"
#include "test_support.h"

using namespace kprobectl;

namespace {

std::string ConfigError(const std::string& text) {
  auto parsed = ParseServeConfig(text, "k.conf");
  REQUIRE(!parsed);
  return parsed.error().message;
}

int Connect(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  return fd;
}

// Sends `request`, reads the answer until the server closes (or 5 s pass).
std::string Exchange(uint16_t port, const std::string& request) {
  int fd = Connect(port);
  REQUIRE(write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size()));
  std::string answer;
  char buffer[4096];
  for (pollfd p{fd, POLLIN, 0}; poll(&p, 1, 5000) > 0;) {
    ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n <= 0) break;
    answer.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return answer;
}

}  // namespace

TEST_CASE("serve: the configuration, and its errors by file and line") {
  auto config = *ParseServeConfig(
      "# a comment\n"
      "listen 127.0.0.1:9500\n"
      "probe -x /usr/bin/app 'app:req=handle size=%di:u64'  # the request's size\n"
      "hist app:req -k comm,size.log2 --filter 'size > 10' --name requests\n"
      "max-series 50\n",
      "k.conf");
  CHECK(config.address == "127.0.0.1");
  CHECK(config.port == 9500);
  CHECK(config.max_series == 50);
  REQUIRE(config.probes.size() == 1);
  CHECK(config.probes[0].exec == "/usr/bin/app");
  CHECK(config.probes[0].spec == std::vector<std::string>{"app:req=handle size=%di:u64"});
  CHECK(config.probes[0].line == 3);
  REQUIRE(config.hists.size() == 1);
  CHECK(config.hists[0].event == "app:req");
  CHECK(config.hists[0].words.keys == std::vector<std::string>{"comm,size.log2"});
  CHECK(config.hists[0].filter == "size > 10");
  CHECK(config.hists[0].name == "requests");
  CHECK(config.hists[0].line == 4);

  std::vector<std::pair<std::string, std::string>> cases = {
      {"probe a\nlisten 127.0.0.1\n", "k.conf:2: listen '127.0.0.1': no :PORT"},
      {"probe a\nlisten :70000\n", "k.conf:2: listen: port 70000 is not 1-65535"},
      {"probe a\n\nhist x -k comm\n", "k.conf:3: hist: 'x' is not GROUP:EVENT"},
      {"hist g:e --bogus 1\n", "k.conf:1: hist: unknown option '--bogus'"},
      {"hist g:e -k\n", "k.conf:1: hist: -k needs a value"},
      {"hist g:e --frob\n", "k.conf:1: hist: unknown option '--frob'"},
      {"hist g:e -k comm --latency\n",
       "k.conf:1: hist: --latency is not served: serve exports counts, sums and maxima of a probe's arguments"},
      {"hist g:e --name 'a b'\n", "k.conf:1: hist: --name 'a b' cannot be in a metric's name"},
      {"hist g:e\nhist g:e\n", "k.conf:2: hist: the name 'g_e' is taken by another hist"},
      {"probe 'unclosed\n", "k.conf:1: a ' is not closed"},
      {"probe -x\n", "k.conf:1: probe: -x needs a binary"},
      {"max-series 0\n", "k.conf:1: max-series 0 would export nothing"},
      {"serve everything\n", "k.conf:1: unknown directive 'serve'"},
      {"# nothing\n", "k.conf: nothing to serve"},
  };
  for (const auto& [text, error] : cases) {
    INFO(text);
    CHECK(ConfigError(text) == error);
  }
}

TEST_CASE("serve: the exposition, histograms and counters, series bounded") {
  TraceEventDef def =
      *ParseDefinition("p:app/req /usr/bin/app:0x1149 size=%di:u64 name=+0(%si):string", ProbeKind::kUser);
  AggregationSpec by_size = *BindAggregation(*ParseAggregation({{"comm,size.log2"}, {"size"}, {}, "", 0}), def);
  AggTable sizes{"app:req",
                 {{{{"app", 0, false}, NumberCell(by_size.keys[1], 3, true)}, 4, {30}},
                  {{{"app", 0, false}, NumberCell(by_size.keys[1], 1, true)}, 2, {3}},
                  {{{"db", 0, false}, NumberCell(by_size.keys[1], 2, true)}, 1, {4}}},
                 7,
                 0};
  AggregationSpec by_name = *BindAggregation(*ParseAggregation({{"name"}, {}, {"size"}, "", 0}), def);
  AggTable names{
      "app:req",
      {{{{"\"a\\\"b\"", 0, false}}, 5, {9}}, {{{"\"x\"", 0, false}}, 1, {2}}, {{{"\"y\"", 0, false}}, 1, {1}}},
      7,
      0};
  std::string text = RenderMetrics({{"app:req", 7, std::nullopt, 5}, {"k:open", 3, 1, std::nullopt}},
                                   {{"sizes", &by_size, &sizes}, {"names", &by_name, &names}}, 2);
  CHECK(text ==
        "# HELP kprobectl_probe_hits_total Times each probe was hit (kprobe_profile, uprobe_profile)\n"
        "# TYPE kprobectl_probe_hits_total counter\n"
        "kprobectl_probe_hits_total{event=\"app:req\"} 7\n"
        "kprobectl_probe_hits_total{event=\"k:open\"} 3\n"
        "# HELP kprobectl_probe_misses_total Times a kernel probe was missed (kprobe_profile)\n"
        "# TYPE kprobectl_probe_misses_total counter\n"
        "kprobectl_probe_misses_total{event=\"k:open\"} 1\n"
        "# HELP kprobectl_events_read_total Events kprobectl read from the ring buffer to count them\n"
        "# TYPE kprobectl_events_read_total counter\n"
        "kprobectl_events_read_total{event=\"app:req\"} 5\n"
        "# HELP kprobectl_sizes_size size of app:req, bucketed (size.log2)\n"
        "# TYPE kprobectl_sizes_size histogram\n"
        "kprobectl_sizes_size_bucket{comm=\"app\",le=\"2\"} 2\n"
        "kprobectl_sizes_size_bucket{comm=\"app\",le=\"8\"} 6\n"
        "kprobectl_sizes_size_bucket{comm=\"app\",le=\"+Inf\"} 6\n"
        "kprobectl_sizes_size_sum{comm=\"app\"} 33\n"
        "kprobectl_sizes_size_count{comm=\"app\"} 6\n"
        "kprobectl_sizes_size_bucket{comm=\"db\",le=\"4\"} 1\n"
        "kprobectl_sizes_size_bucket{comm=\"db\",le=\"+Inf\"} 1\n"
        "kprobectl_sizes_size_sum{comm=\"db\"} 4\n"
        "kprobectl_sizes_size_count{comm=\"db\"} 1\n"
        "# HELP kprobectl_names_hits_total hits of app:req by name\n"
        "# TYPE kprobectl_names_hits_total counter\n"
        "kprobectl_names_hits_total{name=\"a\\\\\\\"b\"} 5\n"
        "kprobectl_names_hits_total{name=\"x\"} 1\n"
        "# HELP kprobectl_names_size_max max(size) of app:req\n"
        "# TYPE kprobectl_names_size_max gauge\n"
        "kprobectl_names_size_max{name=\"a\\\\\\\"b\"} 9\n"
        "kprobectl_names_size_max{name=\"x\"} 2\n"
        "# HELP kprobectl_series_dropped Label sets of an aggregation not exported (max-series)\n"
        "# TYPE kprobectl_series_dropped gauge\n"
        "kprobectl_series_dropped{hist=\"sizes\"} 0\n"
        "kprobectl_series_dropped{hist=\"names\"} 1\n");
}

TEST_CASE("serve: only GET and HEAD of /metrics render, nothing else changes anything") {
  int rendered = 0;
  auto metrics = [&]() -> Result<std::string> {
    ++rendered;
    return std::string("m 1\n");
  };
  struct Case {
    std::string method, url;
    unsigned status;
    std::string body;
  };
  std::vector<Case> cases = {
      {"GET", "/metrics", 200, "m 1\n"},
      {"HEAD", "/metrics", 200, "m 1\n"},
      {"GET", "/", 200,
       "<!DOCTYPE html>\n<html><head><title>kprobectl serve</title></head>\n<body><h1>kprobectl serve</h1><p>Probe "
       "counts for Prometheus: <a href=\"/metrics\">/metrics</a></p></body></html>\n"},
      {"GET", "/metrics/", 404, "not found: the metrics are at /metrics\n"},
      {"GET", "/../metrics", 404, "not found: the metrics are at /metrics\n"},
      {"POST", "/metrics", 405, "kprobectl serve is read-only: GET /metrics\n"},
      {"PUT", "/metrics", 405, "kprobectl serve is read-only: GET /metrics\n"},
      {"DELETE", "/", 405, "kprobectl serve is read-only: GET /metrics\n"},
      {"get", "/metrics", 405, "kprobectl serve is read-only: GET /metrics\n"},
      {"POST", "/-/reload", 403,
       "kprobectl serve: reloading over HTTP is off: 'enable-reload' in the configuration turns it on (or send "
       "serve SIGHUP)\n"},
  };
  for (const Case& c : cases) {
    INFO(c.method << " " << c.url);
    HttpAnswer answer = AnswerRequest(c.method, c.url, metrics, 1 << 20);
    CHECK(answer.status == c.status);
    CHECK(answer.body == c.body);
    CHECK(answer.allow == (c.status == 405 ? "GET, HEAD" : ""));
  }
  CHECK(rendered == 2);
  // Where the file enables it, POST /-/reload reloads, and says how it went.
  int reloads = 0;
  Result<void> outcome;
  auto reload = [&]() -> Result<void> {
    ++reloads;
    return outcome;
  };
  HttpAnswer done = AnswerRequest("POST", "/-/reload", metrics, 1 << 20, reload);
  CHECK((done.status == 200 && done.body == "kprobectl serve: configuration reloaded\n"));
  outcome = Fail("k.conf:3: probe: no probe given", "probe [-x BINARY] SPEC [ARG...]");
  HttpAnswer refused = AnswerRequest("POST", "/-/reload", metrics, 1 << 20, reload);
  CHECK(refused.status == 500);
  CHECK(refused.body ==
        "kprobectl: error: k.conf:3: probe: no probe given\n  hint: probe [-x BINARY] SPEC [ARG...]\n"
        "kprobectl serve: the running configuration is kept\n");
  HttpAnswer get = AnswerRequest("GET", "/-/reload", metrics, 1 << 20, reload);
  CHECK((get.status == 405 && get.allow == "POST"));
  CHECK(reloads == 2);
  CHECK(rendered == 2);
  HttpAnswer big = AnswerRequest("GET", "/metrics", metrics, 3);
  CHECK(big.status == 500);
  CHECK(big.body ==
        "kprobectl: the metrics (4 bytes) pass the limit of 3 bytes: lower max-series, or use fewer keys\n");
  HttpAnswer failed = AnswerRequest(
      "GET", "/metrics", []() -> Result<std::string> { return Fail("no hist file"); }, 1 << 20);
  CHECK(failed.status == 500);
  CHECK(failed.body == "kprobectl: error: no hist file\n");
}

TEST_CASE("serve: a reload's changes, line by line: the same lines kept, wherever they are") {
  auto running = *ParseServeConfig(
      "probe -x /bin/app handle\n"
      "probe -x /bin/app 'parse len=%si'\n"
      "probe do_sys_open\n"
      "hist probe_app:handle -k comm\n"
      "hist probe_app:parse -k len.log2 --filter 'len > 3'\n",
      "k.conf");
  auto next = *ParseServeConfig(
      "enable-reload\n"
      "# moved, changed, added\n"
      "probe do_sys_open\n"
      "probe -x /bin/app 'parse len=%si size=%di'\n"
      "probe -x /bin/app handle\n"
      "probe -x /bin/other handle\n"
      "hist probe_app:parse -k len.log2 --filter 'len > 4'\n"
      "hist probe_app:handle -k comm\n",
      "k.conf");
  CHECK(next.enable_reload);
  CHECK(!running.enable_reload);
  ServeDiff diff = DiffServeConfigs(running, next);
  CHECK(diff.kept_probes == std::vector<std::pair<size_t, size_t>>{{2, 0}, {0, 2}});
  CHECK(diff.added_probes == std::vector<size_t>{1, 3});
  CHECK(diff.removed_probes == std::vector<size_t>{1});
  CHECK(diff.kept_hists == std::vector<std::pair<size_t, size_t>>{{0, 1}});
  CHECK(diff.added_hists == std::vector<size_t>{0});
  CHECK(diff.removed_hists == std::vector<size_t>{1});
  // Two equal lines are two: one kept, one added.
  auto twice = *ParseServeConfig("probe do_sys_open\nprobe do_sys_open\n", "k.conf");
  auto once = *ParseServeConfig("probe do_sys_open\n", "k.conf");
  ServeDiff doubled = DiffServeConfigs(once, twice);
  CHECK(doubled.kept_probes == std::vector<std::pair<size_t, size_t>>{{0, 0}});
  CHECK(doubled.added_probes == std::vector<size_t>{1});
  CHECK(CheckReloadable(running, next, "k.conf"));
  auto moved = *ParseServeConfig("listen :9999\nprobe do_sys_open\n", "k.conf");
  auto refused = CheckReloadable(running, moved, "k.conf");
  REQUIRE(!refused);
  CHECK(refused.error().message == "k.conf: listen 127.0.0.1:9999 is not where serve listens (127.0.0.1:9464)");
  CHECK(refused.error().hint == "a reload keeps the socket: restart serve to listen elsewhere");
  CHECK(ConfigError("enable-reload yes\nprobe a\n") == "k.conf:1: enable-reload takes nothing");
}

TEST_CASE("serve: a slow or broken client holds up no other, a port in use is an error") {
  auto server = *HttpServer::Start("127.0.0.1", 0, [](const HttpRequest& request) {
    return AnswerRequest(
        request.method, request.url, []() -> Result<std::string> { return std::string("m 1\n"); }, 1 << 20);
  });
  uint16_t port = server->port();
  // Half a request, then silence; and a client that sends garbage.
  int slow = Connect(port);
  REQUIRE(write(slow, "GET /metr", 9) == 9);
  static const char kGarbage[] = "\x16\x03\x01\x00\xff garbage\r\n\r\n";  // a TLS hello's start, a NUL
  std::string garbage = Exchange(port, std::string(kGarbage, sizeof(kGarbage) - 1));
  CHECK(garbage.starts_with("HTTP/1.1 400"));
  std::string huge = Exchange(port, "GET /metrics HTTP/1.1\r\nX-Big: " + std::string(64 * 1024, 'a') + "\r\n\r\n");
  CHECK((huge.empty() || huge.starts_with("HTTP/1.1 4") || huge.starts_with("HTTP/1.1 5")));
  auto start = std::chrono::steady_clock::now();
  std::string answer = Exchange(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  // Answered while the slow client still waits (its timeout is 10 s).
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  CHECK(answer.starts_with("HTTP/1.1 200 OK\r\n"));
  CHECK(answer.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n") != std::string::npos);
  CHECK(answer.ends_with("\r\n\r\nm 1\n"));
  std::string post = Exchange(port, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc");
  CHECK(post.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"));
  CHECK(post.find("Allow: GET, HEAD\r\n") != std::string::npos);
  close(slow);

  // New options (headers here; TLS material in serve_tls.sh) on the same
  // socket: a connection open before is answered, the next ones get them.
  int before = Connect(port);
  REQUIRE(server->Reconfigure({std::nullopt, {{"X-Served-By", "kprobectl"}}}));
  std::string again = Exchange(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  CHECK(again.find("X-Served-By: kprobectl\r\n") != std::string::npos);
  CHECK(again.ends_with("\r\n\r\nm 1\n"));
  close(before);
  TlsMaterial bogus;
  bogus.cert_pem = "not a certificate";
  bogus.key_pem = "not a key";
  REQUIRE(!server->Reconfigure({bogus, {}}));
  std::string kept = Exchange(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  CHECK(kept.find("X-Served-By: kprobectl\r\n") != std::string::npos);

  auto taken = HttpServer::Start("127.0.0.1", port, [](const HttpRequest&) { return HttpAnswer{}; });
  REQUIRE(!taken);
  CHECK(taken.error().message == "cannot listen on 127.0.0.1:" + std::to_string(port) + ": Address already in use");
  auto bad = HttpServer::Start("localhost", 0, [](const HttpRequest&) { return HttpAnswer{}; });
  REQUIRE(!bad);
  CHECK(bad.error().message == "cannot listen on 'localhost': not an IPv4 or IPv6 address");
}

TEST_CASE("serve: metrics about itself, read from a prepared /proc, named as client libraries name them") {
  test::TempDir proc;
  std::filesystem::create_directories(proc / "4242/fd");
  for (const char* fd : {"0", "1", "2", "7"}) std::ofstream(proc / ("4242/fd/" + std::string(fd)));
  // comm "(kp) x" holds a blank and parentheses; utime 250, stime 50, starttime 1234, vsize, rss 300 pages.
  std::ofstream(proc / "4242/stat") << "4242 ((kp) x) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 50 0 0 20 0 3 0 "
                                       "1234 104857600 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0\n";
  std::ofstream(proc / "stat") << "cpu  1 2 3 4\nintr 5\nctxt 6\nbtime 1764300000\nprocesses 7\n";
  std::ofstream(proc / "4242/limits") << "Limit                     Soft Limit           Hard Limit           Units\n"
                                         "Max open files            1024                 524288               files\n";
  auto stats = ReadProcessStats(proc.path(), "4242", 100, 4096);
  REQUIRE(stats);
  CHECK(RenderSelfMetrics("0.9.0", *stats, {0.0125, 2, 17}, {false, 1764300100.5, 3}) ==
        "# HELP kprobectl_build_info kprobectl's version\n"
        "# TYPE kprobectl_build_info gauge\n"
        "kprobectl_build_info{version=\"0.9.0\"} 1\n"
        "# HELP kprobectl_scrape_duration_seconds Time this scrape took to read the counts\n"
        "# TYPE kprobectl_scrape_duration_seconds gauge\n"
        "kprobectl_scrape_duration_seconds 0.0125\n"
        "# HELP kprobectl_scrape_errors_total Scrapes answered with an error\n"
        "# TYPE kprobectl_scrape_errors_total counter\n"
        "kprobectl_scrape_errors_total 2\n"
        "# HELP kprobectl_events_lost_total Events the ring buffer lost before kprobectl counted them (overrun, "
        "dropped; all CPUs)\n"
        "# TYPE kprobectl_events_lost_total counter\n"
        "kprobectl_events_lost_total 17\n"
        "# HELP kprobectl_config_last_reload_successful Whether the last configuration reload attempt was "
        "successful.\n"
        "# TYPE kprobectl_config_last_reload_successful gauge\n"
        "kprobectl_config_last_reload_successful 0\n"
        "# HELP kprobectl_config_last_reload_success_timestamp_seconds Timestamp of the last successful "
        "configuration reload.\n"
        "# TYPE kprobectl_config_last_reload_success_timestamp_seconds gauge\n"
        "kprobectl_config_last_reload_success_timestamp_seconds 1764300100.5\n"
        "# HELP kprobectl_config_reload_failures_total Configuration reloads refused.\n"
        "# TYPE kprobectl_config_reload_failures_total counter\n"
        "kprobectl_config_reload_failures_total 3\n"
        "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
        "# TYPE process_cpu_seconds_total counter\n"
        "process_cpu_seconds_total 3\n"
        "# HELP process_open_fds Number of open file descriptors.\n"
        "# TYPE process_open_fds gauge\n"
        "process_open_fds 4\n"
        "# HELP process_max_fds Maximum number of open file descriptors.\n"
        "# TYPE process_max_fds gauge\n"
        "process_max_fds 1024\n"
        "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
        "# TYPE process_resident_memory_bytes gauge\n"
        "process_resident_memory_bytes 1228800\n"
        "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n"
        "# TYPE process_virtual_memory_bytes gauge\n"
        "process_virtual_memory_bytes 104857600\n"
        "# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n"
        "# TYPE process_start_time_seconds gauge\n"
        "process_start_time_seconds 1764300012.34\n");
  std::ofstream(proc / "4242/stat") << "4242 (kp) S 1 2 3\n";
  auto short_stat = ReadProcessStats(proc.path(), "4242", 100, 4096);
  REQUIRE(!short_stat);
  CHECK(short_stat.error().message == proc.path() + "/4242/stat: 6 fields, not 24 or more");
  // This process, for real: figures that cannot be zero.
  auto self = ReadProcessStats("/proc", "self", 100, 4096);
  REQUIRE(self);
  CHECK(self->resident_bytes > 0);
  CHECK(self->open_fds >= 3);
  CHECK(self->start_time_seconds > 1.5e9);
}
