// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/system_view.h"

#include <sys/mount.h>
#include <unistd.h>

#include "kprobectl/probe_events.h"
#include "kprobectl/target.h"

namespace kprobectl {

namespace {

std::string ReadOrEmpty(const std::string& path) {
  if (path.empty() || path[0] != '/') return {};
  auto text = TracefsDir("/").Read(path.substr(1));
  return text ? *text : std::string();
}

}  // namespace

SystemView ReadSystemView(const TracefsDir* tracefs, const KernelEnv& env, const Target& target, bool running) {
  SystemView view;
  view.env = env;
  view.features = tracefs ? ReadFeatures(*tracefs) : AllFeatures();
  if (tracefs && tracefs->Exists(EventsFile(target.probe_kind())))
    if (auto names = ProbeEvents(*tracefs).Names()) view.existing_events = *names;
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
  if (tracefs)
    if (auto available = tracefs->Read("available_filter_functions")) view.available_functions = *available;
  if (!target.module.empty() && access((env.root + env.sys_module + "/" + target.module).c_str(), F_OK) == 0)
    view.loaded_modules.insert(target.module);
  return view;
}

}  // namespace kprobectl
