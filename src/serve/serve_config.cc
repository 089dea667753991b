// SPDX-License-Identifier: GPL-2.0-or-later
//
// The configuration of kprobectl serve: one directive a line, words as a
// shell splits them (quotes for filters), '#' to the end of a line a
// comment. The options are the command line's, so that a one-liner moves
// into the file as it is:
//   listen 127.0.0.1:9464
//   web-config FILE      (TLS and authentication: the exporter-toolkit's format)
//   max-series 1000
//   enable-reload        (POST /-/reload reads the file again, as SIGHUP does)
//   probe [-x BINARY] SPEC [ARG...]
//   hist GROUP:EVENT [-k KEYS] [--sum ARG]... [--max ARG]... [--filter EXPR] [--name NAME]
#include <algorithm>
#include <charconv>

#include "kprobectl/serve.h"
#include "kprobectl/strings.h"

namespace kprobectl {

namespace {

// Words as a shell splits them: blanks apart, '...' and "..." kept whole
// (a backslash escapes the next character outside single quotes).
Result<std::vector<std::string>> SplitShellWords(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == '#' && !in_word) break;
    if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(std::exchange(word, {}));
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'' || c == '"') {
      size_t end = line.find(c, i + 1);
      if (end == std::string_view::npos) return Fail(std::string("a ") + c + " is not closed");
      std::string_view quoted = line.substr(i + 1, end - i - 1);
      for (size_t j = 0; j < quoted.size(); ++j) {
        if (c == '"' && quoted[j] == '\\' && j + 1 < quoted.size()) ++j;
        word += quoted[j];
      }
      i = end;
    } else if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

Result<unsigned> Number(std::string_view text, std::string_view what) {
  unsigned n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    return Fail(std::string(what) + " '" + std::string(text) + "' is not a number");
  return n;
}

bool IsMetricName(std::string_view name) {
  if (name.empty() || !(IsIdentStart(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return IsIdentChar(c); });
}

// "probe_demo:compute" -> "probe_demo_compute".
std::string NameOf(std::string_view event) {
  std::string out;
  for (char c : event) out += IsIdentChar(c) ? c : '_';
  return out;
}

Result<ServeProbe> ParseProbe(const std::vector<std::string>& words) {
  ServeProbe probe;
  size_t i = 1;
  if (i < words.size() && (words[i] == "-x" || words[i] == "--exec")) {
    if (i + 1 >= words.size()) return Fail("probe: -x needs a binary");
    probe.exec = words[i + 1];
    i += 2;
  }
  probe.spec.assign(words.begin() + static_cast<ptrdiff_t>(i), words.end());
  if (probe.spec.empty()) return Fail("probe: no probe given", "probe [-x BINARY] SPEC [ARG...]");
  return probe;
}

bool IsHistOption(const std::string& option) {
  for (const char* known : {"-k", "--key", "--sum", "--max", "--filter", "--name"})
    if (option == known) return true;
  return false;
}

Result<ServeHist> ParseHist(const std::vector<std::string>& words) {
  ServeHist hist;
  if (words.size() < 2 || words[1].starts_with("-"))
    return Fail("hist: no event given",
                "hist GROUP:EVENT [-k KEYS] [--sum ARG] [--max ARG] [--filter EXPR] [--name NAME]");
  hist.event = words[1];
  if (hist.event.find(':') == std::string::npos)
    return Fail("hist: '" + hist.event + "' is not GROUP:EVENT", "the probe's event, as kprobectl list shows it");
  hist.name = NameOf(hist.event);
  for (size_t i = 2; i < words.size(); i += 2) {
    const std::string& option = words[i];
    if (option == "--latency")
      return Fail("hist: --latency is not served: serve exports counts, sums and maxima of a probe's arguments",
                  "time a function with kprobectl hist --latency");
    if (!IsHistOption(option))
      return Fail("hist: unknown option '" + option + "'", "hist takes -k, --sum, --max, --filter and --name");
    if (i + 1 >= words.size()) return Fail("hist: " + option + " needs a value");
    const std::string& value = words[i + 1];
    if (option == "-k" || option == "--key")
      hist.words.keys.push_back(value);
    else if (option == "--sum")
      hist.words.sums.push_back(value);
    else if (option == "--max")
      hist.words.maxes.push_back(value);
    else if (option == "--filter")
      hist.filter = value;
    else
      hist.name = value;
  }
  if (!IsMetricName(hist.name))
    return Fail("hist: --name '" + hist.name + "' cannot be in a metric's name", "letters, digits and _");
  if (auto spec = ParseAggregation(hist.words))
    for (const AggKey& key : spec->keys)
      if (key.IsStack())
        return Fail("hist: -k " + key.text + ": a stack is no Prometheus label (a series for every stack)",
                    "count stacks with kprobectl hist -k " + key.text);
  return hist;
}

Result<void> ParseLine(const std::vector<std::string>& words, ServeConfig& config) {
  const std::string& directive = words[0];
  if (directive == "listen") {
    if (words.size() != 2) return Fail("listen takes one ADDRESS:PORT");
    return ParseListen(words[1], config);
  }
  if (directive == "max-series") {
    if (words.size() != 2) return Fail("max-series takes one number");
    config.max_series = KP_TRY(Number(words[1], "max-series"));
    if (config.max_series == 0) return Fail("max-series 0 would export nothing");
    return {};
  }
  if (directive == "web-config") {
    if (words.size() != 2) return Fail("web-config takes one FILE");
    config.web_config = words[1];
    return {};
  }
  if (directive == "enable-reload") {
    if (words.size() != 1) return Fail("enable-reload takes nothing");
    config.enable_reload = true;
    return {};
  }
  if (directive == "probe") {
    config.probes.push_back(KP_TRY(ParseProbe(words)));
    return {};
  }
  if (directive == "hist") {
    config.hists.push_back(KP_TRY(ParseHist(words)));
    return {};
  }
  return Fail("unknown directive '" + directive + "'",
              "the directives: listen, web-config, max-series, enable-reload, probe, hist");
}

}  // namespace

Result<void> ParseListen(std::string_view text, ServeConfig& config) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return Fail("listen '" + std::string(text) + "': no :PORT");
  unsigned port = KP_TRY(Number(text.substr(colon + 1), "the port"));
  if (port == 0 || port > 65535) return Fail("listen: port " + std::to_string(port) + " is not 1-65535");
  std::string address(text.substr(0, colon));
  if (address.starts_with("[") && address.ends_with("]")) address = address.substr(1, address.size() - 2);
  config.address = address.empty() ? "127.0.0.1" : address;
  config.port = static_cast<uint16_t>(port);
  return {};
}

Result<ServeConfig> ParseServeConfig(std::string_view text, const std::string& path) {
  ServeConfig config;
  std::vector<std::string> lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string where = path + ":" + std::to_string(i + 1) + ": ";
    auto words = SplitShellWords(lines[i]);
    if (!words) return Fail(where + words.error().message);
    if (words->empty()) continue;
    auto parsed = ParseLine(*words, config);
    if (!parsed) return Fail(where + parsed.error().message, parsed.error().hint);
    if ((*words)[0] == "probe") config.probes.back().line = static_cast<int>(i + 1);
    if ((*words)[0] == "hist") config.hists.back().line = static_cast<int>(i + 1);
  }
  // A relative web-config names a file beside this one.
  if (!config.web_config.empty() && !config.web_config.starts_with('/') && path.find('/') != std::string::npos)
    config.web_config = path.substr(0, path.rfind('/') + 1) + config.web_config;
  if (config.hists.empty() && config.probes.empty())
    return Fail(path + ": nothing to serve", "add 'probe SPEC' and 'hist GROUP:EVENT -k KEY' lines");
  std::vector<std::string> names;
  for (const ServeHist& h : config.hists) {
    if (std::find(names.begin(), names.end(), h.name) != names.end())
      return Fail(path + ":" + std::to_string(h.line) + ": hist: the name '" + h.name + "' is taken by another hist",
                  "give one --name");
    names.push_back(h.name);
  }
  return config;
}

}  // namespace kprobectl
