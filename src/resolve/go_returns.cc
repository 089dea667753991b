// SPDX-License-Identifier: GPL-2.0-or-later
//
// FUNC%return on Go code, without a uretprobe. A uretprobe replaces the
// return address on the stack with its trampoline's; a goroutine's stack
// is Go's own: Go copies it elsewhere when it grows (morestack) and walks
// it itself (tracebacks, panics, the GC's stack scan), and meeting the
// trampoline's address where it expects a Go return address it aborts the
// program ("unexpected return pc", "fatal error: unknown caller pc"). So
// each return instruction of the function gets an ordinary uprobe, found
// by disassembling it (elf/return_sites.cc): a breakpoint there touches no
// stack. FUNC%return becomes FUNC+OFF for each OFF, resolved as any probe,
// with the function's results where Go's ABI puts them at a return
// (arch/go_abi.cc; Go's DWARF gives them no location there): by name
// ("err", "~r1"), typed by the DWARF, and $retval is the first. Without
// DWARF, $retval is Go's first result register, as written. Events are
// FUNC__return, FUNC__return_1... one per return instruction.
#include <algorithm>

#include "kprobectl/return_sites.h"
#include "kprobectl/strings.h"
#include "resolve_internal.h"

namespace kprobectl::resolve {

namespace {

// $retval at a return instruction without DWARF: Go's first result
// register, as written.
Result<void> RetvalInRegister(ProbeSpec& spec, const Arch& arch, bool register_abi) {
  for (ProbeArg& arg : spec.args) {
    if (arg.expr.kind != ArgKind::kRetval) continue;
    if (!register_abi)
      return ArgError(spec, arg.pos,
                      "$retval of a Go function built before Go's register ABI (Go 1.17 on x86-64, 1.18 on "
                      "arm64) is on the stack, where only the function's types place it, and this binary has no "
                      "DWARF",
                      "build it without -ldflags=-w, or read the stack: +8(%" + std::string(arch.stack_pointer()) +
                          ") is the first word of the argument area");
    std::string reg = KP_TRY(arch.GoArgumentAtEntry(1, true));
    arg.expr.kind = ArgKind::kRegister;
    arg.expr.name = reg.substr(1);  // without the '%'
    if (arg.name.empty()) arg.name = "retval";
  }
  return {};
}

}  // namespace

Result<GoPlaces> GoPlacesAt(Debuginfo& debuginfo, const DwarfAddress& at, const Arch& arch, bool register_abi,
                            std::optional<uint32_t> argument_area) {
  std::vector<GoValue> values = KP_TRY(debuginfo.GoValues(at));
  // A generic function's shape instantiation ("main.Sum[go.shape.int_0]")
  // takes its dictionary, a pointer, before its receiver and arguments
  // (Go 1.18+), which the DWARF of optimised code does not list (-N -l's
  // lists it, as ".dict"): it takes a register, or a stack slot, as any
  // argument does.
  bool dictionary = std::any_of(values.begin(), values.end(), [](const GoValue& v) { return v.name == ".dict"; });
  std::vector<GoAbiType> args, results;
  if (at.function.find("[go.shape.") != std::string::npos && !dictionary) args.push_back(GoAbiType{});
  const size_t dictionaries = args.size();
  // A value whose type cannot be placed is said when a value it moves is
  // fetched, not before: the results take registers afresh, so only the
  // arguments after such an argument, the results after such a result, and
  // the results on the stack after such an argument are unknown.
  std::string args_unknown, results_unknown;
  std::vector<std::string> arg_names, result_names;
  for (GoValue& value : values) {
    (value.result ? result_names : arg_names).push_back(value.name);
    std::string& unknown = value.result ? results_unknown : args_unknown;
    if (!value.unplaceable.empty() && unknown.empty()) unknown = value.unplaceable;
    if (unknown.empty()) (value.result ? results : args).push_back(std::move(value.type));
  }
  Arch::GoFrame frame = arch.PlaceGoValues(args, results, register_abi);
  // Go 1.19's DWARF has no entry for an unnamed or blank ("_") parameter,
  // nor for a generated wrapper's receiver, whose register or stack slot
  // moves every argument after it and the results on the stack: Go's own
  // table of the function's argument area tells whether the DWARF's add up.
  std::string undescribed;
  if (args_unknown.empty() && results_unknown.empty() && argument_area && *argument_area != frame.argument_area)
    undescribed = "the DWARF does not describe all of " + at.function +
                  "'s parameters (Go writes none for an unnamed or '_' one): Go's table gives its argument area " +
                  std::to_string(*argument_area) + " bytes, its DWARF's parameters " +
                  std::to_string(frame.argument_area);
  GoPlaces out;
  for (size_t i = 0; i < arg_names.size(); ++i) {
    AbiValue value{arg_names[i], {}, arch.sp_dwarf(), undescribed, false};
    if (dictionaries + i >= frame.args.size())
      value.unplaceable = args_unknown;
    else
      value.place = frame.args[dictionaries + i];
    out.args.push_back(std::move(value));
  }
  for (size_t i = 0; i < result_names.size(); ++i) {
    AbiValue value{result_names[i], {}, arch.sp_dwarf(), "", true};
    if (i >= frame.results.size()) {
      value.unplaceable = results_unknown;
    } else {
      value.place = frame.results[i];
      if (value.place.on_stack && !args_unknown.empty())
        value.unplaceable = "it is on the stack after the arguments, and " + args_unknown;
      else if (value.place.on_stack)
        value.unplaceable = undescribed;
    }
    out.results.push_back(std::move(value));
  }
  return out;
}

Result<void> PastGoStackChecks(std::vector<ResolvedLocation>& locations, const Target& target) {
  const ElfImage& image = *target.image;
  for (ResolvedLocation& loc : locations) {
    if (!loc.origin.entry || loc.origin.inlined) continue;
    const ElfSymbol* f = image.FunctionAt(loc.address);
    if (!f || f->value != loc.address || f->size == 0) continue;
    std::string code = KP_TRY(image.ReadBytes(f->value, f->size));
    uint64_t past = KP_TRY(GoEntryPastStackCheck(code, f->value, *target.arch, "'" + f->name + "'"));
    if (past == loc.address) continue;
    loc.target = KP_TRY(TargetAt(target.probe_kind(), image, past));
    loc.origin.symbol_offset += past - loc.address;
    if (loc.dwarf) loc.dwarf->address = past;
    loc.address = past;
  }
  return {};
}

Result<std::vector<ResolvedLocation>> LocateGoReturns(const ProbeSpec& spec, Target& target, bool register_abi,
                                                      const Locator& locate) {
  const ElfImage& image = *target.image;
  ProbeSpec entry = spec;
  entry.point.retprobe = false;
  entry.args.clear();
  std::vector<ResolvedLocation> places = KP_TRY(locate(entry));
  // An inlined copy's code ends in its caller's: its returns are the caller's.
  std::erase_if(places, [](const ResolvedLocation& place) { return place.origin.inlined; });
  if (places.empty())
    return Fail("'" + DescribePoint(spec.point) +
                    "' exists only as inlined copies here, and an inlined copy has no return to probe",
                "probe the lines after the call in its callers, or the call's line");
  std::vector<ResolvedLocation> out;
  for (const ResolvedLocation& place : places) {
    const ElfSymbol* f = image.FunctionAt(place.address);
    std::string what = "'" + (f ? f->name : DescribePoint(spec.point)) + "'";
    if (!f || f->size == 0)
      return Fail("cannot find the returns of " + what + ": no function symbol with a size holds " +
                  Hex(place.address));
    std::string code = KP_TRY(image.ReadBytes(f->value, f->size));
    std::vector<uint64_t> sites = KP_TRY(FindReturnSites(code, f->value, *target.arch, what));
    if (sites.empty())
      return Fail(what + " has no return instruction: it never returns (or only panics or exits)",
                  "probe its entry or its lines");
    for (uint64_t site : sites) {
      ProbeSpec at = spec;
      at.point.retprobe = false;
      at.point.function = f->name;
      at.point.file.clear();
      at.point.offset = site - f->value;
      if (!target.debuginfo) KP_TRY_VOID(RetvalInRegister(at, *target.arch, register_abi));
      auto located = locate(at);
      if (!located && located.error().hint.empty() && !located.error().message.starts_with("cannot find"))
        return Fail(located.error().message,
                    "at a Go function's return instruction its results can be fetched (by name, ~r0 for an unnamed "
                    "one, or $retval for the first), and what the DWARF places there");
      if (!located) return std::unexpected(located.error());
      for (ResolvedLocation& loc : *located) {
        loc.event_base = spec.event.empty() ? place.event_base + "__return" : spec.event;
        out.push_back(std::move(loc));
      }
    }
  }
  return out;
}

}  // namespace kprobectl::resolve

namespace kprobectl {

std::optional<ReturnSite> GoReturnSite(const TraceEventDef& def, const ElfImage& image) {
  if (def.kind != ProbeKind::kUser || def.retprobe || def.target.kind != ProbeTarget::kFile || !image.go())
    return std::nullopt;
  std::optional<uint64_t> address = image.VirtualAddress(def.target.offset);
  const ElfSymbol* f = address ? image.FunctionAt(*address) : nullptr;
  const Arch* arch = image.arch();
  if (!f || f->size == 0 || *address == f->value || !arch) return std::nullopt;
  auto code = image.ReadBytes(f->value, f->size);
  if (!code) return std::nullopt;
  auto sites = FindReturnSites(*code, f->value, *arch, f->name);
  // Timed from where the entry runs once a call, as an entry probe is.
  auto past = GoEntryPastStackCheck(*code, f->value, *arch, f->name);
  auto entry = past ? image.FileOffset(*past) : std::unexpected(past.error());
  if (!sites || !entry || std::find(sites->begin(), sites->end(), *address) == sites->end()) return std::nullopt;
  ReturnSite site{def.target, image.go_register_abi() ? std::string(arch->GoGoroutineRegister()) : ""};
  site.entry.offset = *entry;
  site.entry.ref_ctr_offset.reset();
  return site;
}

}  // namespace kprobectl
