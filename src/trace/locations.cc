// SPDX-License-Identifier: GPL-2.0-or-later
#include <fstream>
#include <sstream>

#include "kprobectl/cxx_names.h"
#include "kprobectl/find_binary.h"
#include "kprobectl/strings.h"
#include "kprobectl/trace_locations.h"

namespace kprobectl {

std::vector<ProcessMaps::Mapping> ProcessMaps::Parse(std::string_view text) {
  // "55d0c6a00000-55d0c6a02000 r-xp 00002000 fe:01 1234   /usr/bin/cat"
  std::vector<Mapping> out;
  for (const std::string& line : SplitLines(text)) {
    auto words = SplitWords(line);
    // Files, and the page of uprobes' return trampoline: while a return
    // probe is pending, a frame's return address points there.
    if (words.size() < 6 || words[5].empty() || (words[5][0] != '/' && words[5] != kUprobesPage)) continue;
    size_t dash = words[0].find('-');
    auto start = ParseUnsigned("0x" + words[0].substr(0, dash));
    auto end = dash == std::string::npos ? std::nullopt : ParseUnsigned("0x" + words[0].substr(dash + 1));
    auto offset = ParseUnsigned("0x" + words[2]);
    if (!start || !end || !offset) continue;
    // The path may hold blanks: it is the rest of the line from the sixth word.
    std::string path = line.substr(line.find(words[5], line.find(words[4]) + words[4].size()));
    if (path.ends_with(" (deleted)")) continue;
    out.push_back({*start, *end, *offset, path});
  }
  return out;
}

std::optional<ProcessMaps::Place> ProcessMaps::Find(int pid, uint64_t address) {
  for (bool fresh : {false, true}) {
    auto it = maps_.find(pid);
    if (it == maps_.end() || fresh) {
      // A miss reads the file again: the process may have mapped more since.
      std::ifstream in(proc_ + "/" + std::to_string(pid) + "/maps");
      std::stringstream text;
      text << in.rdbuf();
      auto parsed = Parse(text.str());
      if (parsed.empty() && it != maps_.end()) return std::nullopt;  // gone: keep what we knew
      it = maps_.insert_or_assign(pid, std::move(parsed)).first;
    }
    for (const Mapping& m : it->second)
      if (address >= m.start && address < m.end) return Place{m.path, address - m.start + m.offset};
  }
  return std::nullopt;
}

void ProcessMaps::RememberTree(int pid, int depth) {
  std::ifstream in(proc_ + "/" + std::to_string(pid) + "/maps");
  std::stringstream text;
  text << in.rdbuf();
  auto parsed = Parse(text.str());
  if (!parsed.empty()) maps_.insert_or_assign(pid, std::move(parsed));
  if (depth > 16) return;
  // The children of each of its threads (Linux 3.5+ with CONFIG_PROC_CHILDREN).
  std::ifstream children(proc_ + "/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  for (int child; children >> child;) RememberTree(child, depth + 1);
}

const ElfImage* EventLocations::Image(const std::string& path) {
  auto [it, fresh] = images_.try_emplace(path);
  if (fresh)
    if (auto image = ElfImage::Open(path)) it->second = std::make_unique<ElfImage>(std::move(*image));
  return it->second.get();
}

std::string EventLocations::NameIn(const std::string& path, uint64_t file_offset) {
  const ElfImage* image = Image(path);
  if (!image) return {};
  auto vaddr = image->VirtualAddress(file_offset);
  const ElfSymbol* f = vaddr ? image->FunctionAt(*vaddr) : nullptr;
  return f ? DisplaySymbol(f->name) + "+" + Hex(*vaddr - f->value) : std::string();
}

std::optional<EventLocations::Loaded> EventLocations::FileAt(int pid, uint64_t address, const EventPlan* plan,
                                                             uint64_t probe_ip) {
  if (auto place = maps_.Find(pid, address)) {
    if (place->path == kUprobesPage) return Loaded{place->path, 0};
    const ElfImage* image = Image(place->path);
    auto vaddr = image ? image->VirtualAddress(place->file_offset) : std::nullopt;
    if (vaddr) return Loaded{place->path, address - *vaddr};
  }
  if (!plan || plan->file.empty()) return std::nullopt;
  const ElfImage* image = Image(plan->file);
  uint64_t bias = probe_ip - plan->file_vaddr;
  if (image)
    for (const LoadSegment& seg : image->segments())
      if (address - bias >= seg.vaddr && address - bias < seg.vaddr + seg.memsz) return Loaded{plan->file, bias};
  return std::nullopt;
}

const ElfSymbol* EventLocations::FunctionAt(const std::string& path, uint64_t vaddr) {
  const ElfImage* image = Image(path);
  if (!image) return nullptr;
  if (const ElfSymbol* f = image->FunctionAt(vaddr)) return f;
  auto [it, fresh] = debug_images_.try_emplace(path);
  if (fresh)
    for (const std::string& candidate : SeparateDebuginfoCandidates("", image->build_id()))
      if (auto debug = ElfImage::Open(candidate)) {
        it->second = std::make_unique<ElfImage>(std::move(*debug));
        break;
      }
  return it->second ? it->second->FunctionAt(vaddr) : nullptr;
}

std::string EventLocations::FrameName(const Loaded& loaded, uint64_t address) {
  if (loaded.path == kUprobesPage) return "[uretprobe trampoline] (a return probe holds this frame's return address)";
  uint64_t vaddr = address - loaded.bias;
  const ElfSymbol* f = FunctionAt(loaded.path, vaddr);
  return (f ? DisplaySymbol(f->name) + "+" + Hex(vaddr - f->value) : Hex(vaddr)) + " (" + loaded.path + ")";
}

bool EventLocations::UnderReturnProbe(const Loaded& loaded, uint64_t address) {
  const ElfSymbol* f = FunctionAt(loaded.path, address - loaded.bias);
  return f && return_probed_.contains({loaded.path, f->value});
}

std::string EventLocations::UserFrame(int pid, uint64_t address) {
  auto loaded = FileAt(pid, address);
  return loaded ? FrameName(*loaded, address) : std::string();
}

void EventLocations::Locate(const TraceEventDef& def, EventPlan& plan) {
  const ProbeTarget& t = def.target;
  if (def.type == ProbeType::kEventProbe) {
    plan.location = t.module + "." + t.symbol;
    return;
  }
  if (t.kind == ProbeTarget::kSymbol) {
    plan.location = def.retprobe ? t.symbol : t.symbol + "+" + Hex(t.offset);
    return;
  }
  if (t.kind == ProbeTarget::kAddress) {
    plan.location = Hex(t.address);
    return;
  }
  plan.location = Hex(t.offset);
  const ElfImage* image = Image(t.path);
  std::optional<uint64_t> vaddr = image ? image->VirtualAddress(t.offset) : std::nullopt;
  // A USDT marker's site is named by the marker.
  if (vaddr && !def.retprobe)
    for (const SdtNote& note : image->sdt_notes())
      if (note.address == *vaddr) {
        plan.location = "sdt_" + note.provider + ":" + note.name;
        return;
      }
  if (vaddr) {
    plan.file = t.path;
    plan.file_vaddr = *vaddr;
  }
  const ElfSymbol* f = vaddr ? image->FunctionAt(*vaddr) : nullptr;
  if (!f) return;
  std::string name = DisplaySymbol(f->name);
  plan.location = def.retprobe ? name : name + "+" + Hex(*vaddr - f->value);
  if (!def.retprobe) return;
  return_probed_.insert({t.path, f->value});
  uint64_t func_vaddr = *vaddr;
  plan.caller = [this, image, func_vaddr](int pid, uint64_t func_ip, uint64_t ret_ip) -> std::string {
    // The probed file's load bias, from where its function ran: a caller
    // in the same file's code is named from the file alone, even after
    // the process is gone.
    uint64_t bias = func_ip - func_vaddr;
    uint64_t caller = ret_ip - bias;
    for (const LoadSegment& seg : image->segments())
      if (seg.executable && caller >= seg.vaddr && caller < seg.vaddr + seg.memsz) {
        const ElfSymbol* c = image->FunctionAt(caller);
        return c ? DisplaySymbol(c->name) + "+" + Hex(caller - c->value) : std::string();
      }
    // Another file's code (the program calling a library): where the
    // process has it mapped, while it lives.
    auto place = maps_.Find(pid, ret_ip);
    if (!place) return {};
    return NameIn(place->path, place->file_offset);
  };
}

}  // namespace kprobectl
