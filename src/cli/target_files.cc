// SPDX-License-Identifier: GPL-2.0-or-later
#include "commands.h"
#include "kprobectl/kernel_image.h"

namespace kprobectl::cli {

Result<TargetFiles> OpenTargetFiles(const Options& options) {
  TargetFiles files;
  if (!options.exec.empty() && (!options.vmlinux.empty() || !options.module.empty()))
    return Fail("-x does not go with -k or -m", "-x probes a program, -k and -m the kernel");
  if (!options.module.empty()) {
    // A module: its file, its symbols where libdwfl lays it out, its DWARF.
    std::string path = options.module;
    if (path.find('/') == std::string::npos && path.find(".ko") == std::string::npos)
      path = KP_TRY(FindKernelModule(KernelEnv::Running(), options.module));
    auto module = KP_TRY(Debuginfo::OpenModule(path));
    files.image = std::make_unique<ElfImage>(ElfImage::FromModule(path, ModuleName(path), std::move(module.symbols)));
    if (module.debuginfo) files.debuginfo = std::move(module.debuginfo);
    else files.debuginfo_error = {module.dwarf_error, "install the kernel's debug package for its modules' DWARF"};
    return files;
  }
  std::string path;
  if (!options.exec.empty()) {
    files.kind = ProbeKind::kUser;
    path = KP_TRY(FindBinary(options.exec));
  } else if (!options.vmlinux.empty()) {
    path = options.vmlinux;
  } else {
    // The running kernel's image, found where distributions put it.
    auto found = FindKernelDebuginfo(KernelEnv::Running(), options.force);
    if (!found) {
      files.debuginfo_error = found.error();
      return files;
    }
    path = *found;
  }
  files.image = std::make_unique<ElfImage>(KP_TRY(ElfImage::Open(path)));
  auto debuginfo = Debuginfo::Open(path);
  if (debuginfo) files.debuginfo = std::move(*debuginfo);
  else files.debuginfo_error = debuginfo.error();
  return files;
}

Result<Debuginfo*> RequireDebuginfo(TargetFiles& files) {
  if (!files.debuginfo) return std::unexpected(files.debuginfo_error);
  return files.debuginfo.get();
}

}  // namespace kprobectl::cli
