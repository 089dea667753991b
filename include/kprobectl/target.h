// SPDX-License-Identifier: GPL-2.0-or-later
//
// What a command works on, decided once: a user binary (-x), the running
// kernel, a kernel image (-k VMLINUX) or a kernel module (-m, with -k the
// image of the kernel it is for). In: what the options name, where to look
// (KernelEnv, the search paths). Out: the target's kind and files: its ELF
// symbols, its DWARF and, for the kernel without DWARF, its BTF (a
// module's read over the BTF of the kernel it was built for), or why there
// is none. Every later stage asks the Target, never the options again.
#pragma once

#include <memory>
#include <string>

#include "kprobectl/arch.h"
#include "kprobectl/btf.h"
#include "kprobectl/debuginfo.h"
#include "kprobectl/elf_image.h"
#include "kprobectl/find_binary.h"
#include "kprobectl/kernel_image.h"
#include "kprobectl/result.h"
#include "kprobectl/trace_event_def.h"

namespace kprobectl {

struct SystemView;

struct TargetRequest {
  std::string exec;          // -x: a path, or a name found in PATH or the linker's directories
  std::string vmlinux;       // -k
  std::string module;        // -m: a loaded module's name, or a .ko path
  bool force = false;        // accept a kernel image whose build-id is not the running kernel's
  bool need_symbols = true;  // false: the DWARF alone (line listings)
  bool btf = false;          // --btf: kernel types from BTF even when there is DWARF
  std::string btf_file;      // --btf=FILE: a raw BTF file or an ELF file's .BTF section
  int target_ns = 0;         // --target-ns PID: -x as that process sees it (its mount namespace)
  // Event probes: the running kernel's BTF for what their pointer fields
  // lead to, even where the DWARF is there (it stays the source for the rest).
  bool btf_types = false;
  IndexOptions index;  // how the DWARF's names are looked up
};

struct Target {
  enum Kind {
    kUserBinary,     // -x
    kRunningKernel,  // nothing named: this machine's kernel (its image found, or not)
    kKernelImage,    // -k: an image, maybe not the running kernel's
    kModule,         // -m
  } kind = kRunningKernel;
  // The architecture the probes are written for: the file's ELF machine, or
  // the running kernel's when there is no file. Never null in a Target
  // OpenTarget made.
  const Arch* arch = nullptr;
  std::string path;                      // the file; empty for the running kernel when its image was not found
  std::string module;                    // kModule: its name, as the kernel knows it
  std::unique_ptr<ElfImage> image;       // null without a file (or without need_symbols)
  std::unique_ptr<Debuginfo> debuginfo;  // null when there is no DWARF
  Error debuginfo_error;                 // why it is null
  // A kernel target's BTF, read when it has no DWARF (or with --btf):
  // parameters and types at function entries and returns.
  std::unique_ptr<BtfInfo> btf;
  Error btf_error;  // why it is null
  // kModule: the kernel it was built for (its .modinfo vermagic; empty
  // without one), checked against the -k image's when there is one; that
  // image's path and build-id (empty without -k).
  KernelVersion built_for;
  std::string kernel_image;
  std::string kernel_build_id;

  ProbeKind probe_kind() const { return kind == kUserBinary ? ProbeKind::kUser : ProbeKind::kKernel; }
  bool kernel() const { return kind != kUserBinary; }
  // A program Go built (ElfImage::go(), decided when its file was read):
  // its names, calling convention and returns are Go's.
  bool go() const { return image && image->go(); }
  // The DWARF, or the error that says why there is none.
  Result<Debuginfo*> RequireDebuginfo() const;
};

Result<Target> OpenTarget(const TargetRequest& request, const KernelEnv& env, const SearchPaths& search);

// Whether probes for `target` are for this machine's running kernel, as
// `running` (its SystemView) describes it, as those written to it must
// be: a -k image's build-id is its own, a module was built for its release
// (its vermagic; one without is taken as it is), and a module it has
// loaded is that file (their build-ids; -f accepts another file).
Result<void> CheckForRunningKernel(const Target& target, const SystemView& running, bool force);

// Whether probes for `target` can be written to this machine's kernel:
// they are in its architecture's registers, which must be the running
// kernel's (env.machine). Definitions for another can be printed (-D).
Result<void> CheckArchRunsHere(const Target& target, const KernelEnv& env);

// The machine whose libraries `-x NAME.so` finds: the running kernel's
// architecture (env.machine), as the programs it runs load them.
LibraryMachine LibraryMachineOf(const KernelEnv& env);

// --target-ns PID: where -x is searched for inside that process's mount
// namespace (env.proc/PID/root, its PATH from its environment).
Result<SearchPaths> SearchPathsOfProcess(const KernelEnv& env, int pid);

// Whether process `pid` runs the file at `path` (a path from here), when it
// maps a file of that name: a copy it maps that was deleted or replaced on
// disk since is an error, since a probe on the file there now never fires
// in it. `maps` is its /proc/PID/maps.
Result<void> CheckMappedFile(const std::string& path, const std::string& path_inside, std::string_view maps, int pid);

}  // namespace kprobectl
