// SPDX-License-Identifier: GPL-2.0-or-later
//
// The running kernel's image, blacklist and traceable functions. The one
// file that sees libdebuginfod.
#include "kprobectl/kernel_image.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kprobectl/cache_file.h"
#include "kprobectl/strings.h"

namespace kprobectl {

namespace {

std::optional<std::string> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool Exists(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

}  // namespace

KernelEnv KernelEnv::Running() {
  KernelEnv env;
  utsname u;
  if (uname(&u) == 0) {
    env.release = u.release;
    env.machine = u.machine;
  }
  return env;
}

std::string BuildIdFromNotes(std::string_view notes) {
  // A sequence of ELF notes: namesz, descsz, type (4 bytes each), then the
  // name and the descriptor, each padded to 4 bytes.
  size_t at = 0;
  auto word = [&](size_t offset) {
    uint32_t v = 0;
    std::memcpy(&v, notes.data() + offset, 4);
    return v;
  };
  while (at + 12 <= notes.size()) {
    uint32_t namesz = word(at), descsz = word(at + 4), type = word(at + 8);
    size_t name = at + 12, desc = name + ((namesz + 3) & ~3u);
    if (desc + descsz > notes.size()) break;
    if (type == 3 && namesz == 4 && notes.substr(name, 3) == "GNU") return HexOf(notes.substr(desc, descsz));
    at = desc + ((descsz + 3) & ~3u);
  }
  return {};
}

std::vector<std::string> DebuginfoCandidates(const KernelEnv& env, std::string_view build_id) {
  const std::string& r = env.release;
  std::vector<std::string> out = {
      env.root + "/usr/lib/debug/boot/vmlinux-" + r,              // Debian, Ubuntu
      env.root + "/usr/lib/debug/lib/modules/" + r + "/vmlinux",  // Fedora, RHEL
      env.root + "/boot/vmlinux-" + r,
      env.root + "/lib/modules/" + r + "/build/vmlinux",
      env.root + "/lib/modules/" + r + "/vmlinux",
  };
  if (build_id.size() > 2)
    out.push_back(env.root + "/usr/lib/debug/.build-id/" + std::string(build_id.substr(0, 2)) + "/" +
                  std::string(build_id.substr(2)) + ".debug");
  return out;
}

std::string RunningBuildId(const KernelEnv& env) {
  auto notes = ReadAll(env.root + env.notes);
  return notes ? BuildIdFromNotes(*notes) : std::string();
}

namespace {

// libdebuginfod is loaded only when a server is configured, as libdwfl does:
// linking it pulls libcurl and its TLS stack into every run, which costs
// more start-up time than many commands take in all.
Result<std::string> FromDebuginfod(std::string_view build_id) {
  const char* urls = std::getenv("DEBUGINFOD_URLS");
  if (!urls || !*urls || build_id.empty()) return Fail("");
  void* lib = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return Fail(std::string("cannot load libdebuginfod: ") + dlerror(), "install libdebuginfod1");
  auto begin = reinterpret_cast<decltype(&debuginfod_begin)>(dlsym(lib, "debuginfod_begin"));
  auto find = reinterpret_cast<decltype(&debuginfod_find_debuginfo)>(dlsym(lib, "debuginfod_find_debuginfo"));
  auto end = reinterpret_cast<decltype(&debuginfod_end)>(dlsym(lib, "debuginfod_end"));
  debuginfod_client* client = begin && find && end ? begin() : nullptr;
  if (!client) {
    dlclose(lib);
    return Fail("cannot start a debuginfod client");
  }
  char* path = nullptr;
  int fd = find(client, reinterpret_cast<const unsigned char*>(build_id.data()), 0, &path);
  end(client);
  dlclose(lib);
  if (fd < 0) return Fail(std::string("debuginfod (") + urls + "): " + std::strerror(-fd));
  close(fd);
  std::string out = path;
  free(path);
  return out;
}

}  // namespace

Result<void> CheckBuildId(const KernelEnv& env, const ElfImage& image, bool force) {
  return CheckBuildId(RunningBuildId(env), env, image.path(), image.build_id(), force);
}

Result<void> CheckBuildId(std::string_view running, const KernelEnv& env, const std::string& path,
                          std::string_view build_id, bool force) {
  if (running.empty() || build_id.empty() || running == build_id || force) return {};
  return Fail("'" + path + "' is not the running kernel's image: its build-id is " + std::string(build_id) +
                  ", the running kernel's (" + env.notes + ") is " + std::string(running),
              "install the debuginfo of kernel " + env.release + ", or add -f to use this file anyway");
}

Result<std::string> FindKernelDebuginfo(const KernelEnv& env, bool force) {
  std::string build_id = RunningBuildId(env);
  std::vector<std::string> tried;
  std::optional<Error> mismatch;
  for (const std::string& path : DebuginfoCandidates(env, build_id)) {
    tried.push_back(path);
    if (!Exists(path)) continue;
    auto image = ElfImage::Open(path);
    if (!image) continue;
    auto checked = CheckBuildId(env, *image, force);
    if (checked) return path;
    if (!mismatch) mismatch = checked.error();
  }
  auto fetched = FromDebuginfod(build_id);
  if (fetched) return *fetched;
  if (mismatch) return std::unexpected(*mismatch);
  std::string message = "no debuginfo for the running kernel " + env.release + "; looked at " + Join(tried, ", ");
  if (!fetched.error().message.empty()) message += ", and " + fetched.error().message;
  return Fail(message, "install linux-image-" + env.release +
                           "-dbg (Debian, Ubuntu: -dbgsym) or kernel-debuginfo "
                           "(Fedora), set DEBUGINFOD_URLS, or name the image with -k VMLINUX");
}

namespace {

// The C string at the start of `bytes`.
std::string UpToNul(std::string_view bytes) { return std::string(bytes.substr(0, bytes.find('\0'))); }

std::string FirstWord(std::string_view text) { return std::string(text.substr(0, text.find_first_of(" \t\n"))); }

}  // namespace

KernelVersion KernelVersionOf(const ElfImage& image) {
  KernelVersion out;
  auto found = image.Find(std::vector<std::string_view>{"vermagic", "linux_banner"});
  auto text = [&](const ElfSymbol* symbol) -> std::string {
    if (!symbol || symbol->type != ElfSymbol::kObject || symbol->size == 0 || symbol->size > 4096) return {};
    auto bytes = image.ReadBytes(symbol->value, symbol->size);
    return bytes ? UpToNul(*bytes) : std::string();
  };
  out.vermagic = text(found[0]);
  out.release = FirstWord(out.vermagic);
  // "Linux version RELEASE (builder) ...": init/version.c.
  constexpr std::string_view kBanner = "Linux version ";
  if (std::string banner = text(found[1]); out.release.empty() && banner.starts_with(kBanner))
    out.release = FirstWord(std::string_view(banner).substr(kBanner.size()));
  return out;
}

KernelVersion ModuleVersionOf(std::string_view modinfo) {
  constexpr std::string_view kKey = "vermagic=";
  KernelVersion out;
  for (size_t at = 0; at < modinfo.size();) {
    size_t end = modinfo.find('\0', at);
    if (end == std::string_view::npos) end = modinfo.size();
    std::string_view entry = modinfo.substr(at, end - at);
    if (entry.starts_with(kKey)) {
      out.vermagic = std::string(entry.substr(kKey.size()));
      out.release = FirstWord(out.vermagic);
      break;
    }
    at = end + 1;
  }
  return out;
}

std::string ModuleName(std::string_view path_or_name) {
  std::string name(path_or_name.substr(path_or_name.rfind('/') + 1));
  name = name.substr(0, name.find(".ko"));
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

Result<std::string> FindKernelModule(const KernelEnv& env, std::string_view name) {
  std::string wanted = ModuleName(name);
  std::vector<std::string> tried;
  for (const std::string& dir :
       {env.root + "/usr/lib/debug/lib/modules/" + env.release, env.root + "/lib/modules/" + env.release}) {
    tried.push_back(dir);
    std::error_code error;
    for (auto it = std::filesystem::recursive_directory_iterator(dir, error);
         !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
      std::string file = it->path().filename();
      if (file.find(".ko") == std::string::npos || !it->is_regular_file()) continue;
      if (ModuleName(file) == wanted) return it->path().string();
    }
  }
  return Fail("no module '" + std::string(name) + "' for kernel " + env.release + " under " + Join(tried, " or "),
              "give the module's file: -m PATH.ko");
}

KprobeBlacklist KprobeBlacklist::FromDebugfs(std::string_view text, int64_t slide) {
  KprobeBlacklist out;
  for (const std::string& line : SplitLines(text)) {
    size_t dash = line.find('-'), tab = line.find_first_of("\t ");
    if (dash == std::string::npos || tab == std::string::npos || tab < dash) continue;
    auto start = ParseUnsigned(line.substr(0, dash));
    auto end = ParseUnsigned(line.substr(dash + 1, tab - dash - 1));
    if (!start || !end) continue;
    std::string name(Trim(std::string_view(line).substr(tab)));
    out.ranges_.push_back({*start - static_cast<uint64_t>(slide), *end - static_cast<uint64_t>(slide), name});
  }
  return out;
}

Result<KprobeBlacklist> KprobeBlacklist::FromImage(const ElfImage& image, const Arch& arch) {
  KprobeBlacklist out;
  // Sections the kernel never probes, between the linker's markers.
  std::span<const std::string_view> sections = arch.no_probe_sections();
  std::vector<std::string> names;
  for (std::string_view section : sections) {
    names.push_back("__" + std::string(section) + "_start");
    names.push_back("__" + std::string(section) + "_end");
  }
  names.push_back("__start_kprobe_blacklist");
  names.push_back("__stop_kprobe_blacklist");
  auto found = image.Find(std::vector<std::string_view>(names.begin(), names.end()));
  for (size_t i = 0; i < sections.size(); ++i) {
    const ElfSymbol* start = found[2 * i];
    const ElfSymbol* end = found[2 * i + 1];
    if (start && end && end->value > start->value)
      out.ranges_.push_back({start->value, end->value, "." + std::string(sections[i])});
  }
  // NOKPROBE_SYMBOL(): the addresses of whole functions.
  const ElfSymbol* start = found[names.size() - 2];
  const ElfSymbol* end = found[names.size() - 1];
  if (start && end && end->value > start->value) {
    ImageWords listed = KP_TRY(image.ReadWords(start->value, end->value, arch.relative_relocation()));
    out.functions_.assign(listed.words.begin(), listed.words.end());
    std::sort(out.functions_.begin(), out.functions_.end());
    out.image_ = &image;
  }
  return out;
}

std::optional<BlacklistRange> KprobeBlacklist::Find(uint64_t address) const {
  for (const BlacklistRange& r : ranges_)
    if (address >= r.start && address < r.end) return r;
  if (functions_.empty() || !image_ || address < functions_.front()) return std::nullopt;
  const ElfSymbol* f = image_->FunctionAt(address);
  if (!f || !std::binary_search(functions_.begin(), functions_.end(), f->value)) return std::nullopt;
  return BlacklistRange{f->value, f->value + std::max<uint64_t>(f->size, 1), f->name};
}

TraceableFunctions TraceableFunctions::FromAvailable(std::string_view text) {
  TraceableFunctions out;
  out.known_ = true;
  for (const std::string& line : SplitLines(text)) {
    std::string name = line.substr(0, line.find_first_of(" \t"));
    if (!name.empty()) out.names_.insert(name);
  }
  return out;
}

Result<TraceableFunctions> TraceableFunctions::FromImage(const ElfImage& image, const Arch& arch) {
  TraceableFunctions out;
  out.window_ = arch.ftrace_site_window();
  auto found = image.Find(std::vector<std::string_view>{"__start_mcount_loc", "__stop_mcount_loc"});
  const ElfSymbol* start = found[0];
  const ElfSymbol* end = found[1];
  if (!start || !end || end->value <= start->value) return out;  // unknown: not a kernel built with ftrace
  ImageWords sites = KP_TRY(image.ReadWords(start->value, end->value, arch.relative_relocation()));
  out.known_ = true;
  out.by_address_ = true;
  // Sorted already where the build sorts it (CONFIG_BUILDTIME_MCOUNT_SORT,
  // Linux 5.17+: Debian's 6.1 has 37,697 sites in order): a check in one
  // pass, where sorting them anyway cost a warm command 12% of its work.
  if (!std::is_sorted(sites.words.begin(), sites.words.end())) {
    auto sorted = std::make_shared<std::vector<uint64_t>>(sites.words.begin(), sites.words.end());
    std::sort(sorted->begin(), sorted->end());
    sites.words = *sorted;
    sites.owner = std::move(sorted);
  }
  out.sites_ = std::move(sites);
  return out;
}

bool TraceableFunctions::Traceable(const ElfSymbol& function) const {
  if (!known_) return true;
  if (!by_address_) return names_.contains(function.name);
  // The call site is at the function's start, after a landing pad (x86's
  // endbr64, arm64's BTI), or just before it (arm64's CALL_OPS): within
  // the architecture's window.
  uint64_t from = function.value + static_cast<uint64_t>(window_.first);
  std::span<const uint64_t> sites = sites_.words;
  auto it = std::lower_bound(sites.begin(), sites.end(), from);
  return it != sites.end() && *it < function.value + static_cast<uint64_t>(window_.second) &&
         *it < function.value + std::max<uint64_t>(function.size, 1);
}

bool TraceableFunctions::KprobeAllowed(const ElfSymbol& function, const ElfImage* image) const {
  if (Traceable(function)) return true;
  size_t dot = function.name.find('.');
  if (dot == std::string::npos || dot == 0) return false;
  std::string base_name = function.name.substr(0, dot);
  if (const ElfSymbol* base = image ? image->Find(base_name) : nullptr) return Traceable(*base);
  ElfSymbol by_name;
  by_name.name = base_name;
  return !image && Traceable(by_name);
}

std::string_view KernelTextSymbol(const ElfImage& image) {
  // An image of a machine kprobectl does not know has none: nothing is
  // counted from a symbol it cannot name.
  return image.arch() ? image.arch()->kernel_text_symbol() : std::string_view();
}

KallsymsNames KallsymsNames::Parse(std::string_view kallsyms) {
  KallsymsNames out;
  for (const std::string& line : SplitLines(kallsyms)) {
    auto words = SplitWords(line);
    if (words.size() < 3) continue;
    char type = static_cast<char>(std::tolower(static_cast<unsigned char>(words[1][0])));
    if (type == 't' || type == 'w') ++out.counts_[words[2]];
    if ((words[2] == "_text" || words[2] == "_stext") && words.size() == 3) {
      auto address = ParseUnsigned("0x" + words[0]);
      if (address && *address != 0) out.anchors_[words[2]] = *address;  // 0: addresses hidden
    }
  }
  return out;
}

std::optional<int64_t> KallsymsNames::Slide(const ElfImage& image) const {
  for (std::string_view name : {"_text", "_stext"}) {
    const ElfSymbol* in_image = image.Find(name);
    auto running = anchors_.find(name);
    if (in_image && running != anchors_.end()) return static_cast<int64_t>(running->second - in_image->value);
  }
  return std::nullopt;
}

size_t KallsymsNames::Count(const std::string& name) const {
  auto it = counts_.find(name);
  return it == counts_.end() ? 0 : it->second;
}

}  // namespace kprobectl
