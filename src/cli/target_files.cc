// SPDX-License-Identifier: GPL-2.0-or-later
#include "commands.h"
#include "kprobectl/kernel_image.h"

namespace kprobectl::cli {

Result<TargetFiles> OpenTargetFiles(const Options& options) {
  TargetFiles files;
  if (!options.exec.empty() && !options.vmlinux.empty())
    return Fail("-x and -k do not go together", "-x probes a program, -k names the kernel's image");
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
