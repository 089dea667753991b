// SPDX-License-Identifier: GPL-2.0-or-later
//
// funcs: the functions of a target that can be probed, from its symbols;
// for a kernel, without those kprobe_events would refuse.
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "kprobectl/cxx_names.h"
#include "kprobectl/resolve.h"

namespace kprobectl {

namespace {

// The names debugfs kprobes/blacklist lists ("0xSTART-0xEND\tSYMBOL").
std::set<std::string> BlacklistedNames(std::string_view text) {
  std::set<std::string> names;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    if (size_t tab = line.find_last_of("\t "); tab != std::string_view::npos) names.emplace(line.substr(tab + 1));
    at = end + 1;
  }
  return names;
}

// Without the kernel's image (BTF, no DWARF): the functions the BTF
// describes that ftrace can trace and kprobes do not refuse, by name, from
// the running kernel's own lists.
std::vector<std::string> BtfFunctions(const BtfInfo& btf, const GlobFilter& filter, const SystemView* running) {
  std::optional<TraceableFunctions> traceable;
  std::set<std::string> blacklisted;
  if (running && running->available_functions)
    traceable = TraceableFunctions::FromAvailable(*running->available_functions);
  if (running) blacklisted = BlacklistedNames(running->blacklist);
  std::vector<std::string> names;
  for (std::string& name : btf.Functions()) {
    ElfSymbol by_name;
    by_name.name = name;
    if (filter.Matches(name) && !blacklisted.contains(name) && (!traceable || traceable->Traceable(by_name)))
      names.push_back(std::move(name));
  }
  return names;
}

}  // namespace

Result<std::vector<std::string>> ProbeableFunctions(const Target& target, const GlobFilter& filter,
                                                    const SystemView* running) {
  if (!target.image && target.btf) return BtfFunctions(*target.btf, filter, running);
  if (!target.image) return std::unexpected(target.debuginfo_error);
  const ElfImage& image = *target.image;
  KprobeBlacklist blacklist;
  TraceableFunctions traceable;
  if (target.kernel()) {
    blacklist = KP_TRY(KprobeBlacklist::FromImage(image, *target.arch));
    traceable = KP_TRY(TraceableFunctions::FromImage(image, *target.arch));
  }
  std::set<std::string> names;
  for (const ElfSymbol& s : image.symbols()) {
    if (s.type != ElfSymbol::kFunction || s.value == 0) continue;
    // C++ by the names a probe point takes (overloads with their parameters).
    std::string name = s.name;
    if (auto demangled = Demangle(s.name)) {
      CxxName parts = SplitCxxName(*demangled);
      if (MadeForAnother(*demangled) || parts.qualifiers.find("[clone") != std::string::npos) continue;
      name = parts.qualified + parts.params + parts.qualifiers;
    }
    if (filter.Matches(name) && !blacklist.Find(s.value) && traceable.Traceable(s))
      names.insert(s.version.empty() ? name : name + "@" + (s.default_version ? "@" : "") + s.version);
  }
  return std::vector<std::string>(names.begin(), names.end());
}

Result<std::vector<MarkerSummary>> ProbeableMarkers(const Target& target, const GlobFilter& filter) {
  if (target.kernel() || !target.image)
    return Fail("USDT markers are in user-space binaries",
                "name one with -x: kprobectl -x /usr/bin/python3 funcs --sdt");
  std::map<std::string, MarkerSummary> markers;
  for (const SdtNote& note : target.image->sdt_notes()) {
    std::string name = "sdt_" + note.provider + ":" + note.name;
    if (!filter.Matches(name) && !filter.Matches(note.provider + ":" + note.name)) continue;
    auto [it, fresh] = markers.try_emplace(name);
    if (fresh) {
      it->second.name = name;
      it->second.args = note.args;
    }
    ++it->second.sites;
    it->second.semaphore |= note.semaphore != 0;
  }
  std::vector<MarkerSummary> out;
  for (auto& [name, summary] : markers) out.push_back(std::move(summary));
  return out;
}

}  // namespace kprobectl
