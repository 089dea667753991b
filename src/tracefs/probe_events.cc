// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/probe_events.h"

#include "kprobectl/strings.h"

namespace kprobectl {

std::string_view EventsFile(ProbeKind kind) { return kind == ProbeKind::kKernel ? "kprobe_events" : "uprobe_events"; }

std::string_view ProfileFile(ProbeKind kind) {
  return kind == ProbeKind::kKernel ? "kprobe_profile" : "uprobe_profile";
}

std::map<std::string, ProfileEntry> ParseProfile(std::string_view text, ProbeKind kind) {
  // kprobe_profile: "  probe/ev    HITS    MISSES"
  // uprobe_profile: "  /path/bin probe_x/ev    HITS"
  std::map<std::string, ProfileEntry> out;
  for (const std::string& line : SplitLines(text)) {
    auto words = SplitWords(line);
    size_t name_at = kind == ProbeKind::kKernel ? 0 : 1;
    if (words.size() < name_at + 2) continue;
    ProfileEntry entry;
    auto hits = ParseUnsigned(words[name_at + 1]);
    if (!hits) continue;
    entry.hits = *hits;
    if (kind == ProbeKind::kKernel && words.size() > 2) entry.misses = ParseUnsigned(words[2]);
    out[words[name_at]] = entry;
  }
  return out;
}

const ProfileEntry* FindProfileEntry(const std::map<std::string, ProfileEntry>& profile, const TraceEventDef& def) {
  auto it = profile.find(def.Path());
  if (it == profile.end()) it = profile.find(def.event);
  return it == profile.end() ? nullptr : &it->second;
}

namespace {

// A line of the kernel's: read whole, or else its name only (a line that
// cannot be read must not hide the others from list and del).
TraceEventDef ReadBack(const std::string& line, ProbeKind kind) {
  if (auto def = ParseDefinition(line, kind)) return *def;
  TraceEventDef def;
  def.kind = kind;
  def.unread = line;
  std::string_view head =
      SplitWords(line).empty() ? std::string_view() : std::string_view(line).substr(0, line.find(' '));
  size_t colon = head.find(':');
  size_t slash = head.find('/', colon == std::string_view::npos ? 0 : colon);
  if (colon != std::string_view::npos && slash != std::string_view::npos) {
    def.group = std::string(head.substr(colon + 1, slash - colon - 1));
    def.event = std::string(head.substr(slash + 1));
  }
  if (!head.empty() && (head[0] == 'f' || head[0] == 't' || head[0] == 'e'))
    def.type = head[0] == 'f' ? ProbeType::kFprobe : head[0] == 't' ? ProbeType::kTracepoint : ProbeType::kEventProbe;
  return def;
}

}  // namespace

Result<std::vector<TraceEventDef>> ProbeEvents::List() const {
  std::vector<TraceEventDef> defs;
  for (ProbeKind kind : {ProbeKind::kKernel, ProbeKind::kUser}) {
    if (!dir_.Exists(EventsFile(kind))) continue;
    std::string text = KP_TRY(dir_.Read(EventsFile(kind)));
    for (const std::string& line : SplitLines(text)) {
      if (Trim(line).empty()) continue;
      defs.push_back(ReadBack(line, kind));
    }
  }
  // fprobes, tracepoint probes and event probes are only in
  // dynamic_events, which also repeats the kprobes and uprobes above and
  // holds synthetic events, which are not probes.
  if (dir_.Exists("dynamic_events")) {
    std::string text = KP_TRY(dir_.Read("dynamic_events"));
    for (const std::string& line : SplitLines(text))
      if (line.starts_with("f") || line.starts_with("t:") || line.starts_with("e:"))
        defs.push_back(ReadBack(line, ProbeKind::kKernel));
  }
  return defs;
}

Result<std::set<std::string>> ProbeEvents::Names() const {
  std::set<std::string> names;
  for (const TraceEventDef& def : KP_TRY(List())) names.insert(def.Path());
  return names;
}

Result<void> ProbeEvents::WriteLine(std::string_view file, const std::string& line) const {
  if (log_) log_(std::string("write ") + dir_.PathOf(file) + ": " + line);
  return dir_.Append(file, line + "\n");
}

Result<void> ProbeEvents::Add(const std::vector<TraceEventDef>& defs) const {
  // A return's argument to be fetched at its entry (FetchArg::at_entry) is
  // PlanTrace's to move there: written in the return's line, the kernel
  // would read the register when the function returns, another value.
  for (const TraceEventDef& def : defs)
    for (const FetchArg& arg : def.args)
      if (arg.at_entry)
        return Fail("internal error: " + def.FullName() + "'s '" + arg.name +
                        "' is to be fetched at the function's entry, not by its return probe; nothing was written",
                    "report this: kprobectl must pair it with an entry probe of its own");
  std::vector<const TraceEventDef*> written;
  for (const TraceEventDef& def : defs) {
    std::string line = FormatDefinition(def);
    auto result = WriteLine(EventsFileOf(def), line);
    if (result) {
      written.push_back(&def);
      continue;
    }
    Error error{"the kernel rejected the probe definition\n    " + line, ""};
    auto log = dir_.Exists("error_log") ? dir_.Read("error_log") : Result<std::string>(std::string());
    auto entry = log ? FindErrorLogEntry(*log, line) : std::nullopt;
    if (entry) {
      error.message = "the kernel rejected the probe definition: " + *entry;
    } else {
      error.message += "\n  (" + result.error().message + ")";
    }
    error.hint = result.error().hint;
    // All or nothing: take back what this call wrote, newest first.
    std::vector<std::string> leftovers;
    for (auto it = written.rbegin(); it != written.rend(); ++it)
      if (!Remove(**it)) leftovers.push_back((*it)->FullName());
    if (!leftovers.empty())
      error.hint =
          "could not remove the events already added: " + Join(leftovers, ", ") + "; remove them with 'kprobectl del'";
    return std::unexpected(error);
  }
  return {};
}

Result<void> ProbeEvents::Remove(const TraceEventDef& def) const {
  auto result = WriteLine(EventsFileOf(def), FormatDeletion(def.group, def.event));
  if (!result) {
    Error error = result.error();
    error.message = "cannot remove " + def.FullName() + ": " + error.message;
    if (error.message.find("busy") != std::string::npos)
      error.hint = "the event is in use, perhaps by perf or another tracing session; stop it first";
    return std::unexpected(error);
  }
  return {};
}

Result<std::vector<std::string>> ProbeEvents::EnabledIn(const TraceEventDef& def) const {
  std::vector<std::string> where;
  std::string event_dir = "events/" + def.Path() + "/enable";
  std::vector<std::string> prefixes = {""};
  if (dir_.Exists("instances"))
    for (const std::string& name : KP_TRY(dir_.List("instances"))) prefixes.push_back("instances/" + name + "/");
  for (const std::string& prefix : prefixes) {
    if (!dir_.Exists(prefix + event_dir)) continue;
    std::string value = KP_TRY(dir_.Read(prefix + event_dir));
    // "1", or "1*" / "0*" when enabled by a soft trigger or a perf user.
    if (!Trim(value).empty() && (Trim(value)[0] == '1' || Trim(value).ends_with('*'))) where.push_back(prefix);
  }
  return where;
}

Result<void> ProbeEvents::Disable(const TraceEventDef& def, const std::vector<std::string>& where) const {
  for (const std::string& prefix : where) {
    std::string path = prefix + "events/" + def.Path() + "/enable";
    if (log_) log_("write " + dir_.PathOf(path) + ": 0");
    KP_TRY_VOID(dir_.Write(path, "0"));
  }
  return {};
}

Result<std::map<std::string, ProfileEntry>> ProbeEvents::Profile(ProbeKind kind) const {
  if (!dir_.Exists(ProfileFile(kind))) return std::map<std::string, ProfileEntry>{};
  return ParseProfile(KP_TRY(dir_.Read(ProfileFile(kind))), kind);
}

}  // namespace kprobectl
