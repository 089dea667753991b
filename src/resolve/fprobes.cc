// SPDX-License-Identifier: GPL-2.0-or-later
//
// --fprobe: function entries and exits as fprobe events (f: in
// dynamic_events, Linux 6.5), on ftrace rather than kprobes. An fprobe
// names a function and attaches to every function of that name (ftrace's
// filter matches names), never to an offset or an inlined copy: so the
// places Resolve() found are folded into one probe per name, their
// arguments required to agree, and inlined copies left out with a note.
#include <algorithm>
#include <map>

#include "kprobectl/strings.h"
#include "resolve_internal.h"

namespace kprobectl::resolve {

namespace {

bool SameArgs(const std::vector<TypedFetch>& a, const std::vector<TypedFetch>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const TypedFetch& x = a[i];
    const TypedFetch& y = b[i];
    if (x.name != y.name || x.root.kind != y.root.kind || x.root.number != y.root.number ||
        x.root.value != y.root.value || x.root.name != y.root.name || x.derefs.size() != y.derefs.size() ||
        x.type != y.type)
      return false;
    for (size_t j = 0; j < x.derefs.size(); ++j)
      if (x.derefs[j].offset != y.derefs[j].offset || x.derefs[j].user != y.derefs[j].user) return false;
  }
  return true;
}

// An fprobe reads no registers (the kernel refuses %REG in f: events): at
// a function's entry its integer arguments are $argN and its stack slots
// $stackN; at its return, $retval. The places the debuginfo gave in the
// ABI's registers are rewritten so; any other register is refused.
Result<void> ToFprobeFetch(TypedFetch& fetch, const Arch& arch, bool entry) {
  FetchRoot& r = fetch.root;
  std::string name;
  if (r.kind == FetchRoot::kDwarfRegister) {
    auto reg = arch.DwarfRegisterName(static_cast<unsigned>(r.number));
    if (reg && (arch.ArgumentIn(*reg) || *reg == arch.stack_pointer()))
      name = *reg;
    else
      name = "DWARF register " + std::to_string(r.number);
  } else if (r.kind == FetchRoot::kRegister) {
    name = r.name;
  } else if (r.kind == FetchRoot::kArgument) {
    if (!entry) return Fail("'" + fetch.name + "': an argument is read at the function's entry, not its return");
    r = FetchRoot::Of(FetchRoot::kReturnArgument, r.number);
    return {};
  } else {
    return {};
  }
  if (auto argument = arch.ArgumentIn(name); entry && argument) {
    r = FetchRoot::Of(FetchRoot::kReturnArgument, *argument);
    return {};
  }
  // +8N(%sp) at the entry: the Nth stack slot (on x86-64 $stack0 is the
  // return address, on arm64 the first stack argument).
  if (entry && name == arch.stack_pointer() && !fetch.derefs.empty() && fetch.derefs[0].offset >= 0 &&
      fetch.derefs[0].offset % 8 == 0 && !fetch.derefs[0].user) {
    r = FetchRoot::Of(FetchRoot::kStackEntry, static_cast<uint64_t>(fetch.derefs[0].offset / 8));
    fetch.derefs.erase(fetch.derefs.begin());
    return {};
  }
  return Fail("'" + fetch.name + "' is in " + (name.starts_with("DWARF") ? name : "register %" + name) +
                  (entry ? "" : " at the return") +
                  ", which an fprobe cannot read (only the arguments at entry, "
                  "$retval at return, and the stack)",
              "leave --fprobe out: kprobes read every register");
}

constexpr unsigned kFprobeMaxactive = 64;

Result<void> Eligible(const ProbeSpec& spec, const SystemView& system) {
  const ProbePoint& p = spec.point;
  if (!system.features.fprobe_events)
    return Fail("this kernel has no fprobe events (CONFIG_FPROBE_EVENTS, Linux 6.5)",
                "leave out --fprobe: kprobes probe the same entries and returns");
  if (p.function.empty() || p.address || p.line || p.lazy_pattern || p.offset.value_or(0) != 0)
    return Fail("'" + DescribePoint(p) + "': an fprobe probes a function's entry or return only",
                "probe FUNC or FUNC%return with --fprobe, or leave --fprobe out for lines and offsets");
  return {};
}

}  // namespace

Result<void> MakeFprobes(std::vector<ResolvedProbe>& probes, const Arch& arch, const SystemView& system,
                         std::vector<std::string>* notes) {
  for (ResolvedProbe& probe : probes) {
    if (probe.type == ProbeType::kTracepoint || probe.type == ProbeType::kEventProbe)
      continue;  // --fprobe is for functions; tp: stays a t: probe
    KP_TRY_VOID(Eligible(probe.spec, system));
    probe.type = ProbeType::kFprobe;
    std::vector<ResolvedLocation> kept;
    std::map<std::string, size_t> by_name;
    size_t inlined = 0;
    for (ResolvedLocation& loc : probe.locations) {
      if (loc.origin.inlined) {
        ++inlined;
        continue;
      }
      bool named = loc.target.kind == ProbeTarget::kSymbol && loc.target.symbol != arch.kernel_text_symbol();
      std::string name = named ? loc.target.symbol : loc.origin.symbol;
      if (name.empty()) return Fail("'" + DescribePoint(probe.spec.point) + "' has no function name for an fprobe");
      for (TypedFetch& fetch : loc.args) {
        // An argument kept by the entry for the return (a kernel before
        // 6.9): kprobectl pairs kprobes' entries and returns, not fprobes'.
        if (fetch.at_entry)
          return Fail("'" + fetch.name + "' is kept by the function's entry for its return, as kprobectl does for " +
                          "kprobes, not for fprobes",
                      "leave --fprobe out");
        KP_TRY_VOID(ToFprobeFetch(fetch, arch, !probe.retprobe));
      }
      auto [it, fresh] = by_name.try_emplace(name, kept.size());
      if (!fresh) {
        if (!SameArgs(kept[it->second].args, loc.args))
          return Fail("the functions named '" + name +
                          "' fetch their arguments differently, and an fprobe on the "
                          "name fires for all of them",
                      "probe them one by one without --fprobe");
        continue;
      }
      loc.target.kind = ProbeTarget::kSymbol;
      loc.target.symbol = name;
      loc.target.offset = 0;
      kept.push_back(std::move(loc));
    }
    // Exits from a fixed pool of rethooks (before fprobes moved onto the
    // function graph tracer): 2 per possible CPU unless told, the rest
    // missed. 12 sleeps at once on a 2-CPU 6.12 gave 3 of 12 returns; at
    // least 64 holds what a machine has in flight in one function, for a
    // few KB, and never less than the kernel's own default.
    if (probe.retprobe && system.features.fprobe_maxactive && probe.maxactive == 0) {
      probe.maxactive = std::max(kFprobeMaxactive, 2 * system.possible_cpus);
      if (notes)
        notes->push_back(DescribePoint(probe.spec.point) + ": fprobe exit with maxactive " +
                         std::to_string(probe.maxactive) +
                         " (this kernel keeps 2 returns per CPU in flight by default and misses the others)");
    }
    if (kept.empty())
      return Fail("'" + DescribePoint(probe.spec.point) + "' exists only as inlined copies, which fprobes cannot probe",
                  "leave --fprobe out: kprobes probe inlined copies");
    if (notes && inlined)
      notes->push_back(DescribePoint(probe.spec.point) + ": " + std::to_string(inlined) +
                       " inlined copies left out (fprobes probe out-of-line functions)");
    if (notes && by_name.size() < probe.locations.size() - inlined)
      notes->push_back(DescribePoint(probe.spec.point) + ": one fprobe fires for every function of the name");
    probe.locations = std::move(kept);
  }
  return {};
}

}  // namespace kprobectl::resolve
