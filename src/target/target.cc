// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/target.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "kprobectl/strings.h"
#include "kprobectl/system_view.h"

namespace kprobectl {

Result<Debuginfo*> Target::RequireDebuginfo() const {
  if (!debuginfo) return std::unexpected(debuginfo_error);
  return debuginfo.get();
}

namespace {

constexpr std::string_view kKernelImageHint =
    "-k takes the kernel's image with its debuginfo, e.g. /usr/lib/debug/boot/vmlinux-VERSION";

bool ModuleByName(const std::string& module) {
  return module.find('/') == std::string::npos && module.find(".ko") == std::string::npos;
}

std::string ModuleWhat(const Target& t) { return "the kernel module '" + t.path + "'"; }

// A module probed with -k must have been built for that image's kernel:
// the same vermagic, release and build options, as the kernel checks a
// module's when it loads it (check_modinfo(), kernel/module/main.c). A
// module without one (no .modinfo) says nothing: its DWARF needs no base,
// and its BTF is refused (OpenModuleBtf).
Result<void> CheckBuiltFor(const Target& t, const KernelVersion& kernel) {
  const KernelVersion& module = t.built_for;
  if (module.release.empty()) return {};
  std::string image = "the kernel image '" + t.kernel_image + "'";
  if (kernel.release.empty())
    return Fail(ModuleWhat(t) + " was built for Linux " + module.release + ", and " + image +
                    " does not say which kernel it is (it has neither vermagic nor linux_banner)",
                std::string(kKernelImageHint));
  if (module.release != kernel.release)
    return Fail(ModuleWhat(t) + " was built for Linux " + module.release + " (its vermagic), and " + image +
                    " is Linux " + kernel.release,
                "probe it with -k the image of " + module.release + " (e.g. /usr/lib/debug/boot/vmlinux-" +
                    module.release + "), or probe the module built for " + kernel.release);
  if (!kernel.vermagic.empty() && module.vermagic != kernel.vermagic)
    return Fail(ModuleWhat(t) + " was built as '" + std::string(Trim(module.vermagic)) + "' (its vermagic), and " +
                    image + " as '" + std::string(Trim(kernel.vermagic)) + "': they are not one build",
                "probe it with -k the image of the kernel it was built with");
  return {};
}

// Whether module `t` was built for the running kernel (env.release), as its
// vermagic says: an error naming both when not, saying what that rules
// out (`needs`). A module without vermagic says nothing: it passes.
Result<void> BuiltForRunningKernel(const Target& t, const KernelEnv& env, const std::string& needs,
                                   const std::string& hint) {
  const std::string& release = t.built_for.release;
  if (release.empty() || release == env.release) return {};
  return Fail(ModuleWhat(t) + " was built for Linux " + release + " (its vermagic), and the running kernel is " +
                  env.release + ": " + needs,
              hint);
}

// A module's split BTF (`split`, its .BTF section, read from a .ko,
// .ko.xz or .ko.zst alike), over the BTF of the kernel it was built for:
// --btf=FILE's (the user's word), the -k image's .BTF section (its
// vermagic checked), else the running kernel's when the module's vermagic
// names it. A loaded module named: the running kernel's
// /sys/kernel/btf/MODULE, which it made over its own.
Result<std::unique_ptr<BtfInfo>> OpenModuleBtf(const Target& t, const TargetRequest& request, const KernelEnv& env,
                                               std::string_view split) {
  Error none{ModuleWhat(t) + " has no .BTF section",
             "a kernel built with CONFIG_DEBUG_INFO_BTF_MODULES gives its modules BTF"};
  if (!request.btf_file.empty())
    return split.empty() ? std::unexpected(none) : BtfInfo::OpenSplit(t.path, split, *t.arch, request.btf_file);
  std::string running = env.root + env.btf + "/vmlinux";
  std::string loaded = env.root + env.btf + "/" + t.module;
  if (t.kernel_image.empty() && ModuleByName(request.module) && access(loaded.c_str(), R_OK) == 0)
    return BtfInfo::Open(loaded, *t.arch, running);
  if (split.empty()) return std::unexpected(none);
  const std::string& release = t.built_for.release;
  std::string needs = "its split BTF can be read only over the BTF of the kernel it was built for";
  if (release.empty())
    return Fail(
        ModuleWhat(t) + " has no vermagic in its .modinfo: which kernel it was built for is unknown, and " + needs,
        "name that kernel's BTF with --btf=FILE");
  if (!t.kernel_image.empty()) return BtfInfo::OpenSplit(t.path, split, *t.arch, t.kernel_image);
  KP_TRY_VOID(BuiltForRunningKernel(t, env, needs,
                                    "name that kernel's image with -k (e.g. /usr/lib/debug/boot/vmlinux-" + release +
                                        "), or its BTF with --btf=FILE"));
  return BtfInfo::OpenSplit(t.path, split, *t.arch, running);
}

// --btf=FILE of an ELF file is that file's architecture's kernel (a raw BTF
// file says nothing of it): taken for another architecture's, its parameters
// would be placed in the wrong registers (an arm64 image's, %di on x86-64).
Result<void> CheckBtfFileArch(const std::string& path, const Arch& arch) {
  auto identity = ElfImage::ReadIdentity(path);
  if (!identity) return {};  // raw BTF, or no file: BtfInfo::Open says which
  auto file_arch = ArchOfElf(identity->machine, identity->elf64, "'" + path + "'");
  if (!file_arch || *file_arch == &arch) return {};
  return Fail("--btf '" + path + "' is an " + std::string((*file_arch)->name()) +
                  " kernel's, and the kernel probed is " + std::string(arch.name()) + "'s",
              "probe that kernel with -k '" + path + "' --btf (its own architecture)");
}

// The BTF of a kernel target that has no DWARF, or of any with --btf
// (the DWARF is then set aside): --btf=FILE, a kernel image's .BTF
// section, the running kernel's; a module's is split over its kernel's
// (OpenModuleBtf). Asked for (--btf), it must open; otherwise its error is
// kept for messages.
Result<void> OpenBtf(Target& t, const TargetRequest& request, const KernelEnv& env, std::string_view module_btf = {}) {
  bool asked = request.btf || !request.btf_file.empty();
  if (asked && !t.kernel()) return Fail("--btf is for kernel probes; -x reads the program's DWARF", "leave out --btf");
  if (!t.kernel() || (t.debuginfo && !asked)) return {};
  if (t.debuginfo) {
    t.debuginfo.reset();
    t.debuginfo_error = {"--btf sets the DWARF aside", "leave out --btf to use the DWARF"};
  }
  if (!request.btf_file.empty()) KP_TRY_VOID(CheckBtfFileArch(request.btf_file, *t.arch));
  Result<std::unique_ptr<BtfInfo>> btf;
  if (t.kind == Target::kModule) {
    btf = OpenModuleBtf(t, request, env, module_btf);
  } else if (t.kind == Target::kKernelImage && request.btf_file.empty()) {
    btf = BtfInfo::Open(t.path, *t.arch);
  } else {
    std::string kernel = !request.btf_file.empty() ? request.btf_file : env.root + env.btf + "/vmlinux";
    btf = BtfInfo::Open(kernel, *t.arch, {}, request.index.cache_dir);
  }
  if (btf) {
    t.btf = std::move(*btf);
    return {};
  }
  if (asked) return std::unexpected(btf.error());
  t.btf_error = btf.error();
  return {};
}

Result<Target> OpenModule(const TargetRequest& request, const KernelEnv& env) {
  // A module: its file, its symbols where libdwfl lays it out, its DWARF.
  Target t;
  t.kind = Target::kModule;
  // The kernel probed: the -k image's, else the running kernel; a module
  // named is looked for among that kernel's.
  KernelEnv kernel = env;
  KernelVersion image_version;
  if (!request.vmlinux.empty()) {
    auto image = ElfImage::Open(request.vmlinux, request.index.cache_dir);
    if (!image) {
      Error error = image.error();
      error.hint = kKernelImageHint;
      return std::unexpected(error);
    }
    image_version = KernelVersionOf(*image);
    t.kernel_image = request.vmlinux;
    t.kernel_build_id = image->build_id();
    if (!image_version.release.empty()) kernel.release = image_version.release;
  }
  t.path = request.module;
  if (ModuleByName(request.module)) t.path = KP_TRY(FindKernelModule(kernel, request.module));
  t.module = ModuleName(t.path);
  auto module = KP_TRY(Debuginfo::OpenModule(t.path));
  t.arch = KP_TRY(ArchOfElf(module.machine, module.elf64, "the kernel module '" + t.path + "'"));
  t.built_for = ModuleVersionOf(module.modinfo);
  if (!t.kernel_image.empty()) KP_TRY_VOID(CheckBuiltFor(t, image_version));
  t.image = std::make_unique<ElfImage>(
      ElfImage::FromModule(t.path, t.module, *t.arch, std::move(module.symbols), std::move(module.build_id)));
  if (module.debuginfo)
    t.debuginfo = std::move(module.debuginfo);
  else
    t.debuginfo_error = {module.dwarf_error, "install the kernel's debug package for its modules' DWARF"};
  KP_TRY_VOID(OpenBtf(t, request, env, module.btf));
  return t;
}

// Event probes read types from the running kernel's BTF, DWARF or not.
void OpenBtfForTypes(Target& t, const TargetRequest& request, const KernelEnv& env) {
  if (!request.btf_types || t.btf || t.kind != Target::kRunningKernel) return;
  auto btf = BtfInfo::Open(env.root + env.btf + "/vmlinux", *t.arch, {}, request.index.cache_dir);
  if (btf)
    t.btf = std::move(*btf);
  else
    t.btf_error = btf.error();
}

// A program without DWARF of its own: its separate debuginfo, found by
// build-id (a distribution's -dbgsym package, a container's own first).
void OpenSeparateDebuginfo(Target& t, const TargetRequest& request, const std::string& root) {
  if (t.debuginfo || !t.image) return;
  for (const std::string& candidate : SeparateDebuginfoCandidates(root, t.image->build_id())) {
    if (access(candidate.c_str(), R_OK) != 0) continue;
    auto separate = Debuginfo::Open(candidate, request.index);
    if (!separate) continue;
    t.debuginfo = std::move(*separate);
    t.debuginfo_error = {};
    return;
  }
}

// --target-ns: the file found must be the one the process runs.
Result<void> CheckTargetProcess(const Target& t, const TargetRequest& request, const KernelEnv& env,
                                const SearchPaths& search) {
  if (!request.target_ns || search.root.empty()) return {};
  std::ifstream in(env.root + env.proc + "/" + std::to_string(request.target_ns) + "/maps");
  std::stringstream maps;
  maps << in.rdbuf();
  std::string inside = t.path.starts_with(search.root) ? t.path.substr(search.root.size()) : t.path;
  return CheckMappedFile(t.path, inside, maps.str(), request.target_ns);
}

// The architecture of the file at `path`, from its ELF header, before
// anything else of it is read.
Result<const Arch*> ArchOfFile(const std::string& path, Target::Kind kind) {
  auto identity = ElfImage::ReadIdentity(path);
  if (!identity && kind == Target::kKernelImage) {
    Error error = identity.error();
    error.hint = kKernelImageHint;
    return std::unexpected(error);
  }
  ElfIdentity id = KP_TRY(std::move(identity));
  std::string what = kind == Target::kUserBinary ? "'" + path + "'" : "the kernel image '" + path + "'";
  return ArchOfElf(id.machine, id.elf64, what);
}

}  // namespace

Result<void> CheckArchRunsHere(const Target& target, const KernelEnv& env) {
  auto running = ArchOfUname(env.machine);
  if (!running || *running == target.arch) return {};
  std::string what = target.path.empty() ? "the target" : "'" + target.path + "'";
  return Fail(what + " is for " + std::string(target.arch->name()) + ", and this machine's kernel is " +
                  std::string((*running)->name()) + ": probes on it can be printed (-D), not added here",
              "run kprobectl on an " + std::string(target.arch->name()) +
                  " machine to add them; -D prints the definitions anywhere");
}

Result<void> CheckForRunningKernel(const Target& target, const SystemView& running, bool force) {
  const KernelEnv& env = running.env;
  if (target.kind == Target::kKernelImage && target.image)
    return CheckBuildId(running.build_id, env, target.path, target.image->build_id(), force);
  if (target.kind != Target::kModule) return {};
  if (!target.kernel_image.empty())
    KP_TRY_VOID(CheckBuildId(running.build_id, env, target.kernel_image, target.kernel_build_id, force));
  KP_TRY_VOID(BuiltForRunningKernel(
      target, env, "probes on it are not probes on the module this kernel loads",
      "probe the module built for " + env.release + " (-m NAME finds it under /lib/modules/" + env.release + ")"));
  // Loaded, the module is the kernel's copy of one file: offsets read from
  // another build of it (of the same release) would land elsewhere.
  std::string file = target.image ? target.image->build_id() : std::string();
  if (force || running.module_build_id.empty() || file.empty() || running.module_build_id == file) return {};
  return Fail("'" + target.path + "' is not the module " + target.module +
                  " the running kernel has loaded: its build-id is " + file + ", the loaded one's (" + env.sys_module +
                  "/" + target.module + "/notes) is " + running.module_build_id,
              "give the loaded module's own file or its debuginfo (-m " + target.module +
                  " finds them), or add -f to use this file anyway");
}

LibraryMachine LibraryMachineOf(const KernelEnv& env) {
  auto arch = ArchOfUname(env.machine);
  if (!arch) return {};
  return LibraryMachine{(*arch)->elf_machine(), std::string((*arch)->multiarch())};
}

Result<Target> OpenTarget(const TargetRequest& request, const KernelEnv& env, const SearchPaths& search) {
  if (!request.exec.empty() && (!request.vmlinux.empty() || !request.module.empty()))
    return Fail("-x does not go with -k or -m", "-x probes a program, -k and -m the kernel");
  if (!request.module.empty()) {
    return OpenModule(request, env);
  }
  Target t;
  if (!request.exec.empty()) {
    t.kind = Target::kUserBinary;
    t.path = KP_TRY(FindBinary(request.exec, search));
  } else if (!request.vmlinux.empty()) {
    t.kind = Target::kKernelImage;
    t.path = request.vmlinux;
  } else {
    // The running kernel's image, found where distributions put it.
    auto found = FindKernelDebuginfo(env, request.force);
    if (!found) {
      t.arch = KP_TRY(ArchOfUname(env.machine));
      t.debuginfo_error = found.error();
      KP_TRY_VOID(OpenBtf(t, request, env));
      OpenBtfForTypes(t, request, env);
      return t;
    }
    t.path = *found;
  }
  t.arch = KP_TRY(ArchOfFile(t.path, t.kind));
  // The debuginfo first: it reads its unit headers and cache file on a
  // thread of its own while the symbols are read here.
  auto debuginfo = Debuginfo::Open(t.path, request.index);
  if (request.need_symbols) {
    auto image = ElfImage::Open(t.path, request.index.cache_dir);
    if (!image && t.kind == Target::kKernelImage) {
      Error error = image.error();
      error.hint = kKernelImageHint;
      return std::unexpected(error);
    }
    t.image = std::make_unique<ElfImage>(KP_TRY(std::move(image)));
    // A kernel image's addresses are relative to _text; a program has none.
    if (t.kind == Target::kKernelImage && !t.image->Find("_text"))
      return Fail("'" + t.path + "' is not a kernel image: it has no _text symbol",
                  "-k takes a vmlinux; probe a program or library with -x");
  }
  if (debuginfo)
    t.debuginfo = std::move(*debuginfo);
  else
    t.debuginfo_error = debuginfo.error();
  if (t.kind == Target::kUserBinary) {
    OpenSeparateDebuginfo(t, request, search.root);
    KP_TRY_VOID(CheckTargetProcess(t, request, env, search));
  }
  KP_TRY_VOID(OpenBtf(t, request, env));
  OpenBtfForTypes(t, request, env);
  return t;
}

}  // namespace kprobectl
