// SPDX-License-Identifier: GPL-2.0-or-later
//
// A reload's changes, from the running configuration and the next: each
// line of the next matched to an unmatched equal line of the running one
// (two equal lines are two probes, kept or added one for one).
#include <algorithm>

#include "kprobectl/serve.h"

namespace kprobectl {

namespace {

bool Same(const ServeProbe& a, const ServeProbe& b) { return a.exec == b.exec && a.spec == b.spec; }

bool Same(const ServeHist& a, const ServeHist& b) {
  return a.event == b.event && a.words.keys == b.words.keys && a.words.sums == b.words.sums &&
         a.words.maxes == b.words.maxes && a.words.sort == b.words.sort && a.words.top == b.words.top &&
         a.filter == b.filter && a.name == b.name;
}

template <typename Line>
void Match(const std::vector<Line>& running, const std::vector<Line>& next,
           std::vector<std::pair<size_t, size_t>>& kept, std::vector<size_t>& added, std::vector<size_t>& removed) {
  std::vector<bool> taken(running.size(), false);
  for (size_t n = 0; n < next.size(); ++n) {
    size_t r = 0;
    while (r < running.size() && (taken[r] || !Same(running[r], next[n]))) ++r;
    if (r == running.size()) {
      added.push_back(n);
      continue;
    }
    taken[r] = true;
    kept.emplace_back(r, n);
  }
  for (size_t r = 0; r < running.size(); ++r)
    if (!taken[r]) removed.push_back(r);
}

}  // namespace

ServeDiff DiffServeConfigs(const ServeConfig& running, const ServeConfig& next) {
  ServeDiff diff;
  Match(running.probes, next.probes, diff.kept_probes, diff.added_probes, diff.removed_probes);
  Match(running.hists, next.hists, diff.kept_hists, diff.added_hists, diff.removed_hists);
  return diff;
}

Result<void> CheckReloadable(const ServeConfig& running, const ServeConfig& next, const std::string& path) {
  if (running.address != next.address || running.port != next.port)
    return Fail(path + ": listen " + next.address + ":" + std::to_string(next.port) + " is not where serve listens (" +
                    running.address + ":" + std::to_string(running.port) + ")",
                "a reload keeps the socket: restart serve to listen elsewhere");
  return {};
}

}  // namespace kprobectl
