// SPDX-License-Identifier: GPL-2.0-or-later
//
// The kernel writes each probe argument into the event's print fmt as
// " NAME=SPEC": %d/%Ld for signed, %u for unsigned, 0x%x for the x types,
// \"%s\" for strings, '%c' for char, %pS for symbols, {SPEC,SPEC} for
// arrays. That is the only place the x/u distinction survives (both are
// "u32" fields), so the plan reads it there, once per event.
#include <algorithm>

#include "kprobectl/strings.h"
#include "kprobectl/trace_event_def.h"
#include "kprobectl/trace_plan.h"
#include "kprobectl/trace_printer.h"

namespace kprobectl {

namespace {

ValueKind KindOfSpec(std::string_view spec, bool is_signed) {
  if (spec.find("%s") != std::string_view::npos) return ValueKind::kString;
  if (spec.find("%c") != std::string_view::npos) return ValueKind::kChar;
  if (spec.find("%pS") != std::string_view::npos || spec.find("%ps") != std::string_view::npos ||
      spec.find("%pB") != std::string_view::npos)
    return ValueKind::kSymbol;
  size_t pct = spec.find('%');
  if (pct == std::string_view::npos) return is_signed ? ValueKind::kSigned : ValueKind::kUnsigned;
  size_t conv = spec.find_first_of("diuxXp", pct + 1);
  if (conv == std::string_view::npos) return is_signed ? ValueKind::kSigned : ValueKind::kUnsigned;
  switch (spec[conv]) {
    case 'd':
    case 'i':
      return ValueKind::kSigned;
    case 'u':
      return ValueKind::kUnsigned;
    default:
      return ValueKind::kHex;
  }
}

// A counted string's bytes (u8[N]) followed by its length, NAME__len
// (resolve/counted_strings.cc): the bytes print as a string cut there.
void PairCountedStrings(std::vector<ArgPlan>& args) {
  for (size_t i = 1; i < args.size(); ++i) {
    const ArgPlan& length = args[i];
    ArgPlan& bytes = args[i - 1];
    if (!length.name.ends_with(kCountedLengthSuffix) || length.dynamic || length.count || length.size > 8 ||
        bytes.name.size() + kCountedLengthSuffix.size() != length.name.size() || !length.name.starts_with(bytes.name) ||
        bytes.dynamic || bytes.size != 1 || bytes.count == 0)
      continue;
    bytes.kind = ValueKind::kCountedString;
    bytes.length_offset = length.offset;
    bytes.length_size = length.size;
  }
}

}  // namespace

Result<EventPlan> PlanEvent(const EventFormat& format, bool event_probe) {
  EventPlan plan;
  plan.event_probe = event_probe;
  plan.id = format.id;
  plan.full_name = format.system + ":" + format.name;
  std::string_view fmt = format.print_fmt;
  size_t cursor = 0;
  bool have_ip = false;
  for (const FieldFormat& field : format.fields) {
    if (field.name == "__probe_ip" || field.name == "__probe_func") {
      plan.ip_offset = field.offset;
      plan.retprobe = field.name == "__probe_func";
      have_ip = true;
      continue;
    }
    if (field.name == "__probe_ret_ip") {
      plan.ret_offset = field.offset;
      continue;
    }
    // A stack capture's hidden arguments: not printed, unwound from.
    if (field.name.starts_with(kCaptureRegisterPrefix)) {
      if (auto n = ParseUnsigned(std::string_view(field.name).substr(kCaptureRegisterPrefix.size())))
        plan.captured_registers.emplace_back(static_cast<unsigned>(*n), field.offset);
      continue;
    }
    if (field.name.starts_with(kCaptureStackPrefix)) {
      plan.captured_stack.push_back(field.offset);
      continue;
    }
    if (field.name == kGoroutineField && field.size == 8) {
      plan.call_offset = field.offset;
      continue;
    }
    if (field.name == kCallStackField && field.size == 8) {
      plan.stack_offset = field.offset;
      continue;
    }
    if (field.name == kStackTopField && field.size == 8) {
      plan.stack_top_offset = field.offset;
      continue;
    }
    ArgPlan arg;
    arg.name = field.name;
    arg.offset = field.offset;
    arg.dynamic = field.dynamic;
    arg.size = field.elem_size ? field.elem_size : field.size;
    arg.count = field.elem_size ? field.size / field.elem_size : 0;
    std::string key = " " + field.name + "=";
    size_t at = fmt.find(key, cursor);
    std::string_view spec;
    if (at != std::string_view::npos) {
      size_t start = at + key.size();
      size_t end = fmt.find(' ', start);
      // A string spec may contain blanks only inside quotes, which the
      // kernel never emits; an array spec ends at its closing brace.
      if (start < fmt.size() && fmt[start] == '{') end = fmt.find('}', start) + 1;
      spec = fmt.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
      cursor = start;
    }
    // "{%Ld,%Ld,%Ld}": the element count is in the print fmt ("s64 v[]"
    // in the format says nothing of it).
    if (!arg.dynamic && spec.starts_with('{')) {
      unsigned n = static_cast<unsigned>(std::count(spec.begin(), spec.end(), '%'));
      if (n > 0 && field.size % n == 0) {
        arg.count = n;
        arg.size = field.size / n;
      }
    }
    arg.kind = arg.dynamic ? ValueKind::kString : KindOfSpec(spec, field.is_signed);
    plan.args.push_back(std::move(arg));
  }
  PairCountedStrings(plan.args);
  if (!have_ip && !event_probe)
    return Fail("event " + plan.full_name + " is not a kprobe or uprobe event (it has no __probe_ip field)",
                "trace the events kprobectl adds: probe groups, or --probe");
  return plan;
}

Result<void> PlanKeptArgs(EventPlan& ret, EventPlan& entry, const KeptArgs& kept) {
  std::vector<ArgPlan> args;
  for (size_t i = 0; i < kept.args.size(); ++i) {
    const bool at_entry = kept.args[i].at_entry;
    const EventPlan& from = at_entry ? entry : ret;
    auto field =
        std::find_if(from.args.begin(), from.args.end(), [&](const ArgPlan& a) { return a.name == kept.fields[i]; });
    if (field == from.args.end())
      return Fail("event " + from.full_name + " has no field '" + kept.fields[i] + "' for " + ret.full_name + "'s " +
                  kept.args[i].name);
    ArgPlan arg = *field;
    arg.name = kept.args[i].name;
    arg.from_entry = at_entry;
    args.push_back(std::move(arg));
  }
  ret.args = std::move(args);
  entry.keep_record = true;
  return {};
}

}  // namespace kprobectl
