// SPDX-License-Identifier: GPL-2.0-or-later
//
// The running kernel: where its debuginfo is, whether a file is its image
// (build-id), and what it will not probe. In: a KernelEnv (the paths and
// release to use; tests point it at a temporary tree) and, offline, the
// kernel image's ELF. Out: a path, or errors that say what was tried and
// which package provides it; kprobe blacklist ranges; traceable functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kprobectl/arch.h"
#include "kprobectl/elf_image.h"
#include "kprobectl/result.h"

namespace kprobectl {

struct KernelEnv {
  std::string release;  // uname -r
  std::string machine;  // uname -m: the running kernel's architecture ("x86_64", "aarch64")
  std::string root;     // prefix for every path (tests)
  std::string notes = "/sys/kernel/notes";
  std::string kallsyms = "/proc/kallsyms";
  std::string debugfs = "/sys/kernel/debug";
  std::string tracefs;  // for available_filter_functions
  std::string proc = "/proc";
  std::string boot = "/boot";  // config-RELEASE
  std::string sys_module = "/sys/module";
  std::string btf = "/sys/kernel/btf";         // vmlinux and each module's split BTF
  std::string runtime_dir = "/run/kprobectl";  // records of temporary probes (see leftovers.h)
  static KernelEnv Running();                  // this machine's
};

// The GNU build-id in the ELF notes of /sys/kernel/notes (hex), or empty.
std::string BuildIdFromNotes(std::string_view notes);

// Where distributions install the kernel's DWARF, in the order searched.
std::vector<std::string> DebuginfoCandidates(const KernelEnv& env, std::string_view build_id);

// The running kernel's vmlinux with DWARF, checked against its build-id
// (`force` accepts a mismatch). Uses debuginfod when DEBUGINFOD_URLS is set.
Result<std::string> FindKernelDebuginfo(const KernelEnv& env, bool force);
// Checks that `image` is the running kernel's.
Result<void> CheckBuildId(const KernelEnv& env, const ElfImage& image, bool force);
// The same against a build-id read before (hex; empty: unknown, passes),
// for the image at `path` whose build-id is `build_id`.
Result<void> CheckBuildId(std::string_view running_build_id, const KernelEnv& env, const std::string& path,
                          std::string_view build_id, bool force);
// The running kernel's build-id, from env.notes (empty when unreadable).
std::string RunningBuildId(const KernelEnv& env);

// What a kernel was built as: its release (uname -r) and its vermagic,
// the release and the build's options a module must share with it to load
// ("6.1.0-56-cloud-amd64 SMP preempt mod_unload modversions "). Empty
// where unknown.
struct KernelVersion {
  std::string release;
  std::string vermagic;
};
// A kernel image's: its `vermagic` (kernel/module/main.c, what the kernel
// checks a module's against), else the release its linux_banner names.
KernelVersion KernelVersionOf(const ElfImage& image);
// A module's: the vermagic in its .modinfo section ("key=value" strings,
// each ended by a NUL), as the kernel reads it when it loads the module.
KernelVersion ModuleVersionOf(std::string_view modinfo);

// A loaded or installed module's file, by name ("ext4", "nls-utf8" and
// "nls_utf8" alike): its debuginfo under /usr/lib/debug/lib/modules/RELEASE
// when installed, else its .ko (.ko.xz, .ko.zst) under /lib/modules/RELEASE.
Result<std::string> FindKernelModule(const KernelEnv& env, std::string_view name);
// The module name a path or name stands for: "nls_utf8" for ".../nls-utf8.ko.xz".
std::string ModuleName(std::string_view path_or_name);

// Address ranges the kernel refuses to kprobe, by name of what holds them.
struct BlacklistRange {
  uint64_t start = 0, end = 0;
  std::string name;
};
class KprobeBlacklist {
 public:
  // From debugfs kprobes/blacklist ("0xSTART-0xEND\tSYMBOL"), with KASLR's
  // offset removed (`slide` = runtime _text - the image's _text).
  static KprobeBlacklist FromDebugfs(std::string_view text, int64_t slide);
  // Offline, from the image: the sections `arch` says the kernel never
  // probes (.kprobes.text, .noinstr.text, .entry.text..., between their
  // __*_start/__*_end symbols) and the functions listed in _kprobe_blacklist
  // (NOKPROBE_SYMBOL), kept as their addresses: a look-up asks the image
  // for the function that holds an address (which `image`, kept, must
  // outlive), where naming each listed function up front cost a warm
  // command a sixth of its time.
  static Result<KprobeBlacklist> FromImage(const ElfImage& image, const Arch& arch);
  std::optional<BlacklistRange> Find(uint64_t address) const;
  bool empty() const { return ranges_.empty() && functions_.empty(); }

 private:
  std::vector<BlacklistRange> ranges_;
  std::vector<uint64_t> functions_;  // NOKPROBE_SYMBOL's function addresses, sorted
  const ElfImage* image_ = nullptr;
};

// Functions ftrace can trace, which is what kprobe_events requires of the
// function it probes (without CONFIG_KPROBE_EVENTS_ON_NOTRACE).
class TraceableFunctions {
 public:
  // From tracefs available_filter_functions ("name" or "name [module]").
  static TraceableFunctions FromAvailable(std::string_view text);
  // Offline: the functions whose first bytes hold an ftrace call site
  // (__start_mcount_loc..__stop_mcount_loc), as far into a function as
  // `arch` puts it.
  static Result<TraceableFunctions> FromImage(const ElfImage& image, const Arch& arch);
  // Whether the function symbol `name` at `address` (image address) can be traced.
  bool Traceable(const ElfSymbol& function) const;
  // Whether kprobe_events takes a probe in `function`: traceable, or a part
  // of a traceable function ("do_exit.cold", "foo.part.0": the kernel looks
  // the name up again without its suffix, within_notrace_func() in
  // kernel/trace/trace_kprobe.c since Linux 5.0). `image` finds the base
  // symbol by name (null: by name only).
  bool KprobeAllowed(const ElfSymbol& function, const ElfImage* image) const;
  bool known() const { return known_; }

 private:
  bool known_ = false;
  bool by_address_ = false;
  std::set<std::string> names_;
  ImageWords sites_;                    // ftrace call sites, sorted
  std::pair<int64_t, int64_t> window_;  // where a function's site lies, from its symbol
};

// The symbol the image's kernel targets count from: its architecture's
// (ElfImage::arch(), Arch::kernel_text_symbol(): _text, or _stext on
// arm64), also for a module's image; empty for a machine kprobectl does not
// support.
std::string_view KernelTextSymbol(const ElfImage& image);
// How many times `name` appears as a text symbol in /proc/kallsyms, and
// where _text and _stext are at run time (arm64's 6.1 has no _text).
class KallsymsNames {
 public:
  static KallsymsNames Parse(std::string_view kallsyms);
  size_t Count(const std::string& name) const;
  bool empty() const { return counts_.empty(); }
  // Every name, once, in order.
  template <typename F>
  void ForEachName(F&& f) const {
    for (const auto& [name, count] : counts_) f(name);
  }
  // The runtime address of _text (else _stext) minus the image's (KASLR's
  // offset: it moves the whole image).
  std::optional<int64_t> Slide(const ElfImage& image) const;

 private:
  std::map<std::string, size_t> counts_;
  std::map<std::string, uint64_t, std::less<>> anchors_;  // _text, _stext: where they are
};

}  // namespace kprobectl
