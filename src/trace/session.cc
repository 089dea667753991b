// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>

#include "kprobectl/strings.h"
#include "kprobectl/trace_session.h"

namespace kprobectl {

Result<std::unique_ptr<TraceSession>> TraceSession::Create(const TracefsDir& root, std::string name,
                                                           std::function<void(std::string_view)> log) {
  if (!root.Exists("instances"))
    return Fail("this kernel's tracefs has no instances directory (Linux 3.15 and later have it)");
  if (log) log("mkdir " + root.PathOf("instances/" + name));
  auto made = root.MakeDirectory("instances/" + name);
  if (!made) return std::unexpected(made.error());
  return std::unique_ptr<TraceSession>(new TraceSession(root, std::move(name), std::move(log)));
}

TraceSession::~TraceSession() { (void)Close(); }

Result<void> TraceSession::Write(const std::string& file, std::string_view value) {
  if (log_) log_("write " + root_.PathOf(Path(file)) + ": " + std::string(value));
  return root_.Write(Path(file), value);
}

Result<void> TraceSession::SetBufferSizeKb(unsigned kb) {
  auto result = Write("buffer_size_kb", std::to_string(kb));
  if (!result)
    return Fail("cannot set the buffer size to " + std::to_string(kb) + " KB per CPU: " + result.error().message);
  return {};
}

Result<uint64_t> TraceSession::BufferSizeKb() const {
  auto text = root_.Read(Path("buffer_size_kb"));
  if (!text) return std::unexpected(text.error());
  // "1408", or "7 (expanded: 1408)" while the kernel has not grown it yet.
  std::string_view value = Trim(*text);
  if (size_t at = value.find("expanded: "); at != std::string_view::npos) value = value.substr(at + 10);
  auto kb = ParseUnsigned(value.substr(0, value.find_first_not_of("0123456789")));
  if (!kb) return Fail("cannot read the ring buffer's size: '" + std::string(value) + "'");
  return *kb;
}

Result<void> TraceSession::SetPid(int pid) {
  auto result = Write("set_event_pid", std::to_string(pid));
  if (!result) return Fail("cannot filter on pid " + std::to_string(pid) + ": " + result.error().message);
  return {};
}

Result<void> TraceSession::FollowPid(int pid) {
  KP_TRY_VOID(SetPid(pid));
  if (!root_.Exists(Path("options/event-fork")))
    return Fail("this kernel cannot follow a command's children (no options/event-fork, Linux 4.7)",
                "trace the whole system with -a");
  auto result = Write("options/event-fork", "1");
  if (!result) return Fail("cannot follow the command's children: " + result.error().message);
  return {};
}

void TraceSession::ExcludePid(int pid) {
  if (root_.Exists(Path("set_event_notrace_pid"))) (void)Write("set_event_notrace_pid", std::to_string(pid));
}

Result<void> TraceSession::SetFilter(const std::string& event, const std::string& expression) {
  std::string file = "events/" + event + "/filter";
  auto result = Write(file, expression);
  if (result) return {};
  // The kernel explains a rejected filter in the filter file itself.
  auto explanation = root_.Read(Path(file));
  std::string why = explanation ? std::string(Trim(*explanation)) : result.error().message;
  return Fail(
      "the kernel rejected the filter '" + expression + "' for " + event + ":\n    " + Join(SplitLines(why), "\n    "),
      "filters compare the event's fields: e.g. 'a > 5 && b == 3', or 'name ~ \"abc*\"' for strings");
}

Result<void> TraceSession::Enable(const std::string& event) {
  KP_TRY_VOID(Write("events/" + event + "/enable", "1"));
  enabled_.push_back(event);
  return {};
}

Result<void> TraceSession::Disable(const std::string& event) {
  auto it = std::find(enabled_.begin(), enabled_.end(), event);
  if (it == enabled_.end()) return {};
  KP_TRY_VOID(Write("events/" + event + "/enable", "0"));
  enabled_.erase(it);
  return {};
}

Result<void> TraceSession::RemoveTrigger(const std::string& event, const std::string& trigger) {
  auto it = std::find(triggers_.begin(), triggers_.end(), std::pair(event, trigger));
  if (it == triggers_.end()) return {};
  KP_TRY_VOID(TriggerCommand(event, "!" + trigger));
  triggers_.erase(it);
  return {};
}

Result<void> TraceSession::AddTrigger(const std::string& event, const std::string& trigger) {
  KP_TRY_VOID(TriggerCommand(event, trigger));
  triggers_.emplace_back(event, trigger);
  return {};
}

Result<void> TraceSession::AddSyntheticEvent(const std::string& name, const std::string& fields) {
  if (log_) log_("append " + root_.PathOf("synthetic_events") + ": " + name + " " + fields);
  auto added = root_.Append("synthetic_events", name + " " + fields);
  if (!added)
    return Fail("the kernel rejected the synthetic event '" + name + " " + fields + "': " + added.error().message);
  synthetic_.push_back(name);
  return {};
}

Result<void> TraceSession::TriggerCommand(const std::string& event, const std::string& command) {
  // Appended: opened with O_TRUNC, a trigger file drops every trigger
  // (event_trigger_regex_open).
  std::string file = Path("events/" + event + "/trigger");
  if (log_) log_("append " + root_.PathOf(file) + ": " + command);
  auto written = root_.Append(file, command);
  if (written) return {};
  std::string why = written.error().message;
  // The kernel says why in the instance's error_log (Linux 5.4), else the global one.
  for (const std::string& log : {Path("error_log"), std::string("error_log")}) {
    auto text = root_.Read(log);
    if (text && !Trim(*text).empty()) {
      auto lines = SplitLines(*text);
      why += "; the kernel's error_log:\n    " +
             Join({lines.end() - std::min<ptrdiff_t>(3, std::ssize(lines)), lines.end()}, "\n    ");
      break;
    }
  }
  return Fail("the kernel rejected the trigger '" + command + "' on " + event + ": " + why);
}

Result<void> TraceSession::SetOption(const std::string& name, bool on) {
  return Write("options/" + name, on ? "1" : "0");
}

std::vector<TraceSession::CpuStats> TraceSession::Stats() const {
  std::vector<CpuStats> out;
  for (int cpu = 0;; ++cpu) {
    auto text = root_.Read(Path("per_cpu/cpu" + std::to_string(cpu) + "/stats"));
    if (!text) break;
    CpuStats stats;
    for (const std::string& line : SplitLines(*text)) {
      size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string key = line.substr(0, colon);
      auto value = ParseUnsigned(Trim(std::string_view(line).substr(colon + 1)));
      if (!value) continue;
      if (key == "overrun") stats.overrun = *value;
      if (key == "dropped events") stats.dropped = *value;
    }
    out.push_back(stats);
  }
  return out;
}

Result<void> TraceSession::Close() {
  if (closed_) return {};
  closed_ = true;
  Result<void> result;
  for (auto it = triggers_.rbegin(); it != triggers_.rend(); ++it) {
    auto removed = TriggerCommand(it->first, "!" + it->second);
    if (!removed && result) result = removed;
  }
  for (const std::string& name : synthetic_) {
    if (log_) log_("append " + root_.PathOf("synthetic_events") + ": !" + name);
    auto removed = root_.Append("synthetic_events", "!" + name);
    if (!removed && result) result = removed;
  }
  for (const std::string& event : enabled_) {
    auto disabled = Write("events/" + event + "/enable", "0");
    if (!disabled && result) result = disabled;
  }
  if (log_) log_("rmdir " + root_.PathOf("instances/" + name_));
  auto removed = root_.RemoveDirectory("instances/" + name_);
  if (!removed && result) result = removed;
  return result;
}

}  // namespace kprobectl
