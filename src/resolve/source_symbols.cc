// SPDX-License-Identifier: GPL-2.0-or-later
//
// The sources that need no debuginfo: the ELF symbol table of a binary or a
// kernel image (FUNC[@VER][+OFF][%return], globs, 0xADDR; static functions
// of one name in several objects each give a place), and, for the running
// kernel without an image, the kernel itself: SYM+OFF targets that it
// resolves and checks when the definition is written.
#include <algorithm>

#include "kprobectl/cxx_names.h"
#include "kprobectl/glob.h"
#include "kprobectl/lang_names.h"
#include "kprobectl/nearest_names.h"
#include "kprobectl/strings.h"
#include "resolve_internal.h"

namespace kprobectl::resolve {

// What a point's function names: itself, and for C++ its qualified name
// and the parameter list written, if any.
WantedName Wanted(const ProbePoint& p, bool go) {
  WantedName w{p.function, IsGlob(p.function), IsCxxName(p.function), {}, {}};
  if (go) {
    // Go's names have '.', '(' and '[' of their own: no C++, no clone.
    w.go_glob = GoGlob(p.function);
    w.glob = IsGlob(w.go_glob);
    w.cxx = false;
  } else if (w.cxx) {
    w.parts = SplitCxxName(p.function);
    w.glob = IsGlob(w.parts.qualified);
  }
  return w;
}

// Whether symbol `s` is the function `w` names: by its name, or a C++
// symbol by its demangled name (overloads by their parameters). A clone or
// a .cold part is no function of its own here (the DWARF reaches them).
// The name in `shown` is the one messages and events use.
bool NameMatches(const WantedName& w, const ElfSymbol& s, std::string* shown) {
  *shown = s.name;
  if (!w.go_glob.empty()) return s.name == w.text || GlobMatch(w.go_glob, s.name);
  if (s.name == w.text || (w.glob && GlobMatch(w.text, s.name))) return true;
  if (!w.cxx || !IsMangled(s.name)) return false;
  CxxName have = SymbolCxxName(s.name);
  if (have.qualifiers.find("[clone") != std::string::npos) return false;
  bool named = have.qualified == w.parts.qualified || (w.glob && GlobMatch(w.parts.qualified, have.qualified));
  if (!named || (!w.parts.params.empty() && !ParamsMatch(w.parts.params, have.params))) return false;
  *shown = have.qualified;
  return true;
}

namespace {

bool VersionMatches(const ProbePoint& point, const ElfSymbol& s) {
  if (point.version.empty()) return true;
  if (point.version[0] == '@') return s.default_version && s.version == point.version.substr(1);
  return s.version == point.version;
}

}  // namespace

std::vector<std::string> SimilarFunctions(const ElfImage& image, std::string_view name) {
  NearestNames nearest(name);
  for (const ElfSymbol& s : image.symbols())
    if (s.type == ElfSymbol::kFunction && s.value != 0)
      nearest.Offer(IsMangled(s.name) ? SymbolCxxName(s.name).qualified : !image.go() ? s.name : GoDisplayName(s.name));
  return nearest.Take();
}

std::string NoFunctionHint(const ElfImage& image, std::string_view name) {
  std::vector<std::string> similar = SimilarFunctions(image, name);
  std::string option = !image.module().empty() ? "-m" : image.Find("_text") ? "-k" : "-x";
  return similar.empty() ? "list its functions with 'kprobectl " + option + " " + image.path() + " funcs'"
                         : "similar names: " + Join(similar, ", ");
}

namespace {

// A place in the image, and its origin as the symbol table tells it.
struct Place {
  uint64_t address = 0;
  ProbeOrigin origin;
};

Result<Place> PlaceIn(const ProbeSpec& spec, const ElfImage& image, const ElfSymbol& s, const std::string& shown) {
  uint64_t offset = spec.point.offset.value_or(0);
  if (s.size && offset >= s.size)
    return Fail("offset " + std::to_string(offset) + " is outside '" + shown + "' (" + std::to_string(s.size) +
                    " bytes) in " + image.path(),
                "give an offset below the function's size");
  Place place;
  place.address = s.value + offset;
  place.origin.function = shown;
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
  WantedName wanted = Wanted(p, image.go());
  bool glob = wanted.glob;
  std::vector<uint64_t> seen_addresses;
  std::string shown;
  for (const ElfSymbol& s : image.symbols()) {
    if (s.type != ElfSymbol::kFunction || s.value == 0) continue;
    if (!NameMatches(wanted, s, &shown)) continue;
    if (!VersionMatches(p, s)) continue;
    // Aliases (several names, one address: a C++ constructor's C1 and C2) are one probe.
    if (std::find(seen_addresses.begin(), seen_addresses.end(), s.value) != seen_addresses.end()) continue;
    seen_addresses.push_back(s.value);
    out.push_back(KP_TRY(PlaceIn(spec, image, s, shown)));
  }
  if (out.empty()) {
    std::string what = glob ? "no function matches '" + p.function + "'" : "no function '" + p.function + "'";
    if (!p.version.empty()) what += " with version " + p.version;
    return Fail(what + " in " + image.path(), NoFunctionHint(image, p.function));
  }
  return out;
}

}  // namespace

Result<std::vector<ResolvedLocation>> LocateWithSymbols(const ProbeSpec& spec, const Target& target,
                                                        const SystemView& system, const ResolveOptions& options) {
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
    loc.target = KP_TRY(TargetAt(kind, image, place.address));
    bool by_address = kind == ProbeKind::kUser && spec.point.address;
    loc.event_base = !spec.event.empty()         ? spec.event
                     : !image.go() || by_address ? EventBase(spec.point, by_address ? "" : place.origin.function)
                                                 : GoEventBase(place.origin.function);
    ArgContext ctx{target.arch, kind,          spec.point.retprobe,     place.origin.entry,     &system.features,
                   &image,      place.address, options.keep_entry_args, options.go_return_sites};
    loc.args = KP_TRY(RawArgs(spec, ctx));
    out.push_back(std::move(loc));
  }
  return out;
}

Result<std::vector<ResolvedLocation>> LocateByName(const ProbeSpec& spec, const Target& target,
                                                   const SystemView& system, const ResolveOptions& options) {
  KP_TRY_VOID(RequireNoDebuginfo(spec));
  const ProbePoint& p = spec.point;
  if (IsGlob(p.function))
    return Fail("'" + p.function + "': kernel function globs need the kernel's symbol table", "name one function");
  if (!p.version.empty() || p.any_file)
    return Fail("'" + DescribePoint(p) + "': symbol versions and @* are for user-space probes");
  if (!p.address) KP_TRY_VOID(CheckKernelFunction(p.function, target, system));
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
  ArgContext ctx{target.arch, ProbeKind::kKernel,     p.retprobe, loc.origin.entry, &system.features, nullptr,
                 0,           options.keep_entry_args};
  loc.args = KP_TRY(RawArgs(spec, ctx));
  return std::vector<ResolvedLocation>{std::move(loc)};
}

}  // namespace kprobectl::resolve

namespace kprobectl {

// A function of the running kernel named without its image: its BTF
// knows most, kallsyms the rest (assembly, clones); with neither, the
// kernel says when the definition is written.
Result<void> CheckKernelFunction(const std::string& name, const Target& target, const SystemView& system) {
  if (target.image || !target.kernel() || name.empty() || IsGlob(name)) return {};
  if (target.btf && target.btf->HasFunction(name)) return {};
  const KallsymsNames* kallsyms = system.kernel_functions ? system.kernel_functions() : nullptr;
  if (kallsyms && kallsyms->Count(name) > 0) return {};
  if (!kallsyms && !target.btf) return {};
  NearestNames nearest(name);
  if (kallsyms)
    kallsyms->ForEachName([&](const std::string& n) { nearest.Offer(n); });
  else
    for (const std::string& n : target.btf->Functions()) nearest.Offer(n);
  std::string release = system.env.release.empty() ? "" : " " + system.env.release;
  std::string where = kallsyms ? "the running kernel" + release + " (" + system.env.kallsyms + ")"
                               : "the BTF of the running kernel" + release + " (" + target.btf->path() + ")";
  std::vector<std::string> similar = nearest.Take();
  return Fail("no function '" + name + "' in " + where,
              similar.empty() ? "list its functions with 'kprobectl funcs'" : "similar names: " + Join(similar, ", "));
}

}  // namespace kprobectl
