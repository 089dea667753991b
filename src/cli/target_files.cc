// SPDX-License-Identifier: GPL-2.0-or-later
#include <chrono>
#include <cstdlib>
#include <ostream>

#include "commands.h"
#include "kprobectl/find_binary.h"
#include "kprobectl/kernel_image.h"

namespace kprobectl::cli {

std::string DefaultCacheDir() {
  const char* xdg = getenv("XDG_CACHE_HOME");
  if (xdg && *xdg == '/') return std::string(xdg) + "/kprobectl";
  const char* home = getenv("HOME");
  if (home && *home) return std::string(home) + "/.cache/kprobectl";
  return {};
}

IndexOptions MakeIndexOptions(const Options& options, std::ostream& err, const std::string& path) {
  IndexOptions out;
  out.cache_dir = options.cache_dir;
  if (!options.progress) return out;
  // A line that appears only when the build takes more than a moment, and
  // is erased when it ends.
  struct State {
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    int shown = -1;
  };
  auto state = std::make_shared<State>();
  std::string name = path.substr(path.rfind('/') + 1);
  out.progress = [state, name, &err](size_t done, size_t total) {
    if (done >= total) {
      if (state->shown >= 0) err << "\r\033[K" << std::flush;
      return;
    }
    if (std::chrono::steady_clock::now() - state->start < std::chrono::milliseconds(300)) return;
    int percent = static_cast<int>(done * 100 / std::max<size_t>(total, 1));
    if (percent == state->shown) return;
    state->shown = percent;
    err << "\rkprobectl: indexing the debuginfo of " << name << " (once per build): " << percent << "%" << std::flush;
  };
  return out;
}

Result<TargetFiles> OpenTargetFiles(const Options& options, std::ostream& err, bool need_symbols) {
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
    path = KP_TRY(FindBinary(options.exec, SearchPathsFrom(getenv("PATH"), getenv("LD_LIBRARY_PATH"))));
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
  // The debuginfo first: it reads its unit headers and cache file on a
  // thread of its own while the symbols are read here.
  auto debuginfo = Debuginfo::Open(path, MakeIndexOptions(options, err, path));
  if (need_symbols) files.image = std::make_unique<ElfImage>(KP_TRY(ElfImage::Open(path, options.cache_dir)));
  if (debuginfo) files.debuginfo = std::move(*debuginfo);
  else files.debuginfo_error = debuginfo.error();
  return files;
}

void ReportIndex(const TargetFiles& files, const Options& options, std::ostream& err) {
  if (!options.verbose || !files.debuginfo) return;
  IndexStatus status = files.debuginfo->index_status();
  std::string what;
  switch (status.use) {
    case IndexStatus::kUnused:
      return;
    case IndexStatus::kScan:
      what = "none; each name found by a scan of " + files.debuginfo->path();
      break;
    case IndexStatus::kWalk:
      what = "every DIE of " + files.debuginfo->path() + " walked, kept in memory";
      break;
    case IndexStatus::kCacheRead:
      what = "read from " + status.file;
      break;
    case IndexStatus::kCacheBuilt:
      what = "built, written to " + status.file;
      break;
  }
  err << "kprobectl: debuginfo index: " << what << "\n";
  if (!status.problem.empty()) err << "kprobectl: debuginfo index: " << status.problem << "\n";
}

Result<Debuginfo*> RequireDebuginfo(TargetFiles& files) {
  if (!files.debuginfo) return std::unexpected(files.debuginfo_error);
  return files.debuginfo.get();
}

}  // namespace kprobectl::cli
