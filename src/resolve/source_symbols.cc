// SPDX-License-Identifier: GPL-2.0-or-later
//
// The sources that need no debuginfo: the ELF symbol table of a binary or a
// kernel image (FUNC[@VER][+OFF][%return], globs, 0xADDR; static functions
// of one name in several objects each give a place), and, for the running
// kernel without an image, the kernel itself: SYM+OFF targets that it
// resolves and checks when the definition is written.
#include <algorithm>

#include "kprobectl/glob.h"
#include "kprobectl/strings.h"
#include "resolve_internal.h"

namespace kprobectl::resolve {

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
    bool similar =
        s.name.find(name) != std::string::npos ||
        (name.size() > 3 && std::string_view(name).find(s.name) != std::string_view::npos && s.name.size() > 3);
    if (similar && std::find(out.begin(), out.end(), s.name) == out.end()) out.push_back(s.name);
    if (out.size() == 5) break;
  }
  return out;
}

// A place in the image, and its origin as the symbol table tells it.
struct Place {
  uint64_t address = 0;
  ProbeOrigin origin;
};

Result<Place> PlaceIn(const ProbeSpec& spec, const ElfImage& image, const ElfSymbol& s) {
  uint64_t offset = spec.point.offset.value_or(0);
  if (s.size && offset >= s.size)
    return Fail("offset " + std::to_string(offset) + " is outside '" + s.name + "' (" + std::to_string(s.size) +
                    " bytes) in " + image.path(),
                "give an offset below the function's size");
  Place place;
  place.address = s.value + offset;
  place.origin.function = s.name;
  place.origin.symbol = s.name;
  place.origin.symbol_offset = offset;
  place.origin.entry = offset == 0;
  place.origin.source = "the symbol table";
  return place;
}

// Every place `spec` names in the symbol table.
Result<std::vector<Place>> Places(const ProbeSpec& spec, const ElfImage& image) {
  const ProbePoint& p = spec.point;
  std::vector<Place> out;
  if (p.address) {
    Place place;
    place.address = *p.address + p.offset.value_or(0);
    (void)KP_TRY(image.CodeFileOffset(place.address));  // an address the file maps
    place.origin.source = "the symbol table";
    if (const ElfSymbol* f = image.FunctionAt(place.address)) {
      place.origin.function = f->name;
      place.origin.symbol = f->name;
      place.origin.symbol_offset = place.address - f->value;
      place.origin.entry = place.origin.symbol_offset == 0;
    }
    out.push_back(place);
    return out;
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
    out.push_back(KP_TRY(PlaceIn(spec, image, s)));
  }
  if (out.empty()) {
    std::string what = glob ? "no function matches '" + p.function + "'" : "no function '" + p.function + "'";
    if (!p.version.empty()) what += " with version " + p.version;
    auto similar = SimilarFunctions(image, p.function);
    return Fail(what + " in " + image.path(), similar.empty()
                                                  ? "list its functions with 'kprobectl funcs -x " + image.path() + "'"
                                                  : "similar names: " + Join(similar, ", "));
  }
  return out;
}

}  // namespace

Result<std::vector<ResolvedLocation>> LocateWithSymbols(const ProbeSpec& spec, const Target& target,
                                                        const SystemView& system) {
  KP_TRY_VOID(RequireNoDebuginfo(spec));
  const ElfImage& image = *target.image;
  ProbeKind kind = target.probe_kind();
  if (kind == ProbeKind::kUser && image.path().find_first_of(" \t\n") != std::string::npos)
    return Fail("the path '" + image.path() + "' has a blank, which uprobe_events cannot take",
                "probe it through a symbolic link whose path has no blanks");
  std::vector<Place> places = KP_TRY(Places(spec, image));
  std::vector<ResolvedLocation> out;
  for (const Place& place : places) {
    ResolvedLocation loc;
    loc.address = place.address;
    loc.origin = place.origin;
    if (kind == ProbeKind::kUser) {
      loc.target.kind = ProbeTarget::kFile;
      loc.target.path = image.path();
      loc.target.offset = KP_TRY(image.CodeFileOffset(place.address));
      loc.event_base = !spec.event.empty()  ? spec.event
                       : spec.point.address ? EventBase(spec.point, "")
                                            : EventBase(spec.point, place.origin.function);
    } else {
      loc.target = KP_TRY(KernelTarget(image, place.address));
      loc.event_base = !spec.event.empty() ? spec.event : EventBase(spec.point, place.origin.function);
    }
    ArgContext ctx{kind, spec.point.retprobe, place.origin.entry, &system.features, &image, place.address};
    loc.args = KP_TRY(RawArgs(spec, ctx));
    out.push_back(std::move(loc));
  }
  return out;
}

Result<std::vector<ResolvedLocation>> LocateByName(const ProbeSpec& spec, const SystemView& system) {
  KP_TRY_VOID(RequireNoDebuginfo(spec));
  const ProbePoint& p = spec.point;
  if (IsGlob(p.function))
    return Fail("'" + p.function + "': kernel function globs need the kernel's symbol table", "name one function");
  if (!p.version.empty() || p.any_file)
    return Fail("'" + DescribePoint(p) + "': symbol versions and @* are for user-space probes");
  ResolvedLocation loc;
  if (p.address) {
    loc.target.kind = ProbeTarget::kAddress;
    loc.target.address = *p.address + p.offset.value_or(0);
  } else {
    loc.target.kind = ProbeTarget::kSymbol;
    loc.target.symbol = p.function;
    loc.target.offset = p.offset.value_or(0);
    loc.origin.function = p.function;
    loc.origin.symbol = p.function;
    loc.origin.symbol_offset = loc.target.offset;
  }
  loc.origin.entry = !p.address && p.offset.value_or(0) == 0;
  loc.origin.source = "the kernel (by name)";
  loc.event_base = !spec.event.empty() ? spec.event : EventBase(p, p.address ? "" : p.function);
  ArgContext ctx{ProbeKind::kKernel, p.retprobe, loc.origin.entry, &system.features, nullptr, 0};
  loc.args = KP_TRY(RawArgs(spec, ctx));
  return std::vector<ResolvedLocation>{std::move(loc)};
}

}  // namespace kprobectl::resolve
