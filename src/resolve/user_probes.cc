// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>

#include "kprobectl/glob.h"
#include "kprobectl/resolve.h"
#include "kprobectl/strings.h"

namespace kprobectl {

namespace {

bool VersionMatches(const ProbePoint& point, const ElfSymbol& s) {
  if (point.version.empty()) return true;
  if (point.version[0] == '@') return s.default_version && s.version == point.version.substr(1);
  return s.version == point.version;
}

// Function names close to `name`, for "did you mean".
std::vector<std::string> SimilarFunctions(const ElfImage& image, std::string_view name) {
  std::vector<std::string> out;
  for (const ElfSymbol& s : image.symbols()) {
    if (s.type != ElfSymbol::kFunction || s.value == 0) continue;
    bool similar = s.name.find(name) != std::string::npos ||
                   (name.size() > 3 && std::string_view(name).find(s.name) != std::string_view::npos && s.name.size() > 3);
    if (similar && std::find(out.begin(), out.end(), s.name) == out.end()) out.push_back(s.name);
    if (out.size() == 5) break;
  }
  return out;
}

Result<ProbeLocation> LocationFor(const ProbeSpec& spec, const ElfImage& image, const ElfSymbol& s) {
  ProbeLocation loc;
  loc.function = s.name;
  loc.function_offset = spec.point.offset.value_or(0);
  if (s.size && loc.function_offset >= s.size)
    return Fail("offset " + std::to_string(loc.function_offset) + " is outside '" + s.name + "' (" +
                    std::to_string(s.size) + " bytes) in " + image.path(),
                "give an offset below the function's size");
  loc.address = s.value + loc.function_offset;
  loc.at_entry = loc.function_offset == 0;
  return loc;
}

}  // namespace

Result<ResolvedProbe> ResolveUserProbe(const ProbeSpec& spec, const ElfImage& image) {
  KP_TRY_VOID(RequireNoDebuginfo(spec));
  ResolvedProbe resolved{spec, {}};
  const ProbePoint& p = spec.point;
  if (p.address) {
    uint64_t address = *p.address + p.offset.value_or(0);
    KP_TRY(image.CodeFileOffset(address));
    ProbeLocation loc;
    loc.address = address;
    if (const ElfSymbol* f = image.FunctionAt(address)) {
      loc.function = f->name;
      loc.function_offset = address - f->value;
      loc.at_entry = loc.function_offset == 0;
    }
    resolved.locations.push_back(loc);
    return resolved;
  }
  bool glob = IsGlob(p.function);
  std::vector<uint64_t> seen_addresses;
  for (const ElfSymbol& s : image.symbols()) {
    if (s.type != ElfSymbol::kFunction || s.value == 0) continue;
    if (glob ? !GlobMatch(p.function, s.name) : s.name != p.function) continue;
    if (!VersionMatches(p, s)) continue;
    // Aliases (several names, one address) are one probe.
    if (std::find(seen_addresses.begin(), seen_addresses.end(), s.value) != seen_addresses.end()) continue;
    seen_addresses.push_back(s.value);
    resolved.locations.push_back(KP_TRY(LocationFor(spec, image, s)));
  }
  if (resolved.locations.empty()) {
    std::string what = glob ? "no function matches '" + p.function + "'" : "no function '" + p.function + "'";
    if (!p.version.empty()) what += " with version " + p.version;
    auto similar = SimilarFunctions(image, p.function);
    return Fail(what + " in " + image.path(),
                similar.empty() ? "list its functions with 'kprobectl funcs -x " + image.path() + "'"
                                : "similar names: " + Join(similar, ", "));
  }
  return resolved;
}

Result<std::vector<TraceEventDef>> BuildUserDefinitions(const std::vector<ResolvedProbe>& probes,
                                                        const ElfImage& image, const KernelFeatures& features,
                                                        EventNamer& namer) {
  if (image.path().find_first_of(" \t\n") != std::string::npos)
    return Fail("the path '" + image.path() + "' has a blank, which uprobe_events cannot take",
                "probe it through a symbolic link whose path has no blanks");
  std::vector<TraceEventDef> defs;
  std::string default_group = UserGroupName(image.path());
  for (const ResolvedProbe& probe : probes) {
    const ProbeSpec& spec = probe.spec;
    bool glob = IsGlob(spec.point.function);
    for (size_t i = 0; i < probe.locations.size(); ++i) {
      const ProbeLocation& loc = probe.locations[i];
      TraceEventDef def;
      def.kind = ProbeKind::kUser;
      def.retprobe = spec.point.retprobe;
      def.group = spec.group.empty() ? default_group : spec.group;
      std::string base = !spec.event.empty() ? spec.event
                         : spec.point.address ? EventBase(spec.point, "")
                                              : EventBase(spec.point, loc.function);
      // A glob names each event after its own function, not EV_1, EV_2.
      bool extra = i > 0 && (!glob || !spec.event.empty());
      def.event = KP_TRY(namer.Take(def.group, base, def.retprobe, extra));
      def.target.kind = ProbeTarget::kFile;
      def.target.path = image.path();
      def.target.offset = KP_TRY(image.CodeFileOffset(loc.address));
      FetchContext context{ProbeKind::kUser, def.retprobe, loc.at_entry, &features, &image, loc.address};
      def.args = KP_TRY(ConvertArgs(spec, context));
      defs.push_back(std::move(def));
    }
  }
  return defs;
}

}  // namespace kprobectl
