// SPDX-License-Identifier: GPL-2.0-or-later
//
// list and del: both select events by [GROUP:]EVENT globs over what the
// kernel has in kprobe_events and uprobe_events.
#include <unistd.h>

#include <map>

#include "commands.h"
#include "kprobectl/cxx_names.h"
#include "kprobectl/glob.h"
#include "kprobectl/json_object.h"
#include "kprobectl/kernel_image.h"
#include "kprobectl/probe_events.h"
#include "kprobectl/resolve.h"
#include "kprobectl/strings.h"

namespace kprobectl::cli {

namespace {

struct EventPattern {
  std::string group = "*";
  std::string event;
};

EventPattern ParsePattern(std::string_view text) {
  EventPattern p;
  size_t sep = text.find_first_of(":/");
  if (sep == std::string_view::npos) {
    p.event = std::string(text);
  } else {
    p.group = std::string(text.substr(0, sep));
    p.event = std::string(text.substr(sep + 1));
  }
  return p;
}

bool ModuleLoaded(const KernelEnv& env, const std::string& module) {
  return access((env.root + env.sys_module + "/" + module).c_str(), F_OK) == 0;
}

bool Matches(const EventPattern& p, const TraceEventDef& def) {
  return GlobMatch(p.group, def.group) && GlobMatch(p.event, def.event);
}

// list --json: one event's object.
std::string ListedJson(const TraceEventDef& def, const std::string& where, const ProfileEntry* entry, bool waiting) {
  static constexpr const char* kTypes[] = {"probe", "fprobe", "tracepoint", "event"};
  std::vector<std::string> args;
  for (const FetchArg& a : def.args) {
    JsonObject arg;
    arg.String("name", a.name).String("fetch", a.fetch);
    if (!a.type.empty()) arg.String("type", a.type);
    args.push_back(arg.str());
  }
  JsonObject out;
  out.String("event", def.FullName())
      .String("group", def.group)
      .String("name", def.event)
      .String("side", def.kind == ProbeKind::kKernel ? "kernel" : "user")
      .String("type", kTypes[static_cast<int>(def.type)])
      .Bool("return", def.retprobe)
      .String("on", where)
      .Raw("args", JsonArray(args))
      .String("definition", FormatDefinition(def));
  if (def.target.kind == ProbeTarget::kFile) out.String("file", def.target.path);
  if (!def.target.module.empty() && def.type != ProbeType::kEventProbe) out.String("module", def.target.module);
  if (entry) out.Number("hits", entry->hits);
  if (entry && entry->misses && def.retprobe) out.Number("misses", *entry->misses);
  if (waiting) out.Bool("waiting_for_module", true);
  return out.str();
}

}  // namespace

std::string WhereDefined(const TraceEventDef& def, const ElfImage* image, const std::string& source) {
  std::string where;
  const ProbeTarget& t = def.target;
  if (!source.empty()) {
    where = source;
    if (t.kind == ProbeTarget::kFile) where += " in " + t.path;
  } else if (t.kind == ProbeTarget::kFile) {
    where = Hex(t.offset);
    if (image) {
      if (auto vaddr = image->VirtualAddress(t.offset)) {
        where = Hex(*vaddr);
        if (const ElfSymbol* f = image->FunctionAt(*vaddr))
          where = DisplaySymbol(f->name) + (*vaddr > f->value ? "+" + std::to_string(*vaddr - f->value) : "");
      }
    }
    if (def.retprobe) where += "%return";
    where += " in " + t.path;
  } else if (def.type == ProbeType::kEventProbe) {
    where = t.module + ":" + t.symbol;
  } else if (t.kind == ProbeTarget::kSymbol) {
    where = t.symbol + (t.offset ? "+" + std::to_string(t.offset) : "");
    if (def.retprobe) where += "%return";
    if (!t.module.empty()) where += " in " + t.module;
  } else {
    where = Hex(t.address) + (def.retprobe ? "%return" : "");
  }
  return where;
}

std::string DescribeDefinition(const TraceEventDef& def, const ElfImage* image, const std::string& source) {
  std::string out = "(on " + WhereDefined(def, image, source);
  if (!def.args.empty()) {
    out += " with";
    for (const FetchArg& arg : def.args) out += " " + (arg.name.empty() ? arg.fetch : arg.name);
  }
  return out + ")";
}

Result<void> RunList(const Options& options, const std::vector<std::string>& patterns, Streams io) {
  auto dir = KP_TRY(OpenTracefs(options));
  ProbeEvents events(*dir);
  std::vector<TraceEventDef> defs = KP_TRY(events.List());
  std::vector<EventPattern> parsed;
  for (const std::string& p : patterns) parsed.push_back(ParsePattern(p));
  // Images and their DWARF, by path, opened once; null when unreadable.
  struct Files {
    std::unique_ptr<ElfImage> image;
    std::unique_ptr<Debuginfo> debuginfo;
  };
  std::map<std::string, Files> files;
  auto open = [&](const std::string& path) -> Files& {
    auto [it, fresh] = files.try_emplace(path);
    if (fresh && !path.empty()) {
      if (auto image = ElfImage::Open(path)) it->second.image = std::make_unique<ElfImage>(std::move(*image));
      if (auto debuginfo = Debuginfo::Open(path)) it->second.debuginfo = std::move(*debuginfo);
    }
    return it->second;
  };
  std::string kernel_image = options.vmlinux;
  bool looked_for_kernel = !kernel_image.empty();
  std::map<std::string, ProfileEntry> profile;
  for (ProbeKind kind : {ProbeKind::kKernel, ProbeKind::kUser})
    if (auto p = events.Profile(kind)) profile.merge(*p);
  for (const TraceEventDef& def : defs) {
    bool selected = parsed.empty();
    for (const EventPattern& p : parsed) selected |= Matches(p, def);
    if (!selected) continue;
    if (!def.unread.empty()) {
      if (options.json)
        io.out << JsonObject().String("event", def.FullName()).String("unread", def.unread).str() << "\n";
      else
        io.out << "  " << def.FullName() << "\t(kprobectl cannot read this definition: " << def.unread << ")\n";
      continue;
    }
    const ElfImage* image = nullptr;
    std::string source;
    if (def.target.kind == ProbeTarget::kFile) {
      Files& f = open(def.target.path);
      image = f.image.get();
      source = SourceOfDefinition(def, image, f.debuginfo.get());
    } else if (def.type == ProbeType::kProbe || def.type == ProbeType::kFprobe) {
      if (!looked_for_kernel) {
        looked_for_kernel = true;
        auto found = FindKernelDebuginfo(options.env, options.force);  // the stage's look-up
        if (found) kernel_image = *found;
      }
      Files& f = open(kernel_image);
      source = SourceOfDefinition(def, f.image.get(), f.debuginfo.get());
    }
    const ProfileEntry* entry = FindProfileEntry(profile, def);
    // The kernel keeps a probe on a module it does not have, and arms it
    // when the module loads.
    bool waiting = def.kind == ProbeKind::kKernel && !def.target.module.empty() && def.type != ProbeType::kEventProbe &&
                   !ModuleLoaded(options.env, def.target.module);
    if (options.json) {
      io.out << ListedJson(def, WhereDefined(def, image, source), entry, waiting) << "\n";
      continue;
    }
    io.out << "  " << def.FullName() << "\t" << DescribeDefinition(def, image, source);
    if (entry) {
      io.out << "\t[hits " << entry->hits;
      if (entry->misses && def.retprobe) io.out << ", misses " << *entry->misses;
      io.out << "]";
    }
    if (waiting) io.out << "\t[waiting for module " << def.target.module << " to load]";
    io.out << "\n";
  }
  return {};
}

Result<void> RunDel(const Options& options, const std::vector<std::string>& patterns, Streams io) {
  auto dir = KP_TRY(OpenTracefs(options));
  auto log = [&](std::string_view line) {
    if (options.verbose) io.err << line << "\n";
  };
  KP_TRY_VOID(CleanLeftovers(*dir, options, io));
  ProbeEvents events(*dir, log);
  std::vector<TraceEventDef> defs = KP_TRY(events.List());
  // Select everything first, and check it all, before removing anything.
  std::vector<const TraceEventDef*> selected;
  for (const std::string& text : patterns) {
    EventPattern p = ParsePattern(text);
    bool any = false;
    for (const TraceEventDef& def : defs) {
      if (!Matches(p, def)) continue;
      any = true;
      if (std::find(selected.begin(), selected.end(), &def) == selected.end()) selected.push_back(&def);
    }
    if (!any) return Fail("no probe event matches '" + text + "'", "see the events with 'kprobectl list'");
  }
  std::vector<std::vector<std::string>> enabled;
  std::vector<std::string> busy;
  for (const TraceEventDef* def : selected) {
    enabled.push_back(KP_TRY(events.EnabledIn(*def)));
    if (!enabled.back().empty()) busy.push_back(def->FullName());
  }
  if (!busy.empty() && !options.force)
    return Fail("enabled, so not deleted: " + Join(busy, ", "),
                "stop the tracing session that uses them, or add -f to disable them first");
  for (size_t i = 0; i < selected.size(); ++i) {
    KP_TRY_VOID(events.Disable(*selected[i], enabled[i]));
    KP_TRY_VOID(events.Remove(*selected[i]));
    if (!options.quiet) io.err << "Removed event: " << selected[i]->FullName() << "\n";
  }
  return {};
}

}  // namespace kprobectl::cli
