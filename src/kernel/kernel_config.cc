// SPDX-License-Identifier: GPL-2.0-or-later
//
// zlib lives here only: /proc/config.gz is gzip'd text.
#include "kprobectl/kernel_config.h"

#include <zlib.h>

#include <fstream>
#include <sstream>

namespace kprobectl {

namespace {

std::optional<std::string> ReadGzip(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file) return std::nullopt;
  std::string out;
  char buf[16384];
  int n = 0;
  while ((n = gzread(file, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  bool failed = n < 0;
  gzclose(file);
  if (failed || out.empty()) return std::nullopt;
  return out;
}

std::optional<std::string> ReadPlain(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  if (text.str().empty()) return std::nullopt;
  return text.str();
}

}  // namespace

std::optional<KernelConfig> ReadKernelConfig(const KernelEnv& env) {
  std::string proc = env.root + env.proc + "/config.gz";
  if (auto text = ReadGzip(proc)) return KernelConfig{std::move(*text), env.proc + "/config.gz"};
  if (env.release.empty()) return std::nullopt;
  std::string boot = env.boot + "/config-" + env.release;
  if (auto text = ReadPlain(env.root + boot)) return KernelConfig{std::move(*text), boot};
  return std::nullopt;
}

}  // namespace kprobectl
