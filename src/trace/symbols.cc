// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>
#include <fstream>
#include <sstream>

#include "kprobectl/strings.h"
#include "kprobectl/trace_symbols.h"

namespace kprobectl {

KernelSymbols KernelSymbols::Parse(const std::string& kallsyms) {
  KernelSymbols out;
  for (const std::string& line : SplitLines(kallsyms)) {
    // "ffffffff81000000 T _text [module]"
    auto words = SplitWords(line);
    if (words.size() < 3) continue;
    char type = static_cast<char>(std::tolower(static_cast<unsigned char>(words[1][0])));
    if (type != 't' && type != 'w') continue;
    auto address = ParseUnsigned("0x" + words[0]);
    if (!address || *address == 0) continue;
    // A module's symbol: "foo\t[ext4]", named as the kernel's %pS names it.
    std::string name = words[2];
    if (words.size() > 3 && words[3].starts_with('[')) name += " " + words[3];
    out.symbols_.emplace_back(*address, std::move(name));
  }
  std::sort(out.symbols_.begin(), out.symbols_.end());
  return out;
}

KernelSymbols KernelSymbols::FromFile(const std::string& path) {
  if (path.empty()) return {};
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return Parse(text.str());
}

std::string KernelSymbols::Lookup(uint64_t address) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), std::make_pair(address, std::string("\xff")));
  if (it == symbols_.begin()) return {};
  --it;
  size_t module = it->second.find(' ');
  if (module == std::string::npos) return it->second + "+" + Hex(address - it->first);
  return it->second.substr(0, module) + "+" + Hex(address - it->first) + it->second.substr(module);
}

const std::string& CommCache::Lookup(int pid) {
  if (last_comm_ && pid == last_pid_) return *last_comm_;
  last_pid_ = pid;
  last_comm_ = &Find(pid);  // map nodes stay where they are
  return *last_comm_;
}

const std::string& CommCache::Find(int pid) {
  auto it = comms_.find(pid);
  if (it != comms_.end()) return it->second;
  if (!loaded_cmdlines_) {
    // saved_cmdlines: "PID COMM" for the tasks the tracer has seen.
    loaded_cmdlines_ = true;
    if (auto text = root_.Read("saved_cmdlines"))
      for (const std::string& line : SplitLines(*text)) {
        size_t space = line.find(' ');
        auto p = ParseUnsigned(std::string_view(line).substr(0, space));
        if (p && space != std::string::npos) comms_[static_cast<int>(*p)] = line.substr(space + 1);
      }
    it = comms_.find(pid);
    if (it != comms_.end()) return it->second;
  }
  std::ifstream in(proc_ + "/" + std::to_string(pid) + "/comm");
  std::string comm;
  if (!std::getline(in, comm) || comm.empty()) comm = "<...>";
  return comms_[pid] = comm;
}

}  // namespace kprobectl
