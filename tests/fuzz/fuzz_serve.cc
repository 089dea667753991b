// SPDX-License-Identifier: GPL-2.0-or-later
//
// Fuzz target: what kprobectl serve reads from outside. Its configuration
// file; a request's method and path (split at the first blank, as
// libmicrohttpd hands them over), which must be answered read-only: the
// metrics rendered for GET or HEAD of /metrics only, every other method
// 405, every other path 404; the kernel's hist file, read back; the web
// configuration (YAML, refused or read, never crashing); and an
// Authorization header, let through only when a password matched.
#include <string_view>

#include "fuzz_target.h"
#include "kprobectl/serve.h"
#include "kprobectl/trace_event_def.h"
#include "kprobectl/web_config.h"

using namespace kprobectl;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ParseServeConfig(text, "fuzz.conf");
  if (auto web = ParseWebConfig(text, "fuzz.yml"); web && web->tls) (void)TlsPriorities(*web->tls, "fuzz.yml");
  static const std::vector<WebUser> users = {{"alice", std::string(60, 'x')}};
  bool matched = false;
  auto denied = CheckBasicAuth(
      text, users, [&](const std::string& password, const std::string&) { return matched = password == "secret"; });
  KP_FUZZ_CHECK(denied || (matched && text.starts_with("Basic ")));

  size_t blank = text.find(' ');
  std::string_view method = text.substr(0, blank);
  std::string_view url = blank == std::string_view::npos ? std::string_view() : text.substr(blank + 1);
  bool rendered = false;
  HttpAnswer answer = AnswerRequest(
      method, url,
      [&]() -> Result<std::string> {
        rendered = true;
        return std::string("m 1\n");
      },
      1024);
  bool reads = method == "GET" || method == "HEAD";
  KP_FUZZ_CHECK(rendered == (reads && url == "/metrics"));
  KP_FUZZ_CHECK(reads || (answer.status == 405 && answer.allow == "GET, HEAD"));
  KP_FUZZ_CHECK(!reads || url == "/metrics" || url == "/" || answer.status == 404);

  static const TraceEventDef def =
      *ParseDefinition("p:samp/work /tmp/loop:0x1149 n=%di:s32 s=+0(%si):string size=%dx:u64", ProbeKind::kUser);
  for (const char* keys : {"comm,n", "s", "n.log2", "n.buckets=3", "pid,size"}) {
    auto spec = BindAggregation(*ParseAggregation({{keys}, {"size"}, {}, "", 0}), def);
    KP_FUZZ_CHECK(spec.has_value());
    auto table = ParseKernelHist(text, *spec, "samp:work");
    if (table) (void)FormatTable(*table, *spec);
  }
  return 0;
}
