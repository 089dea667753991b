// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/system_view.h"

#include <sys/mount.h>
#include <unistd.h>

#include <memory>

#include "kprobectl/probe_events.h"
#include "kprobectl/strings.h"
#include "kprobectl/target.h"

namespace kprobectl {

namespace {

std::string ReadOrEmpty(const std::string& path) {
  if (path.empty() || path[0] != '/') return {};
  auto text = TracefsDir("/").Read(path.substr(1));
  return text ? *text : std::string();
}

// kallsyms, read once when first asked, by the copies of the view alike.
std::function<const KallsymsNames*()> LazyKallsyms(const std::string& path) {
  auto read = std::make_shared<std::optional<KallsymsNames>>();
  return [read, path]() -> const KallsymsNames* {
    if (!*read) *read = KallsymsNames::Parse(ReadOrEmpty(path));
    return (*read)->empty() ? nullptr : &**read;
  };
}

// What ftrace can trace, or why that is not known: a kernel without
// dynamic ftrace has no list; one that refuses root its function lists
// (lockdown's "confidentiality", a security module) answers EPERM.
void ReadAvailableFunctions(const TracefsDir* tracefs, SystemView& view) {
  constexpr std::string_view kFile = "available_filter_functions";
  if (!tracefs) {
    view.available_functions_error = "no tracefs to read " + std::string(kFile) + " from";
    return;
  }
  if (!tracefs->Exists(kFile)) {
    view.available_functions_error =
        "tracefs has no " + std::string(kFile) + " (a kernel without dynamic ftrace, CONFIG_DYNAMIC_FTRACE)";
    return;
  }
  auto available = tracefs->Read(kFile);
  if (available) {
    view.available_functions = std::move(*available);
    return;
  }
  view.available_functions_error = available.error().message;
  if (available.error().message.find("Operation not permitted") != std::string::npos)
    view.available_functions_error +=
        " (the kernel refuses its function lists even to root: lockdown, or a security module)";
}

// The probe events there are, and what event probes need of the others.
void ReadEvents(const TracefsDir& tracefs, const Target& target, SystemView& view) {
  if (tracefs.Exists(EventsFile(target.probe_kind())) || tracefs.Exists("dynamic_events"))
    if (auto defs = ProbeEvents(tracefs).List())
      for (const TraceEventDef& def : *defs) {
        view.existing_events.insert(def.Path());
        if (def.type == ProbeType::kProbe || def.type == ProbeType::kEventProbe)
          view.unattachable_events.insert(def.Path());
      }
  if (!target.kernel()) return;
  const TracefsDir* dir = &tracefs;  // outlives the view: the command's
  view.event_format = [dir](const std::string& system, const std::string& event) -> Result<std::string> {
    if (!IsIdentifier(system) || !IsIdentifier(event)) return Fail("not an event name");
    return dir->Read("events/" + system + "/" + event + "/format");
  };
  view.event_names = [dir]() {
    std::vector<std::string> names;
    if (auto text = dir->Read("available_events"))
      for (const std::string& line : SplitLines(*text)) names.push_back(line);
    return names;
  };
}

}  // namespace

SystemView ReadSystemView(const TracefsDir* tracefs, const KernelEnv& env, const Target& target, bool running) {
  return ReadSystemView(tracefs, tracefs ? ReadFeatures(*tracefs) : AllFeatures(), env, target, running);
}

SystemView ReadSystemView(const TracefsDir* tracefs, const KernelFeatures& features, const KernelEnv& env,
                          const Target& target, bool running) {
  SystemView view;
  view.env = env;
  if (target.kind == Target::kRunningKernel) {
    view.kernel_functions = LazyKallsyms(env.root + env.kallsyms);
    ReadAvailableFunctions(tracefs, view);
  }
  view.features = features;
  if (tracefs) ReadEvents(*tracefs, target, view);
  view.running = running && target.kernel() && view.features.kprobe_events;
  if (!view.running) return view;
  view.build_id = RunningBuildId(env);
  view.kallsyms = KallsymsNames::Parse(ReadOrEmpty(env.root + env.kallsyms));

  view.features.fprobe_maxactive = view.features.fprobe_events && view.kallsyms.Count("fprobe_exit_handler") > 0;
  long cpus = sysconf(_SC_NPROCESSORS_CONF);
  view.possible_cpus = cpus > 0 ? static_cast<unsigned>(cpus) : 0;
  std::string blacklist = env.root + env.debugfs + "/kprobes/blacklist";
  if (access(blacklist.c_str(), R_OK) != 0 && geteuid() == 0 && env.root.empty())
    mount("debugfs", env.debugfs.c_str(), "debugfs", 0, nullptr);  // best effort
  view.blacklist = ReadOrEmpty(blacklist);
  if (target.kind != Target::kRunningKernel) ReadAvailableFunctions(tracefs, view);
  std::string module = env.root + env.sys_module + "/" + target.module;
  if (!target.module.empty() && access(module.c_str(), F_OK) == 0) {
    view.loaded_modules.insert(target.module);
    view.module_build_id = BuildIdFromNotes(ReadOrEmpty(module + "/notes/.note.gnu.build-id"));
  }
  return view;
}

}  // namespace kprobectl
