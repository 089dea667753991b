// SPDX-License-Identifier: GPL-2.0-or-later
//
// The resolve stage: what the user wrote (ProbeSpec) becomes, for one
// Target, the places the kernel will probe and what it fetches there, then
// the definitions it is sent. Every command that takes a probe point (add,
// -D, trace --probe, vars) goes through here, in these passes:
//
//   ProbeSpec ──Resolve()──▶ ResolvedProbe ──NameEvents()──▶ ──Synthesize()──▶ TraceEventDef
//
// Resolve() asks the target's sources in order, each answering what it can
// and saying what it cannot: the DWARF (source lines, variables, inlined
// copies, clones), then the ELF symbol table (functions, offsets, versions,
// raw arguments), and for the running kernel without an image the kernel
// itself, by name. It then applies the kernel's policy (blacklist, notrace,
// names kallsyms cannot tell apart, modules not loaded, another kernel's
// image), leaving out refused instances of a point that has others, and
// makes kernel targets KASLR-safe. Everything it knows of the running
// system comes in a SystemView, as data.
//
// A ResolvedProbe is still arch-neutral: its arguments are TypedFetch
// values (a root such as a DWARF register or the Nth argument, dereferences,
// a FetchType); Synthesize() turns them into fetchargs with the target's
// architecture (arch.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kprobectl/debuginfo.h"
#include "kprobectl/elf_image.h"
#include "kprobectl/event_fields.h"
#include "kprobectl/event_names.h"
#include "kprobectl/fetch_type.h"
#include "kprobectl/glob.h"
#include "kprobectl/probe_spec.h"
#include "kprobectl/result.h"
#include "kprobectl/system_view.h"
#include "kprobectl/target.h"
#include "kprobectl/trace_event_def.h"

namespace kprobectl {

// Where a value starts, before any dereference.
struct FetchRoot {
  enum Kind {
    kDwarfRegister,   // number: a DWARF register number
    kRegister,        // name: a register as the kernel names it (%REG)
    kArgument,        // number: the Nth integer argument at a function's entry
    kReturnArgument,  // number: $argN read by the kernel itself (a return probe keeps it; an fprobe's entry)
    kReturnValue,     // $retval
    kComm,            // $comm
    kStack,           // $stack
    kStackEntry,      // number: $stackN
    kStatic,          // number: an address in the image; the first deref is folded into it
    kKernelSymbol,    // name and value: @SYM+VALUE, for the kernel to look up
    kFileOffset,      // number: @+OFF of a user probe, as written
    kAbsolute,        // number: @0xADDR
    kImmediate,       // name: \IMM as written
    kConstant,        // value: a constant the debuginfo knows
    kKernelName,      // name: a tracepoint's argument as the kernel names it (BTF), with ->members
  } kind = kRegister;
  uint64_t number = 0;
  int64_t value = 0;
  std::string name;

  static FetchRoot Of(Kind kind, uint64_t number = 0) { return FetchRoot{kind, number, 0, {}}; }
  static FetchRoot Value(Kind kind, int64_t value) { return FetchRoot{kind, 0, value, {}}; }
  static FetchRoot Named(Kind kind, std::string name, int64_t value = 0) {
    return FetchRoot{kind, 0, value, std::move(name)};
  }
};

// One argument of a probe, arch-neutral.
struct TypedFetch {
  std::string name;  // the field's name in the event
  FetchRoot root;
  std::vector<ArgDeref> derefs;   // +|-[u]OFF(...), innermost first
  std::optional<FetchType> type;  // none: the kernel's default
  std::string c_type;             // the C type, when the debuginfo says
  // A return probe's argument the kernel cannot keep for it, fetched as
  // `root` says at the function's entry, by the hidden probe trace adds
  // (ResolveOptions::keep_entry_args; FetchArg::at_entry).
  bool at_entry = false;
};

// How a place was found, for messages, listings and "Added new event".
struct ProbeOrigin {
  std::string function;  // whose code it is (an inlined copy's own name); empty for an address
  std::string symbol;    // the ELF symbol that holds it ("compute", "do_exit.cold"), if any
  uint64_t symbol_offset = 0;
  SourceLine decl;          // where `function` is declared, when the debuginfo says
  SourceLine at;            // the line at the address, when the debuginfo says
  bool entry = false;       // the function's first instruction: its arguments are where the ABI says
  bool inlined = false;     // an inlined copy
  bool line_start = false;  // a line-table row starts here
  std::string source;       // what answered: "DWARF", "the symbol table", "the kernel"
  std::string marker;       // a USDT marker's site: "sdt_PROVIDER:NAME"
};

struct ResolvedLocation {
  uint64_t address = 0;  // in the image (a binary's virtual address, a vmlinux's); 0 without one
  ProbeTarget target;    // what the kernel is told
  ProbeOrigin origin;
  std::vector<TypedFetch> args;
  std::optional<DwarfAddress> dwarf;  // the place as the DWARF describes it (vars)
  std::string event_base;             // the event's name before NameEvents makes it unique
  bool extra = false;                 // a second or later place of one point: EV_1, EV_2...
  std::vector<std::string> skipped;   // $vars/$params left out here, and why (for -v)
  std::string event;                  // set by NameEvents
};

struct ResolvedProbe {
  ProbeSpec spec;
  ProbeKind kind = ProbeKind::kKernel;
  ProbeType type = ProbeType::kProbe;
  bool retprobe = false;
  unsigned maxactive = 0;
  std::string group;
  std::vector<ResolvedLocation> locations;
};

struct ResolveOptions {
  bool inlines = true;                   // inlined copies too (--no-inlines: not)
  std::vector<std::string> source_dirs;  // -s, for ;PATTERN
  unsigned maxactive = 0;                // kernel return probes
  bool force = false;                    // -f: another kernel's image is fine
  bool fprobe = false;                   // --fprobe: function entries and exits as fprobe events
  // The most places one spec may become (perf's --max-probes, MAX_PROBES
  // 128): a glob or a much-inlined function past it is an error that says
  // so; 0: no limit.
  size_t max_probes = 128;
  // vars: the places where a probe that fetches variables would go (after
  // the prologue of unoptimized code), whatever the spec fetches; only the
  // DWARF can answer.
  bool for_variables = false;
  // Set by the resolver itself for a Go function's return instructions
  // (resolve/go_returns.cc): its results are where Go's ABI puts them.
  bool go_return_sites = false;
  // trace and hist, which pair each return with its call's entry: a
  // return probe's argument that the kernel cannot keep for it (a kernel
  // return probe before Linux 6.9, any user return probe) is fetched at the
  // entry (TypedFetch::at_entry) rather than refused. add and -D, whose
  // definitions others read from the kernel's trace, refuse it.
  bool keep_entry_args = false;
};

struct Resolution {
  std::vector<ResolvedProbe> probes;
  std::vector<std::string> left_out;  // instances the kernel would refuse, and why
  std::vector<std::string> notes;     // for -v: which source answered, fallbacks
};

Result<Resolution> Resolve(const std::vector<ProbeSpec>& specs, Target& target, const SystemView& system,
                           const ResolveOptions& options);

// The fields of the event an event probe (ev:SYSTEM:EVENT) names, from its
// format: what vars lists and the probe's arguments are made of.
Result<std::vector<EventField>> EventFieldsOf(const ProbeSpec& spec, const SystemView& system);
// What vars says of each field: how the probe reads it whole ("$filename:ustring"),
// or why it cannot; what a pointer field leads to, when BTF knows.
struct EventFieldView {
  EventField field;
  std::string fetch;      // the fetcharg, or empty
  std::string why_not;    // why it cannot be read, when it cannot
  std::string points_to;  // "struct sk_buff", "struct sk_buff (the tracepoint's prototype)"
};
Result<std::vector<EventFieldView>> DescribeEventFields(const ProbeSpec& spec, const Target& target,
                                                        const SystemView& system);

// A function named for the running kernel without its image (BTF or
// kallsyms being all there is): "no function 'X' in the running kernel"
// with the nearest names, when neither has it. Other targets pass.
Result<void> CheckKernelFunction(const std::string& name, const Target& target, const SystemView& system);

// Unique event names, as perf picks them ("FUNC", "FUNC_1", "FUNC__return").
Result<void> NameEvents(Resolution& resolution, EventNamer& namer);

// The definitions the kernel is sent, one per location, in order.
Result<std::vector<TraceEventDef>> Synthesize(const Resolution& resolution, const Target& target);
// One argument as a fetcharg, for a location of `kind` at `address` of
// `image`, in the registers of `arch`.
Result<FetchArg> SynthesizeArg(const TypedFetch& fetch, const Arch& arch, ProbeKind kind, const ElfImage* image,
                               uint64_t address);

// The functions of the target that can be probed (funcs), sorted, those
// the kernel would refuse left out. Without the kernel's image (BTF only),
// `running`'s lists (available_filter_functions, the kprobe blacklist)
// decide by name.
Result<std::vector<std::string>> ProbeableFunctions(const Target& target, const GlobFilter& filter,
                                                    const SystemView* running = nullptr);

// The USDT markers of a user binary (funcs --sdt), by name
// ("sdt_PROVIDER:NAME", which the filter sees), with the arguments of its
// first site as the note writes them.
struct MarkerSummary {
  std::string name;
  std::string args;
  size_t sites = 0;
  bool semaphore = false;
};
Result<std::vector<MarkerSummary>> ProbeableMarkers(const Target& target, const GlobFilter& filter);

// The source listing `line` shows, the range's function found as a probe
// point's is (a clone's name is its function's).
Result<SourceListing> ListSource(const LineRange& range, Target& target, const FindOptions& find);

// What a counted string of type `type` (as vars lists it: "struct
// string", "struct &str") is: "Go string", "Go []byte", "Rust &str",
// "Rust String"...; none for another type, or in a unit of another
// language (a C program's struct String).
std::optional<std::string> CountedStringKind(const std::string& type, Debuginfo::Language language);

// perf's account of where a probe is: "do_sys_openat2:14@fs/open.c",
// "compute@/src/demo.c", "compute%return@...", "main+4@..."; empty when the
// debuginfo did not say.
std::string DescribeOrigin(const ProbeOrigin& origin, bool retprobe);
// The same for a definition the kernel has, found again in `debuginfo`.
std::string SourceOfDefinition(const TraceEventDef& def, const ElfImage* image, Debuginfo* debuginfo);

// trace --stack on a user probe kprobectl adds: hidden arguments that
// capture what its user stack is unwound from, the architecture's unwind
// registers and `chunks` x 512 bytes above the stack pointer (the event
// must stay under a page).
void AddStackCapture(TraceEventDef& def, const Arch& arch, unsigned chunks = 5);

// The kernel's limits (measured on Linux 6.18): MAX_TRACE_ARGS,
// MAX_ARG_NAME_LEN, and FETCH_INSN_MAX (16 instructions per argument).
inline constexpr size_t kMaxProbeArgs = 128;
inline constexpr size_t kMaxArgNameLength = 32;
inline constexpr size_t kMaxFetchInstructions = 16;

// "+OFF(INNER)", "-OFF(INNER)" or, for user memory from a kernel probe,
// "+uOFF(INNER)": the value in memory at INNER + OFF.
std::string Dereference(int64_t offset, bool user, const std::string& inner);

// Memory at `target` (a virtual address in the image) as a fetcharg: for
// uprobes "@+OFF" relative to the probed segment; for the kernel
// "@SYMBOL+OFF", or "@_text+OFF" when the name is not unique.
std::string UprobeMemoryRef(const ElfImage& image, uint64_t probe_address, uint64_t target);
std::string KernelMemoryRef(const ElfImage& image, uint64_t target);

// A KASLR-safe kernel target for an address of `image` (a vmlinux or a
// module): SYMBOL+OFF when no other function has the name, else _text+OFF;
// MOD:SYMBOL+OFF in a module.
Result<ProbeTarget> KernelTarget(const ElfImage& image, uint64_t address);
// What the kernel is told for an address of `image`: a user probe's
// PATH:OFFSET (the code's file offset), or the kernel's KernelTarget().
Result<ProbeTarget> TargetAt(ProbeKind kind, const ElfImage& image, uint64_t address);
// The address in `image` that a kernel target names, if the image says.
std::optional<uint64_t> KernelImageAddress(const ElfImage& image, const ProbeTarget& target);

// Whether `def` is a probe on a return instruction of a Go function of
// `image` (FUNC%return on Go: go_returns.cc), and if so that function's
// entry, where trace --latency times it from, and the register of Go's
// goroutine (with Go's register ABI), which tells its calls apart.
std::optional<ReturnSite> GoReturnSite(const TraceEventDef& def, const ElfImage& image);

}  // namespace kprobectl
