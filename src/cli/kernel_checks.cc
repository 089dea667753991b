// SPDX-License-Identifier: GPL-2.0-or-later
//
// What the kernel would refuse, refused first with the reason: targets on
// the kprobe blacklist, functions ftrace cannot trace (kprobe_events then
// says only "Failed to register probe event"), names kallsyms cannot tell
// apart. Also makes targets KASLR-safe against the running kernel's symbols.
#include <sys/mount.h>
#include <unistd.h>

#include "commands.h"
#include "kprobectl/kernel_image.h"
#include "kprobectl/resolve.h"
#include "kprobectl/strings.h"

namespace kprobectl::cli {

namespace {

std::string ReadOrEmpty(const std::string& path) {
  TracefsDir root("/");
  auto text = root.Read(path.substr(1));
  return text ? *text : std::string();
}

}  // namespace

Result<void> CheckKernelProbes(std::vector<TraceEventDef>& defs, const std::vector<size_t>& origins,
                               const TargetFiles& files, const TracefsDir* tracefs, const Options& options, bool running,
                               std::vector<std::string>* notes) {
  KernelEnv env = KernelEnv::Running();
  const ElfImage* image = files.image.get();
  if (image && !image->module().empty()) {
    if (running && access(("/sys/module/" + image->module()).c_str(), F_OK) != 0)
      return Fail("module " + image->module() + " is not loaded", "load it first: modprobe " + image->module());
    // Its functions are checked by name; addresses of a module's image are
    // not the kernel's.
    if (running && tracefs)
      if (auto available = tracefs->Read("available_filter_functions")) {
        auto traceable = TraceableFunctions::FromAvailable(*available);
        for (const TraceEventDef& def : defs) {
          ElfSymbol by_name;
          by_name.name = def.target.symbol;
          if (!traceable.Traceable(by_name))
            return Fail("'" + def.target.symbol + "' of module " + image->module() +
                            " cannot be kprobed: ftrace cannot trace it (a notrace function)",
                        "probe a function that calls it");
        }
      }
    return {};
  }
  if (running && image && !options.vmlinux.empty()) KP_TRY_VOID(CheckBuildId(env, *image, options.force));

  // The blacklist and the traceable functions: the running kernel's own
  // lists when we probe it, else what the image says.
  KprobeBlacklist blacklist;
  TraceableFunctions traceable;
  KallsymsNames kallsyms;
  std::optional<int64_t> slide;
  if (running) {
    std::string blacklist_path = env.debugfs + "/kprobes/blacklist";
    if (access(blacklist_path.c_str(), R_OK) != 0 && geteuid() == 0)
      mount("debugfs", env.debugfs.c_str(), "debugfs", 0, nullptr);  // best effort
    if (image) slide = KaslrSlide(env, *image);
    std::string text = ReadOrEmpty(blacklist_path);
    if (!text.empty() && (slide || !image)) blacklist = KprobeBlacklist::FromDebugfs(text, slide.value_or(0));
    if (tracefs)
      if (auto available = tracefs->Read("available_filter_functions"))
        traceable = TraceableFunctions::FromAvailable(*available);
    kallsyms = KallsymsNames::Parse(ReadOrEmpty(env.kallsyms));
  }
  if (image && blacklist.empty()) blacklist = KP_TRY(KprobeBlacklist::FromImage(*image));
  // available_filter_functions has names only (Linux 6.1): one traceable
  // t_start lets all pass. The image's __fentry__ sites tell instances apart.
  TraceableFunctions traceable_in_image;
  if (image) traceable_in_image = KP_TRY(TraceableFunctions::FromImage(*image));

  // One verdict per definition: nullopt, or why the kernel would refuse it.
  auto refusal = [&](TraceEventDef& def) -> std::optional<Error> {
    if (def.kind != ProbeKind::kKernel) return std::nullopt;
    const ElfSymbol* function = nullptr;
    // A plain value and a flag: g++ 12 misjudges std::optional here (-Wmaybe-uninitialized).
    auto found = image ? KernelImageAddress(*image, def.target) : std::nullopt;
    bool has_address = found.has_value();
    uint64_t image_address = found.value_or(0);
    if (has_address) function = image->FunctionAt(image_address);
    std::string name = function ? function->name : def.target.symbol;
    if (const BlacklistRange* listed = has_address ? blacklist.Find(image_address) : nullptr)
      return Error{"'" + name + "' is on the kernel's kprobe blacklist (" + listed->name +
                       "): the kernel refuses probes there, which could recurse or break its entry code",
                   "probe a function that calls it, or one it calls"};
    ElfSymbol by_name;
    by_name.name = name;
    if (!traceable.KprobeAllowed(function ? *function : by_name, image) ||
        (function && !traceable_in_image.KprobeAllowed(*function, image)))
      return Error{"'" + name + "' cannot be kprobed: ftrace cannot trace it (a notrace function, as all of "
                   "kernel/trace/ is), and kprobe_events refuses those; the kernel would only say \"Failed to "
                   "register probe event\"",
                   "probe a function that calls it; 'kprobectl funcs' lists what can be probed"};
    // KASLR-safe against the running kernel: a name kallsyms holds twice
    // (a module may reuse it) is resolved to its first, so count from _text.
    if (running && !kallsyms.empty() && def.target.kind == ProbeTarget::kSymbol && def.target.symbol != "_text" &&
        def.target.module.empty() && kallsyms.Count(def.target.symbol) > 1) {
      const ElfSymbol* text = image ? image->Find("_text") : nullptr;
      if (!has_address || !text)
        return Error{"'" + def.target.symbol + "' names " + std::to_string(kallsyms.Count(def.target.symbol)) +
                         " functions in the running kernel; telling them apart needs its debuginfo",
                     files.debuginfo_error.hint.empty() ? "name the image with -k VMLINUX" : files.debuginfo_error.hint};
      def.target.symbol = "_text";
      def.target.offset = image_address - text->value;
    }
    return std::nullopt;
  };
  // A probe point with several instances (static functions of one name)
  // keeps those the kernel takes and says which it left out; one whose
  // every instance is refused is an error.
  std::vector<std::optional<Error>> verdicts;
  for (TraceEventDef& def : defs) verdicts.push_back(refusal(def));
  std::vector<TraceEventDef> kept;
  for (size_t i = 0; i < defs.size(); ++i) {
    if (!verdicts[i]) {
      kept.push_back(defs[i]);
      continue;
    }
    bool sibling_kept = false;
    for (size_t j = 0; j < defs.size(); ++j)
      sibling_kept |= j != i && origins.size() == defs.size() && origins[j] == origins[i] && !verdicts[j];
    if (!sibling_kept) return std::unexpected(*verdicts[i]);
    if (notes) notes->push_back("left out " + defs[i].FullName() + ": " + verdicts[i]->message);
  }
  defs = std::move(kept);
  return {};
}

}  // namespace kprobectl::cli
