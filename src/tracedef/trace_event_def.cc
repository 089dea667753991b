// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/trace_event_def.h"

#include <cctype>

#include "kprobectl/strings.h"

namespace kprobectl {

std::string FormatTarget(const ProbeTarget& t) {
  switch (t.kind) {
    case ProbeTarget::kSymbol:
      return (t.module.empty() ? "" : t.module + ":") + t.symbol + "+" + std::to_string(t.offset);
    case ProbeTarget::kAddress:
      return Hex(t.address);
    case ProbeTarget::kFile: {
      std::string out = t.path + ":" + Hex(t.offset);
      if (t.ref_ctr_offset) out += "(" + Hex(*t.ref_ctr_offset) + ")";
      return out;
    }
  }
  return {};
}

std::string FormatFetchArg(const FetchArg& arg) {
  std::string out;
  if (!arg.name.empty()) out = arg.name + "=";
  out += arg.fetch;
  if (!arg.type.empty()) out += ":" + arg.type;
  return out;
}

std::string_view EventsFileOf(const TraceEventDef& def) {
  if (def.type != ProbeType::kProbe) return "dynamic_events";
  return def.kind == ProbeKind::kKernel ? "kprobe_events" : "uprobe_events";
}

namespace {

// An fprobe's or tracepoint probe's target: a name, never an offset; an
// event probe's, the event as SYSTEM.EVENT.
std::string NamedTarget(const TraceEventDef& def) {
  if (def.type == ProbeType::kEventProbe) return def.target.module + "." + def.target.symbol;
  std::string out = (def.target.module.empty() ? "" : def.target.module + ":") + def.target.symbol;
  return def.type == ProbeType::kFprobe && def.retprobe ? out + "%return" : out;
}

}  // namespace

std::string FormatDefinition(const TraceEventDef& def) {
  std::string out;
  switch (def.type) {
    case ProbeType::kProbe:
      out = def.retprobe ? "r" : "p";
      break;
    case ProbeType::kFprobe:
      out = "f";
      break;
    case ProbeType::kTracepoint:
      out = "t";
      break;
    case ProbeType::kEventProbe:
      out = "e";
      break;
  }
  if (def.maxactive && def.retprobe) out += std::to_string(def.maxactive);
  out += ":" + def.Path() + " " + (def.type == ProbeType::kProbe ? FormatTarget(def.target) : NamedTarget(def));
  for (const FetchArg& arg : def.args) out += " " + FormatFetchArg(arg);
  return out;
}

std::string FormatDeletion(std::string_view group, std::string_view event) {
  return "-:" + std::string(group) + "/" + std::string(event);
}

Result<FetchArg> ParseFetchArg(std::string_view text) {
  FetchArg arg;
  size_t eq = 0;
  while (eq < text.size() && IsIdentChar(text[eq])) ++eq;
  if (eq > 0 && eq < text.size() && text[eq] == '=') {
    arg.name = std::string(text.substr(0, eq));
    text.remove_prefix(eq + 1);
  }
  // The type follows the last ':' outside parentheses and quotes.
  size_t colon = std::string_view::npos;
  int depth = 0;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') quoted = !quoted;
    if (quoted) continue;
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == ':' && depth == 0) colon = i;
  }
  arg.fetch = std::string(text.substr(0, colon));
  if (colon != std::string_view::npos) arg.type = std::string(text.substr(colon + 1));
  if (arg.fetch.empty()) return Fail("empty fetch argument in '" + std::string(text) + "'");
  if (colon != std::string_view::npos && arg.type.empty())
    return Fail("empty type after ':' in '" + std::string(text) + "'");
  return arg;
}

namespace {

Result<ProbeTarget> ParseTarget(std::string_view text, ProbeKind kind) {
  ProbeTarget t;
  auto bad = [&] { return Fail("invalid probe target '" + std::string(text) + "'"); };
  if (kind == ProbeKind::kUser) {
    t.kind = ProbeTarget::kFile;
    if (text.ends_with(')')) {
      size_t open = text.rfind('(');
      if (open == std::string_view::npos) return bad();
      auto ref = ParseUnsigned(text.substr(open + 1, text.size() - open - 2));
      if (!ref) return bad();
      t.ref_ctr_offset = ref;
      text = text.substr(0, open);
    }
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return bad();
    auto offset = ParseUnsigned(text.substr(colon + 1));
    if (!offset) return bad();
    t.path = std::string(text.substr(0, colon));
    t.offset = *offset;
    return t;
  }
  if (text.starts_with("0x")) {
    auto address = ParseUnsigned(text);
    if (!address) return bad();
    t.kind = ProbeTarget::kAddress;
    t.address = *address;
    return t;
  }
  if (size_t colon = text.find(':'); colon != std::string_view::npos) {
    t.module = std::string(text.substr(0, colon));
    text.remove_prefix(colon + 1);
    if (t.module.empty()) return bad();
  }
  size_t plus = text.find('+');
  t.symbol = std::string(text.substr(0, plus));
  if (plus != std::string_view::npos) {
    auto offset = ParseUnsigned(text.substr(plus + 1));
    if (!offset) return bad();
    t.offset = *offset;
  }
  // A symbol never starts with a digit (0x... is an address, above).
  if (t.symbol.empty() || std::isdigit(static_cast<unsigned char>(t.symbol[0]))) return bad();
  return t;
}

}  // namespace

Result<TraceEventDef> ParseDefinition(std::string_view line, ProbeKind kind) {
  TraceEventDef def;
  def.kind = kind;
  auto words = SplitWords(line);
  auto bad = [&](std::string why) {
    return Fail("cannot read the probe definition '" + std::string(line) + "': " + why);
  };
  if (words.size() < 2) return bad("expected a name and a target");
  std::string_view head = words[0];
  bool kernel_only = !head.empty() && (head[0] == 'f' || head[0] == 't' || head[0] == 'e');
  if (head.empty() || (head[0] != 'p' && head[0] != 'r' && !(kernel_only && kind == ProbeKind::kKernel)))
    return bad(kind == ProbeKind::kKernel ? "expected 'p', 'r', 'f', 't' or 'e'" : "expected 'p' or 'r'");
  def.type = head[0] == 'f'   ? ProbeType::kFprobe
             : head[0] == 't' ? ProbeType::kTracepoint
             : head[0] == 'e' ? ProbeType::kEventProbe
                              : ProbeType::kProbe;
  def.retprobe = head[0] == 'r';
  size_t colon = head.find(':');
  if (colon == std::string_view::npos) return bad("expected ':GROUP/EVENT'");
  if (colon > 1) {
    auto maxactive = ParseUnsigned(head.substr(1, colon - 1));
    if (!maxactive || *maxactive > UINT32_MAX || def.type == ProbeType::kTracepoint ||
        def.type == ProbeType::kEventProbe)
      return bad("invalid maxactive");
    def.maxactive = static_cast<unsigned>(*maxactive);
  }
  std::string_view name = head.substr(colon + 1);
  size_t slash = name.find('/');
  if (slash == std::string_view::npos) return bad("expected GROUP/EVENT");
  def.group = std::string(name.substr(0, slash));
  def.event = std::string(name.substr(slash + 1));
  std::string_view target = words[1];
  // Kernels since 5.x also take a "%return" suffix on the target for a
  // return probe; they print it back with the 'r' prefix.
  if (target.ends_with("%return")) {
    def.retprobe = true;
    target.remove_suffix(7);
  }
  if (def.type == ProbeType::kProbe) {
    def.target = KP_TRY(ParseTarget(target, kind));
  } else if (def.type == ProbeType::kEventProbe) {
    // SYSTEM.EVENT (the kernel prints it so; SYSTEM/EVENT is taken too).
    size_t dot = target.find_first_of("./");
    if (def.retprobe || dot == std::string_view::npos || dot == 0 || dot + 1 == target.size())
      return bad("an event probe names an event, SYSTEM.EVENT");
    def.target.module = std::string(target.substr(0, dot));
    def.target.symbol = std::string(target.substr(dot + 1));
    for (size_t i = 2; i < words.size(); ++i)
      if (words[i] == "if") return bad("an event probe with a filter ('if ...')");
  } else {
    if (size_t colon_at = target.find(':'); colon_at != std::string_view::npos) {
      def.target.module = std::string(target.substr(0, colon_at));
      target.remove_prefix(colon_at + 1);
    }
    if (target.empty()) return bad("expected a function or tracepoint name");
    if (def.type == ProbeType::kTracepoint && def.retprobe) return bad("a tracepoint has no return");
    for (char c : target)
      if (!IsIdentChar(c) && c != '.') return bad("an fprobe or tracepoint probe names a function, not an offset");
    if (std::isdigit(static_cast<unsigned char>(target[0]))) return bad("a name never starts with a digit");
    def.target.symbol = std::string(target);
  }
  if (def.maxactive && !def.retprobe) return bad("maxactive is for return probes");
  for (size_t i = 2; i < words.size(); ++i) def.args.push_back(KP_TRY(ParseFetchArg(words[i])));
  return def;
}

}  // namespace kprobectl
