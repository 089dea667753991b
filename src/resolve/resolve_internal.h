// SPDX-License-Identifier: GPL-2.0-or-later
//
// Shared by the files of the resolve stage: the arguments every source
// resolves the same way, and the sources themselves.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kprobectl/cxx_names.h"
#include "kprobectl/debuginfo.h"
#include "kprobectl/event_fields.h"
#include "kprobectl/resolve.h"

namespace kprobectl::resolve {

// Where an argument is fetched: what kind of probe, at which place.
struct ArgContext {
  const Arch* arch = nullptr;  // the target's
  ProbeKind kind = ProbeKind::kUser;
  bool retprobe = false;
  bool at_entry = false;  // a function's first instruction
  const KernelFeatures* features = nullptr;
  const ElfImage* image = nullptr;  // resolves @SYMBOL of user probes
  uint64_t address = 0;             // the probe's address in the image
  bool keep_entry = false;          // ResolveOptions::keep_entry_args
  // A Go function's return instruction (ResolveOptions::go_return_sites):
  // a plain probe, but the function's FUNC%return, whose $argN are the
  // entry's as a return probe's are.
  bool go_return = false;
};

// What a point's function names: itself, and for C++ its qualified name
// and the parameter list written, if any.
struct WantedName {
  std::string text;
  bool glob = false;
  bool cxx = false;
  CxxName parts;
  std::string go_glob;  // a Go binary's: the name as a glob (lang_names.h)
};
// `go`: the image is a Go binary, whose names are Go's (lang_names.h).
WantedName Wanted(const ProbePoint& p, bool go = false);
// Whether symbol `s` is the function `w` names: by its name, or a C++
// symbol by its demangled name (overloads by their parameters); `shown`
// gets the name messages and events use.
bool NameMatches(const WantedName& w, const ElfSymbol& s, std::string* shown);

// "invalid argument: WHAT" with the spec and a caret under `pos`.
std::unexpected<Error> ArgError(const ProbeSpec& spec, size_t pos, std::string what, std::string hint = {});
// The :TYPE of an argument, checked against what this kernel takes.
Result<FetchType> CheckArgType(const ProbeSpec& spec, const ProbeArg& arg, const ArgContext& context);
// A Go string or []byte, a Rust &str, &[u8], String or Vec<u8> named
// whole (counted_strings.cc): its bytes (u8[bound]) and its length, each
// fetched through `fetch` as a member path; none when `arg` is another type.
using MemberFetcher = std::function<Result<TypedFetch>(const ProbeArg&)>;
Result<std::optional<std::vector<TypedFetch>>> CountedStringArg(const ProbeSpec& spec, const ProbeArg& arg,
                                                                Debuginfo& debuginfo, const DwarfAddress& at,
                                                                const MemberFetcher& fetch);
// A Go function's entry probed where it runs once a call: past its stack
// check, whose morestack path jumps back to the first instruction
// (go_returns.cc). Its arguments are where they were at the first.
Result<void> PastGoStackChecks(std::vector<ResolvedLocation>& locations, const Target& target);
// FUNC%return on Go code (go_returns.cc): a probe on each return
// instruction, never a uretprobe; `locate` resolves a point as Resolve does.
using Locator = std::function<Result<std::vector<ResolvedLocation>>(const ProbeSpec&)>;
Result<std::vector<ResolvedLocation>> LocateGoReturns(const ProbeSpec& spec, Target& target, bool register_abi,
                                                      const Locator& locate);
// The arguments of the Go function at `at` where its entry has them, and
// its results where its return instructions have them, by Go's ABI
// (go_returns.cc). `argument_area`: its size in Go's own table
// (ElfImage::GoArgumentAreaSize), which tells whether the DWARF describes
// every parameter; a value that cannot be placed says why when fetched.
struct GoPlaces {
  std::vector<AbiValue> args, results;
};
Result<GoPlaces> GoPlacesAt(Debuginfo& debuginfo, const DwarfAddress& at, const Arch& arch, bool register_abi,
                            std::optional<uint32_t> argument_area);
// In a return probe, `fetch` as the function's entry reads the Nth
// argument (`argument`), with what follows from it (dereferences, a type),
// made what the return can have: the argument the kernel keeps for its
// return probes ($argN, Linux 6.9), or, for trace and hist (ctx.keep_entry),
// the value fetched at the entry (at_entry) where it is the argument's
// value alone (memory read through it at the entry could have changed by
// the return). Else refused: the error names `written`, says why and which
// kernel keeps it, and points to trace and hist. The one place that decides.
Result<void> ArgumentAtReturn(TypedFetch& fetch, uint64_t argument, std::string_view written, const ProbeSpec& spec,
                              const ArgContext& ctx);
// An argument that needs no debuginfo ($argN, %REG, @SYM, +OFF(...)...).
Result<TypedFetch> RawArg(const ProbeSpec& spec, size_t index, const ArgContext& context);
// Every argument of a spec without debuginfo.
Result<std::vector<TypedFetch>> RawArgs(const ProbeSpec& spec, const ArgContext& context);
// tp:NAME (tracepoints.cc): one location, its arguments as the kernel names them.
Result<std::vector<ResolvedLocation>> LocateTracepoint(const ProbeSpec& spec, const Target& target,
                                                       const SystemView& system);
// ev:SYSTEM:EVENT (event_probes.cc): one location on the event, its
// arguments read from the event's fields.
Result<std::vector<ResolvedLocation>> LocateEventProbe(const ProbeSpec& spec, const Target& target,
                                                       const SystemView& system);
// The whole list made valid: count, name lengths and characters, unique
// names. `from` gives the argument each came from (null for $vars).
Result<void> FinishArgs(const ProbeSpec& spec, std::vector<TypedFetch>& args, const std::vector<const ProbeArg*>& from);
// The kernel runs at most kMaxFetchInstructions per argument.
Result<void> CheckDepth(const ProbeSpec& spec, const ProbeArg& arg, const TypedFetch& fetch);
// A variable's fetch (DWARF's or BTF's, of C type `c_type`) as `arg` writes
// it: an array :TYPE on a pointer reads what it points to, then its
// +OFF(...) dereferences, its :TYPE and NAME=; checked for depth.
Result<void> ApplyWritten(const ProbeSpec& spec, const ProbeArg& arg, const std::optional<FetchType>& type,
                          const std::string& c_type, TypedFetch& fetch);
// Refuses specs that cannot be resolved without DWARF, saying why.
Result<void> RequireNoDebuginfo(const ProbeSpec& spec);

// Function names of `image` close to `name` ("did you mean"), and the hint
// that names them, or says where to list its functions.
std::vector<std::string> SimilarFunctions(const ElfImage& image, std::string_view name);
std::string NoFunctionHint(const ElfImage& image, std::string_view name);

// The sources, in the order Resolve() asks them. Each gives the probe's
// places with their arguments, or says why it cannot.
Result<std::vector<ResolvedLocation>> LocateWithDwarf(const ProbeSpec& spec, Target& target, const SystemView& system,
                                                      const ResolveOptions& options);
Result<std::vector<ResolvedLocation>> LocateWithSymbols(const ProbeSpec& spec, const Target& target,
                                                        const SystemView& system, const ResolveOptions& options);
Result<std::vector<ResolvedLocation>> LocateByName(const ProbeSpec& spec, const Target& target,
                                                   const SystemView& system, const ResolveOptions& options);
// A USDT marker of a user binary: a uprobe at each of its sites, with its
// semaphore; arguments its note says fetchargs cannot read go to `left_out`
// when they are left out.
Result<std::vector<ResolvedLocation>> LocateSdt(const ProbeSpec& spec, const Target& target, const SystemView& system,
                                                std::vector<std::string>* left_out);
// A kernel target without DWARF: places as above, parameters from BTF.
Result<std::vector<ResolvedLocation>> LocateWithBtf(const ProbeSpec& spec, const Target& target,
                                                    const SystemView& system, const ResolveOptions& options,
                                                    std::vector<std::string>* notes);

// The kernel's policy over kernel probes; refused instances of a point
// with others go to `left_out`, a point with none left is an error.
Result<void> ApplyKernelPolicy(std::vector<ResolvedProbe>& probes, const Target& target, const SystemView& system,
                               const ResolveOptions& options, std::vector<std::string>* left_out);

// For a kernel point no source found: why the kernel would refuse the
// symbol it names (code without a function's symbol type, as assembly
// entry points have, on the kprobe blacklist), rather than "no function".
std::optional<Error> RefusedByName(const ProbeSpec& spec, const Target& target, const SystemView& system);

// --fprobe: the kernel probes as fprobes, one per function name.
Result<void> MakeFprobes(std::vector<ResolvedProbe>& probes, const Arch& arch, const SystemView& system,
                         std::vector<std::string>* notes);

}  // namespace kprobectl::resolve
