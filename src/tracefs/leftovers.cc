// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/leftovers.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "kprobectl/probe_events.h"
#include "kprobectl/strings.h"

namespace kprobectl {

namespace {

constexpr std::string_view kMagic = "kprobectl-trace-record 1";
constexpr std::string_view kInstancePrefix = "kprobectl-";
constexpr std::string_view kRecordPrefix = "trace-";
constexpr std::string_view kSyntheticPrefix = "kplat";

struct Record {
  std::string root;
  TraceRun run;
  std::vector<TraceEventDef> defs;
};

std::optional<Record> ReadRecord(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line) || line != kMagic) return std::nullopt;
  Record r;
  bool have_pid = false;
  while (std::getline(in, line)) {
    if (line.starts_with("root ")) {
      r.root = line.substr(5);
    } else if (line.starts_with("pid ")) {
      auto pid = ParseUnsigned(line.substr(4));
      if (!pid || *pid == 0 || *pid > INT32_MAX) return std::nullopt;
      r.run.pid = static_cast<int>(*pid);
      have_pid = true;
    } else if (line.starts_with("start ")) {
      r.run.start_time = ParseUnsigned(line.substr(6));
    } else if (line.size() > 2 && (line[0] == 'k' || line[0] == 'u') && line[1] == ' ') {
      auto def = ParseDefinition(line.substr(2), line[0] == 'k' ? ProbeKind::kKernel : ProbeKind::kUser);
      if (def) r.defs.push_back(std::move(*def));
    }
  }
  if (!have_pid) return std::nullopt;
  return r;
}

std::vector<std::string> ListDirectory(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = opendir(path.c_str());
  if (!dir) return names;
  while (dirent* entry = readdir(dir)) names.emplace_back(entry->d_name);
  closedir(dir);
  return names;
}

std::optional<int> PidOf(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix)) return std::nullopt;
  auto pid = ParseUnsigned(name.substr(prefix.size()));
  if (!pid || *pid == 0 || *pid > INT32_MAX || name.substr(prefix.size()).starts_with("0")) return std::nullopt;
  return static_cast<int>(*pid);
}

bool SameProbe(const TraceEventDef& a, const TraceEventDef& b) {
  return a.kind == b.kind && a.group == b.group && a.event == b.event && a.retprobe == b.retprobe &&
         a.target == b.target;
}

}  // namespace

Result<TemporaryRecord> TemporaryRecord::Create(const std::string& registry_dir, const std::string& tracefs_root,
                                                const TraceRun& self) {
  if (registry_dir.empty()) return TemporaryRecord("");
  if (mkdir(registry_dir.c_str(), 0700) != 0 && errno != EEXIST)
    return Fail("cannot create " + registry_dir + ": " + std::strerror(errno),
                "kprobectl records its temporary probes there, to remove them if it is killed");
  std::string path = registry_dir + "/" + std::string(kRecordPrefix) + std::to_string(self.pid);
  std::ostringstream text;
  text << kMagic << "\nroot " << tracefs_root << "\npid " << self.pid << "\n";
  if (self.start_time) text << "start " << *self.start_time << "\n";
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Fail("cannot write " + path + ": " + std::strerror(errno));
  std::string bytes = text.str();
  bool ok = write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
  close(fd);
  if (!ok) {
    unlink(path.c_str());
    return Fail("cannot write " + path);
  }
  return TemporaryRecord(path);
}

TemporaryRecord::~TemporaryRecord() {
  if (!path_.empty()) unlink(path_.c_str());
}

Result<void> TemporaryRecord::Add(const std::vector<TraceEventDef>& defs) {
  if (path_.empty() || defs.empty()) return {};
  std::string bytes;
  for (const TraceEventDef& def : defs)
    bytes += std::string(def.kind == ProbeKind::kKernel ? "k " : "u ") + FormatDefinition(def) + "\n";
  int fd = open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return Fail("cannot write " + path_ + ": " + std::strerror(errno));
  // fsync: the record must be on disk before the probes are in the kernel.
  bool ok = write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()) && fdatasync(fd) == 0;
  close(fd);
  if (!ok) return Fail("cannot write " + path_);
  return {};
}

Result<std::vector<Leftover>> FindLeftovers(const TracefsDir& tracefs, const std::string& registry_dir,
                                            const RunAlive& alive) {
  std::vector<Leftover> out;
  if (!registry_dir.empty())
    for (const std::string& name : ListDirectory(registry_dir)) {
      if (!PidOf(name, kRecordPrefix)) continue;
      std::string path = registry_dir + "/" + name;
      auto record = ReadRecord(path);
      if (!record || record->root != tracefs.root() || alive(record->run)) continue;
      Leftover l;
      l.run = record->run;
      l.record = path;
      // What the kernel still has of it: a probe re-made since under the
      // same name with another target is someone else's.
      if (!record->defs.empty()) {
        std::vector<TraceEventDef> now = KP_TRY(ProbeEvents(tracefs).List());
        for (const TraceEventDef& def : record->defs)
          for (const TraceEventDef& current : now)
            if (SameProbe(def, current)) l.probes.push_back(current);
      }
      out.push_back(std::move(l));
    }
  auto owner_of = [&](int pid) -> Leftover* {
    for (Leftover& l : out)
      if (l.run.pid == pid) return &l;
    if (alive(TraceRun{pid, std::nullopt})) return nullptr;
    out.push_back(Leftover{TraceRun{pid, std::nullopt}, {}, {}, "", {}});
    return &out.back();
  };
  // hist --latency's synthetic events, "kplatN_PID u64 ns".
  if (tracefs.Exists("synthetic_events"))
    for (const std::string& line : SplitLines(KP_TRY(tracefs.Read("synthetic_events")))) {
      std::string name = SplitWords(line).empty() ? std::string() : SplitWords(line)[0];
      size_t under = name.rfind('_');
      if (!name.starts_with(kSyntheticPrefix) || under == std::string::npos) continue;
      auto pid = PidOf(std::string_view(name).substr(under + 1), "");
      if (!pid) continue;
      if (Leftover* owner = owner_of(*pid)) owner->synthetic.push_back(name);
    }
  if (!tracefs.Exists("instances")) return out;
  for (const std::string& name : KP_TRY(tracefs.List("instances"))) {
    // "kprobectl-PID", or "kprobectl-PID-PART".
    std::string_view whole = name;
    if (size_t dash = whole.rfind('-');
        dash > kInstancePrefix.size() && dash != std::string_view::npos && PidOf(whole.substr(dash + 1), ""))
      whole = whole.substr(0, dash);
    auto pid = PidOf(whole, kInstancePrefix);
    if (!pid) continue;
    Leftover* owner = owner_of(*pid);
    if (!owner) continue;
    owner->instances.push_back("instances/" + name);
  }
  return out;
}

namespace {

// A killed hist's triggers: an instance whose hist triggers pair events
// through variables and a synthetic event cannot be removed (EBUSY, seen
// on Linux 6.1) until they go. Each is removed as the kernel prints it, "!" before, without
// " [active]"; a trigger whose variables another still uses is refused,
// so the passes go on while they remove something.
void RemoveTriggers(const TracefsDir& tracefs, const std::string& instance,
                    const std::function<void(std::string_view)>& log) {
  std::vector<std::string> files;
  auto groups = tracefs.List(instance + "/events");
  if (!groups) return;
  for (const std::string& group : *groups) {
    auto events = tracefs.List(instance + "/events/" + group);
    if (!events) continue;
    for (const std::string& event : *events) {
      std::string file = instance + "/events/" + group + "/" + event + "/trigger";
      auto text = tracefs.Read(file);
      // With no trigger the file lists the kinds ("# Available triggers:").
      if (text && !text->empty() && !text->starts_with("#")) files.push_back(file);
    }
  }
  for (bool progress = true; progress;) {
    progress = false;
    for (const std::string& file : files) {
      auto text = tracefs.Read(file);
      if (!text) continue;
      for (const std::string& line : SplitLines(*text)) {
        if (line.empty() || line.starts_with("#")) continue;
        std::string trigger = line.substr(0, line.rfind(" [active]"));
        if (log) log("append " + tracefs.PathOf(file) + ": !" + trigger);
        progress = tracefs.Append(file, "!" + trigger).has_value() || progress;
      }
    }
  }
}

}  // namespace

Result<std::string> RemoveLeftover(const TracefsDir& tracefs, const Leftover& leftover,
                                   const std::function<void(std::string_view)>& log) {
  std::vector<std::string> removed, kept;
  for (const std::string& instance : leftover.instances) {
    if (!tracefs.Exists(instance)) continue;
    if (log) log("rmdir " + tracefs.PathOf(instance));
    auto gone = tracefs.RemoveDirectory(instance);
    if (!gone) {
      RemoveTriggers(tracefs, instance, log);
      if (log) log("rmdir " + tracefs.PathOf(instance));
      gone = tracefs.RemoveDirectory(instance);
    }
    if (!gone)
      return Fail("cannot remove " + tracefs.PathOf(instance) + ", left by kprobectl trace (pid " +
                      std::to_string(leftover.run.pid) + "): " + gone.error().message,
                  "something still reads its buffers; stop it, then run 'kprobectl clean'");
    removed.push_back(instance.substr(instance.find('/') + 1));
  }
  // After the instance: its triggers used them.
  for (const std::string& name : leftover.synthetic) {
    if (log) log("append " + tracefs.PathOf("synthetic_events") + ": !" + name);
    KP_TRY_VOID(tracefs.Append("synthetic_events", "!" + name));
    removed.push_back("synthetic/" + name);
  }
  ProbeEvents events(tracefs, log);
  for (const TraceEventDef& def : leftover.probes) {
    auto enabled = KP_TRY(events.EnabledIn(def));
    if (!enabled.empty()) {
      kept.push_back(def.FullName() + " (enabled elsewhere)");
      continue;
    }
    KP_TRY_VOID(events.Remove(def));
    removed.push_back(def.FullName());
  }
  if (!leftover.record.empty()) unlink(leftover.record.c_str());
  std::string text = "removed what kprobectl trace (pid " + std::to_string(leftover.run.pid) +
                     ") left behind when it was stopped without cleaning up: " +
                     (removed.empty() ? std::string("nothing in tracefs") : Join(removed, ", "));
  if (!kept.empty()) text += "; kept " + Join(kept, ", ");
  return text;
}

std::optional<TraceRun> ProcessRun(const std::string& proc_root, int pid) {
  std::ifstream in(proc_root + "/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  // "PID (COMM) STATE PPID ..."; COMM may hold blanks and parentheses.
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  auto fields = SplitWords(std::string_view(stat).substr(close + 1));
  // After the comm: field 3 (state) is fields[0], so field 22 is fields[19].
  if (fields.size() < 20 || fields[0] == "Z" || fields[0] == "X") return std::nullopt;
  return TraceRun{pid, ParseUnsigned(fields[19])};
}

std::string InstanceName(int pid, unsigned part) {
  return std::string(kInstancePrefix) + std::to_string(pid) + (part ? "-" + std::to_string(part) : "");
}

}  // namespace kprobectl
