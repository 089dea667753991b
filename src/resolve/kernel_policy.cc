// SPDX-License-Identifier: GPL-2.0-or-later
//
// What the kernel would refuse, refused first with the reason: targets on
// the kprobe blacklist, functions ftrace cannot trace (kprobe_events then
// says only "Failed to register probe event"), names kallsyms cannot tell
// apart, modules that are not loaded, an image that is not the running
// kernel's, a module built for another kernel. Also makes targets KASLR-safe against the running kernel's
// symbols. vars keeps what a probe would be refused at, and says so. The
// running kernel's lists come from the SystemView; without
// them (definitions printed for an image), what the image itself says.
#include "kprobectl/strings.h"
#include "resolve_internal.h"

namespace kprobectl::resolve {

namespace {

struct Lists {
  KprobeBlacklist blacklist;
  TraceableFunctions traceable;           // the running kernel's (by name), or unknown
  TraceableFunctions traceable_in_image;  // the image's __fentry__ sites (by address)
};

Result<Lists> ListsFor(const ElfImage* image, const Arch& arch, const SystemView& system) {
  Lists lists;
  if (system.running) {
    std::optional<int64_t> slide = image ? system.kallsyms.Slide(*image) : std::nullopt;
    if (!system.blacklist.empty() && (slide || !image))
      lists.blacklist = KprobeBlacklist::FromDebugfs(system.blacklist, slide.value_or(0));
    if (system.available_functions) lists.traceable = TraceableFunctions::FromAvailable(*system.available_functions);
  }
  if (image && lists.blacklist.empty()) lists.blacklist = KP_TRY(KprobeBlacklist::FromImage(*image, arch));
  // available_filter_functions has names only (Linux 6.1): one traceable
  // t_start lets all pass. The image's __fentry__ sites tell instances apart.
  if (image) lists.traceable_in_image = KP_TRY(TraceableFunctions::FromImage(*image, arch));
  return lists;
}

Error Blacklisted(const std::string& name, const BlacklistRange& listed) {
  return {"'" + name + "' is on the kernel's kprobe blacklist (" + listed.name +
              "): the kernel refuses probes there, which could recurse or break its entry code",
          "probe a function that calls it, or one it calls"};
}

// Why the kernel would refuse a probe at `loc`, or nothing; rewrites its
// target to _text+OFF (arm64: _stext+OFF) when kallsyms holds its name twice.
std::optional<Error> Refusal(ResolvedLocation& loc, const Target& target, const Lists& lists,
                             const SystemView& system) {
  const ElfImage* image = target.image.get();
  const Error& no_debuginfo = target.debuginfo_error;
  bool has_address = image && loc.address != 0;
  const ElfSymbol* function = has_address ? image->FunctionAt(loc.address) : nullptr;
  std::string name = function ? function->name : loc.target.symbol;
  if (auto listed = has_address ? lists.blacklist.Find(loc.address) : std::nullopt) return Blacklisted(name, *listed);
  ElfSymbol by_name;
  by_name.name = name;
  if (!lists.traceable.KprobeAllowed(function ? *function : by_name, image) ||
      (function && !lists.traceable_in_image.KprobeAllowed(*function, image)))
    return Error{"'" + name +
                     "' cannot be kprobed: ftrace cannot trace it (a notrace function, as all of "
                     "kernel/trace/ is), and kprobe_events refuses those; the kernel would only say \"Failed to "
                     "register probe event\"",
                 "probe a function that calls it; 'kprobectl funcs' lists what can be probed"};
  // KASLR-safe against the running kernel: a name kallsyms holds twice
  // (a module may reuse it) is resolved to its first, so count from _text.
  ProbeTarget& t = loc.target;
  std::string anchor(target.arch->kernel_text_symbol());
  if (system.running && !system.kallsyms.empty() && t.kind == ProbeTarget::kSymbol && t.symbol != anchor &&
      t.module.empty() && system.kallsyms.Count(t.symbol) > 1) {
    const ElfSymbol* text = image ? image->Find(anchor) : nullptr;
    if (!has_address || !text)
      return Error{"'" + t.symbol + "' names " + std::to_string(system.kallsyms.Count(t.symbol)) +
                       " functions in the running kernel; telling them apart needs its debuginfo",
                   no_debuginfo.hint.empty() ? "name the image with -k VMLINUX" : no_debuginfo.hint};
    t.symbol = anchor;
    t.offset = loc.address - text->value;
  }
  return std::nullopt;
}

// A function of the DWARF whose code no symbol holds: a weak definition
// another file overrides (mm/maccess.c's copy_from_kernel_nofault_allowed
// beside arch/x86's). The linker keeps its code and its DWARF but drops its
// symbol; nothing calls it, and kallsyms cannot name it. An address the
// user wrote is theirs to probe.
std::optional<Error> Unreachable(const ResolvedProbe& probe, const ResolvedLocation& loc, const ElfImage* image) {
  if (!image || loc.address == 0 || !loc.dwarf || probe.spec.point.address || image->FunctionAt(loc.address))
    return std::nullopt;
  // The definition that replaced it has the symbol of that name.
  const ElfSymbol* named = image->Find(loc.origin.function);
  if (!named || named->type != ElfSymbol::kFunction) return std::nullopt;
  return Error{"no symbol holds its code at " + Hex(loc.address) +
                   ": a definition the linker replaced (a weak one another file overrides), which nothing calls",
               "the function of that name that has a symbol is the one that runs"};
}

// "s_show of kernel/trace/trace_events.c", "getname inlined in user_path_create".
std::string PlaceOf(const ResolvedProbe& probe, const ResolvedLocation& loc) {
  const ProbeOrigin& o = loc.origin;
  std::string what = o.function.empty() ? DescribePoint(probe.spec.point) : o.function;
  if (o.inlined && !o.symbol.empty()) return what + " inlined in " + o.symbol;
  if (!o.decl.file.empty()) return what + " of " + o.decl.file;
  return what + " at " + FormatTarget(loc.target);
}

// What vars says of a place it lists where a probe would be refused.
std::string WouldBeRefused(const ResolvedProbe& probe, const ResolvedLocation& loc, const std::string& why) {
  return "a probe at " + PlaceOf(probe, loc) + " would be refused: " + why;
}

// A module's functions are checked by name: its image's addresses are not
// the kernel's. A module that is not loaded yet is probed all the same:
// kprobe_events takes MOD:SYMBOL+OFF for a module it does not have ("This
// probe might be able to register after target module is loaded",
// trace_kprobe.c) and arms the probe when the module comes, before its
// init function runs, so that function can be probed too. Until then
// ftrace's list has none of its functions: the image's own __mcount_loc
// decides, as it does offline.
Result<void> CheckModule(const std::vector<ResolvedProbe>& probes, const Target& target, const SystemView& system,
                         const ResolveOptions& options, std::vector<std::string>* left_out) {
  if (!system.running) return {};
  bool loaded = system.loaded_modules.contains(target.module);
  if (!loaded) {
    if (options.fprobe)
      return Fail("module " + target.module + " is not loaded, and only a kprobe waits for a module to load",
                  "load it first (modprobe " + target.module + "), or leave out --fprobe");
    if (left_out)
      left_out->push_back("module " + target.module +
                          " is not loaded: its probes wait for it, and fire from when it loads (its init function "
                          "included)");
  }
  if (!loaded || !system.available_functions) return {};
  auto traceable = TraceableFunctions::FromAvailable(*system.available_functions);
  for (const ResolvedProbe& probe : probes)
    for (const ResolvedLocation& loc : probe.locations) {
      ElfSymbol by_name;
      by_name.name = loc.target.symbol;
      if (traceable.Traceable(by_name)) continue;
      std::string why = "'" + loc.target.symbol + "' of module " + target.module +
                        " cannot be kprobed: ftrace cannot trace it (a notrace function)";
      if (!options.for_variables) return Fail(why, "probe a function that calls it");
      if (left_out) left_out->push_back(WouldBeRefused(probe, loc, why));
    }
  return {};
}

}  // namespace

std::optional<Error> RefusedByName(const ProbeSpec& spec, const Target& target, const SystemView& system) {
  const ProbePoint& p = spec.point;
  if (!target.kernel() || !target.image || p.function.empty() || IsGlob(p.function) || p.address) return std::nullopt;
  // An entry point written in assembly (SYM_CODE_START: asm_exc_*) has a
  // symbol with no type and no DWARF; the blacklist holds most of them.
  const ElfSymbol* symbol = target.image->Find(p.function);
  if (!symbol || symbol->value == 0) return std::nullopt;
  auto lists = ListsFor(target.image.get(), *target.arch, system);
  if (!lists) return std::nullopt;
  if (auto listed = lists->blacklist.Find(symbol->value + p.offset.value_or(0)))
    return Blacklisted(p.function, *listed);
  return std::nullopt;
}

Result<void> ApplyKernelPolicy(std::vector<ResolvedProbe>& probes, const Target& target, const SystemView& system,
                               const ResolveOptions& options, std::vector<std::string>* left_out) {
  if (system.running) KP_TRY_VOID(CheckForRunningKernel(target, system, options.force));
  if (target.kind == Target::kModule) return CheckModule(probes, target, system, options, left_out);
  const ElfImage* image = target.image.get();
  Lists lists = KP_TRY(ListsFor(image, *target.arch, system));
  // A point with several instances (static functions of one name) keeps
  // those the kernel takes and says which it left out; one whose every
  // instance is refused is an error.
  for (ResolvedProbe& probe : probes) {
    // A tracepoint or an event is not a function: no blacklist, no notrace.
    if (probe.type == ProbeType::kTracepoint || probe.type == ProbeType::kEventProbe) continue;
    std::vector<ResolvedLocation> kept;
    std::optional<Error> first;
    for (ResolvedLocation& loc : probe.locations) {
      auto refused = Unreachable(probe, loc, image);
      if (!refused) {
        refused = Refusal(loc, target, lists, system);
        // vars answers what is there, and says a probe would be refused.
        if (refused && options.for_variables) {
          if (left_out) left_out->push_back(WouldBeRefused(probe, loc, refused->message));
          refused.reset();
        }
      }
      if (!refused) {
        kept.push_back(std::move(loc));
        continue;
      }
      if (!first) first = refused;
      if (left_out) left_out->push_back("left out " + PlaceOf(probe, loc) + ": " + refused->message);
    }
    if (kept.empty() && first) return std::unexpected(*first);
    probe.locations = std::move(kept);
  }
  return {};
}

}  // namespace kprobectl::resolve
