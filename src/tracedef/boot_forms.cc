// SPDX-License-Identifier: GPL-2.0-or-later
//
// The kernel reads boot-time kprobes in two places, both only kprobes:
// setup_boot_kprobe_events() (trace_kprobe.c) splits kprobe_event= at ';',
// turns every ',' into a blank and creates each line as kprobe_events would
// (then enables them all); trace_boot_add_kprobe_event() (trace_boot.c)
// makes "p:kprobes/EVENT" followed by each of the node's "probes" values.
// perf probe --bootconfig (tools/perf/util/probe-event.c, 6.1) prints
// ".probe =", a key the kernel does not read, and a return probe's place
// without its %return: here the key is "probes" and a return probe's place
// is SYMBOL%return.
#include "kprobectl/boot_forms.h"

namespace kprobectl {

namespace {

Result<void> RequireKprobe(const TraceEventDef& def) {
  KP_TRY_VOID(RequireBootKind(def.kind));
  if (def.type != ProbeType::kProbe)
    return Fail("'" + def.FullName() + "' is " +
                    (def.type == ProbeType::kFprobe       ? std::string("an fprobe")
                     : def.type == ProbeType::kTracepoint ? std::string("a tracepoint probe")
                                                          : std::string("an event probe")) +
                    ": the kernel defines only kprobes at boot (kprobe_event= and bootconfig's "
                    "ftrace.event.kprobes)",
                "write it as a kprobe (leave out --fprobe), or add it once the system is up");
  return {};
}

// The place and arguments as one kprobe_events line has them after its name.
std::string PlaceAndArgs(const TraceEventDef& def, bool return_suffix) {
  std::string out = FormatTarget(def.target);
  if (return_suffix && def.retprobe) {
    // "SYMBOL+0%return": the kernel takes a return probe's place so.
    if (out.ends_with("+0")) out.resize(out.size() - 2);
    out += "%return";
  }
  for (const FetchArg& arg : def.args) out += " " + FormatFetchArg(arg);
  return out;
}

}  // namespace

Result<void> RequireBootKind(ProbeKind kind) {
  if (kind == ProbeKind::kUser)
    return Fail(
        "user-space probes cannot be defined at boot: the kernel defines only kprobes then (kprobe_event= "
        "and bootconfig's ftrace.event.kprobes), before any program runs",
        "add them once the system is up: kprobectl -x BINARY add ...");
  return {};
}

Result<std::string> FormatBootconfig(const std::vector<TraceEventDef>& defs, std::vector<std::string>* notes) {
  std::string out;
  for (const TraceEventDef& def : defs) {
    KP_TRY_VOID(RequireKprobe(def));
    if (def.maxactive)
      return Fail("'" + def.FullName() + "' has a maxactive (--maxactive), which a bootconfig cannot say",
                  "use the kernel command line's form (--cmdline), or leave out --maxactive");
    if (notes && def.group != "kprobes")
      notes->push_back("the group of " + def.FullName() + " is kprobes at boot: kprobes:" + def.event);
    out += "ftrace.event.kprobes." + def.event + ".probes = '" + PlaceAndArgs(def, true) + "'\n";
  }
  return out;
}

Result<std::string> FormatKprobeEventParameter(const std::vector<TraceEventDef>& defs) {
  std::string out = "kprobe_event=";
  for (size_t i = 0; i < defs.size(); ++i) {
    const TraceEventDef& def = defs[i];
    KP_TRY_VOID(RequireKprobe(def));
    for (const FetchArg& arg : def.args) {
      std::string text = FormatFetchArg(arg);
      if (text.find_first_of(", ;\t") != std::string::npos)
        return Fail("the argument '" + text + "' of " + def.FullName() +
                        " holds a comma, a blank or a ';', which kprobe_event= cannot carry (it turns commas into "
                        "blanks and splits at ';')",
                    "use the bootconfig form (--bootconfig), or another argument");
    }
    std::string line = FormatDefinition(def);
    for (char& c : line)
      if (c == ' ') c = ',';
    out += (i ? ";" : "") + line;
  }
  if (out.size() + 1 > kKernelCommandLineSize)
    return Fail("kprobe_event= would take " + std::to_string(out.size()) +
                    " characters; the kernel's command line "
                    "holds " +
                    std::to_string(kKernelCommandLineSize - 1),
                "define fewer probes at boot, or use the bootconfig form (--bootconfig)");
  return out + "\n";
}

}  // namespace kprobectl
