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

#include "kprobectl/elf_image.h"
#include "kprobectl/event_names.h"
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
