// SPDX-License-Identifier: GPL-2.0-or-later
//
// What kprobectl serve answers: read-only. GET (and HEAD) of /metrics is
// the exposition; / is a landing page that links to it; every other path
// is 404 and every other method 405 with Allow, so that no request can
// add, change or remove a probe. The one exception, POST /-/reload, reads
// the configuration file again (as SIGHUP does) where the file enables it
// (enable-reload; as Prometheus' --web.enable-lifecycle), else 403: a
// request can make serve read what the file's owner wrote, nothing else.
// libmicrohttpd has parsed the request by then (the query string is not
// part of `url`).
#include "kprobectl/serve.h"

namespace kprobectl {

namespace {

HttpAnswer Reload(std::string_view method, const std::function<Result<void>()>& reload) {
  HttpAnswer answer;
  if (method != "POST") {
    answer.status = 405;
    answer.allow = "POST";
    answer.body = "kprobectl serve: POST /-/reload reads the configuration again\n";
    return answer;
  }
  if (!reload) {
    answer.status = 403;
    answer.body =
        "kprobectl serve: reloading over HTTP is off: 'enable-reload' in the configuration turns it on "
        "(or send serve SIGHUP)\n";
    return answer;
  }
  auto reloaded = reload();
  if (!reloaded) {
    answer.status = 500;
    answer.body = "kprobectl: error: " + reloaded.error().message + "\n" +
                  (reloaded.error().hint.empty() ? "" : "  hint: " + reloaded.error().hint + "\n") +
                  "kprobectl serve: the running configuration is kept\n";
    return answer;
  }
  answer.body = "kprobectl serve: configuration reloaded\n";
  return answer;
}

}  // namespace

HttpAnswer AnswerRequest(std::string_view method, std::string_view url,
                         const std::function<Result<std::string>()>& metrics, size_t max_body,
                         const std::function<Result<void>()>& reload) {
  if (url == "/-/reload") return Reload(method, reload);
  HttpAnswer answer;
  bool head = method == "HEAD";
  if (method != "GET" && !head) {
    answer.status = 405;
    answer.allow = "GET, HEAD";
    answer.body = "kprobectl serve is read-only: GET /metrics\n";
    return answer;
  }
  answer.head = head;
  if (url == "/") {
    answer.content_type = "text/html; charset=utf-8";
    answer.body =
        "<!DOCTYPE html>\n<html><head><title>kprobectl serve</title></head>\n"
        "<body><h1>kprobectl serve</h1><p>Probe counts for Prometheus: <a href=\"/metrics\">/metrics</a></p>"
        "</body></html>\n";
    return answer;
  }
  if (url != "/metrics") {
    answer.status = 404;
    answer.body = "not found: the metrics are at /metrics\n";
    return answer;
  }
  auto text = metrics();
  if (!text) {
    answer.status = 500;
    answer.body = "kprobectl: error: " + text.error().message + "\n";
    return answer;
  }
  if (text->size() > max_body) {
    answer.status = 500;
    answer.body = "kprobectl: the metrics (" + std::to_string(text->size()) + " bytes) pass the limit of " +
                  std::to_string(max_body) + " bytes: lower max-series, or use fewer keys\n";
    return answer;
  }
  answer.content_type = "text/plain; version=0.0.4; charset=utf-8";
  answer.body = std::move(*text);
  return answer;
}

}  // namespace kprobectl
