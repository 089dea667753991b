// SPDX-License-Identifier: GPL-2.0-or-later
//
// The resolver: ProbeSpec (what the user wrote) -> ResolvedProbe (addresses,
// still arch-neutral) -> TraceEventDef (one kprobe_events/uprobe_events line).
// This stage works from ELF symbols; specs that need DWARF (source lines,
// files, variables) are refused here with a "needs debuginfo" error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kprobectl/debuginfo.h"
#include "kprobectl/elf_image.h"
#include "kprobectl/event_names.h"
#include "kprobectl/fetch_type.h"
#include "kprobectl/kernel_features.h"
#include "kprobectl/probe_spec.h"
#include "kprobectl/result.h"
#include "kprobectl/trace_event_def.h"

namespace kprobectl {

// One address a probe point resolved to.
struct ProbeLocation {
  std::string function;         // the symbol it belongs to; empty for a bare address
  uint64_t function_offset = 0;
  uint64_t address = 0;         // virtual address in the ELF image
  bool at_entry = false;        // the function's first instruction
};

struct ResolvedProbe {
  ProbeSpec spec;
  std::vector<ProbeLocation> locations;
};

struct FetchContext {
  ProbeKind kind = ProbeKind::kUser;
  bool retprobe = false;
  bool at_entry = false;
  const KernelFeatures* features = nullptr;
  const ElfImage* image = nullptr;  // user probes: resolves @SYMBOL to @+OFFSET
  uint64_t address = 0;             // user probes: the probe's virtual address
};

// The kernel's limits (measured on Linux 6.18): MAX_TRACE_ARGS,
// MAX_ARG_NAME_LEN, and FETCH_INSN_MAX (16 instructions per argument).
inline constexpr size_t kMaxProbeArgs = 128;
inline constexpr size_t kMaxArgNameLength = 32;
inline constexpr size_t kMaxFetchInstructions = 16;

// Converts the non-DWARF arguments of `spec` into fetchargs for one location.
Result<std::vector<FetchArg>> ConvertArgs(const ProbeSpec& spec, const FetchContext& context);
// The parts: one raw argument; its :TYPE checked against the kernel; and the
// whole list made valid (count, name lengths, unique names). `from` gives
// the argument each fetcharg came from (null for $vars expansions).
Result<FetchArg> ConvertRawArg(const ProbeSpec& spec, size_t index, const FetchContext& context);
Result<FetchType> CheckArgType(const ProbeSpec& spec, const ProbeArg& arg, const FetchContext& context);
Result<void> FinishArgs(const ProbeSpec& spec, std::vector<FetchArg>& args, const std::vector<const ProbeArg*>& from);
std::unexpected<Error> ArgError(const ProbeSpec& spec, size_t pos, std::string what, std::string hint = {});

// "+OFF(INNER)", "-OFF(INNER)" or, for user memory from a kernel probe,
// "+uOFF(INNER)": the value in memory at INNER + OFF.
std::string Dereference(int64_t offset, bool user, const std::string& inner);

// Memory at `target` (a virtual address in the image) as a fetcharg: for
// uprobes "@+OFF" relative to the probed segment (see fetch_args.cc); for
// the kernel "@SYMBOL+OFF", or "@_text+OFF" when the name is not unique.
std::string UprobeMemoryRef(const ElfImage& image, uint64_t probe_address, uint64_t target);
std::string KernelMemoryRef(const ElfImage& image, uint64_t target);

// Refuses specs this stage cannot resolve without DWARF.
Result<void> RequireNoDebuginfo(const ProbeSpec& spec);

// User space: FUNC[@VER][+OFF][%return] and 0xADDR from the ELF symbol tables.
// Static functions of one name in several objects each give a location.
Result<ResolvedProbe> ResolveUserProbe(const ProbeSpec& spec, const ElfImage& image);

struct DefinitionOptions {
  bool force = false;       // -f: suffix names that exist
  unsigned maxactive = 0;   // kretprobes
};

Result<std::vector<TraceEventDef>> BuildUserDefinitions(const std::vector<ResolvedProbe>& probes,
                                                        const ElfImage& image, const KernelFeatures& features,
                                                        EventNamer& namer);

// Kernel probes without debuginfo: SYM[+OFF][%return] and 0xADDR, written as
// SYM+OFF targets that the kernel resolves (and checks) itself.
Result<std::vector<TraceEventDef>> BuildKernelDefinitions(const std::vector<ProbeSpec>& specs,
                                                          const KernelFeatures& features,
                                                          const DefinitionOptions& options, EventNamer& namer);

}  // namespace kprobectl

namespace kprobectl {

class Debuginfo;

// A KASLR-safe kernel target for an address of `image` (a vmlinux):
// SYMBOL+OFF when no other function has the name, else _text+OFF.
Result<ProbeTarget> KernelTarget(const ElfImage& image, uint64_t address);

// The address in `image` that a kernel target names, if the image says.
std::optional<uint64_t> KernelImageAddress(const ElfImage& image, const ProbeTarget& target);

// Kernel probes from a vmlinux's symbol table, for functions its DWARF does
// not describe (assembly): FUNC[+OFF][%return], all of a name's instances.
Result<std::vector<TraceEventDef>> BuildKernelDefinitionsFromImage(const ProbeSpec& spec, const ElfImage& image,
                                                                   const KernelFeatures& features,
                                                                   const DefinitionOptions& options, EventNamer& namer);

// With debuginfo (DWARF): every kind of probe point and variables, for a
// user binary (`kind` kUser) or a kernel image (kKernel, -k VMLINUX).
// `notes` collects what -v shows: variables $vars skipped, inlined copies
// left out.
Result<std::vector<TraceEventDef>> BuildDwarfDefinitions(const std::vector<ProbeSpec>& specs, Debuginfo& debuginfo,
                                                         const ElfImage& image, ProbeKind kind,
                                                         const KernelFeatures& features,
                                                         const DefinitionOptions& options,
                                                         const FindOptions& find, EventNamer& namer,
                                                         std::vector<std::string>* notes);

}  // namespace kprobectl
