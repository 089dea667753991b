// SPDX-License-Identifier: GPL-2.0-or-later
//
// error_log (Linux 5.4+) holds the last few errors of tracing commands:
//   [  178.368567] trace_uprobe: error: Invalid fetch argument
//     Command: p:tst/a /tmp/my-app:0x1139 $arg1
//                                         ^
// We find our entry by its command text rather than by position, because
// other writers may log in between and the log is a small ring.
#include "kprobectl/probe_events.h"
#include "kprobectl/strings.h"

namespace kprobectl {

std::optional<std::string> FindErrorLogEntry(std::string_view error_log, std::string_view command) {
  auto lines = SplitLines(error_log);
  std::optional<std::string> found;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    std::string_view header = lines[i];
    size_t error_at = header.find(" error: ");
    if (!header.starts_with("[") || error_at == std::string_view::npos) continue;
    std::string_view cmd_line = lines[i + 1];
    size_t cmd_at = cmd_line.find("Command: ");
    if (cmd_at == std::string_view::npos) continue;
    std::string_view logged = cmd_line.substr(cmd_at + 9);
    if (Trim(logged) != Trim(command)) continue;
    std::string entry(header.substr(error_at + 8));
    entry += "\n    " + std::string(logged);
    if (i + 2 < lines.size() && Trim(lines[i + 2]) == "^") {
      size_t caret = lines[i + 2].find('^');
      size_t column = caret >= cmd_at + 9 ? caret - (cmd_at + 9) : 0;
      entry += "\n    " + std::string(column, ' ') + "^";
    }
    found = entry;
  }
  return found;
}

}  // namespace kprobectl
