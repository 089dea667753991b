// SPDX-License-Identifier: GPL-2.0-or-later
//
// One call per event: what the line says is worked out here (the probe's
// name, the caller, the command's name, latency), the line itself written
// by printer_line.cc; then the stacks recorded after the event, if any.
#include <algorithm>
#include <cstring>

#include "kprobectl/quantiles.h"
#include "kprobectl/trace_event_def.h"
#include "kprobectl/trace_printer.h"
#include "line_writer.h"

namespace kprobectl {

namespace {

// Off the hot path (stacks, symbols' fallbacks): the writers into a string.
void AppendHex(std::string& out, uint64_t v) {
  char buf[line::kMaxHex];
  out.append(buf, line::WriteHex(buf, v));
}

// Where the probe fired (for a return probe, its function): the record's
// __probe_ip, or __probe_func.
uint64_t ProbeIp(const EventPlan& plan, const Record& record) {
  return plan.ip_offset + 8 <= record.size ? line::ReadUnsigned(record.data + plan.ip_offset, 8) : 0;
}

const FieldFormat* FieldNamed(const EventFormat& format, std::string_view name) {
  for (const FieldFormat& f : format.fields)
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace

StackPlan PlanStacks(const EventFormat* kernel_stack, const EventFormat* user_stack) {
  StackPlan out;
  if (kernel_stack) {
    out.kernel_id = kernel_stack->id;
    if (const FieldFormat* f = FieldNamed(*kernel_stack, "size")) out.kernel_count_offset = f->offset;
    if (const FieldFormat* f = FieldNamed(*kernel_stack, "caller")) out.kernel_callers_offset = f->offset;
  }
  if (user_stack) {
    out.user_id = user_stack->id;
    if (const FieldFormat* f = FieldNamed(*user_stack, "tgid")) out.user_tgid_offset = f->offset;
    if (const FieldFormat* f = FieldNamed(*user_stack, "caller")) {
      out.user_callers_offset = f->offset;
      if (f->elem_size) out.user_slots = f->size / f->elem_size;
    }
  }
  return out;
}

void AppendCString(std::string& out, std::string_view bytes) {
  size_t at = out.size();
  out.resize_and_overwrite(at + line::EscapedBound(bytes.size(), false), [&](char* p, size_t) {
    return static_cast<size_t>(line::WriteQuoted<false>(p + at, bytes) - p);
  });
}

void AppendJsonString(std::string& out, std::string_view bytes) {
  size_t at = out.size();
  out.resize_and_overwrite(at + line::EscapedBound(bytes.size(), true), [&](char* p, size_t) {
    return static_cast<size_t>(line::WriteQuoted<true>(p + at, bytes) - p);
  });
}

std::optional<uint64_t> Printer::TrackLatency(const EventPlan& plan, const Record& record) {
  if (plan.latency_key.empty()) return std::nullopt;
  // A call is its goroutine's where the probes record it (Go's g), else
  // its thread's.
  uint64_t call = static_cast<uint64_t>(record.pid);
  if (plan.call_offset && *plan.call_offset + 8 <= record.size) std::memcpy(&call, record.data + *plan.call_offset, 8);
  auto& stack = open_calls_[{plan.latency_key, call}];
  if (!plan.retprobe && !plan.latency_return) {
    stack.push_back(record.ts);
    return std::nullopt;
  }
  // A return probe's location is its function; a return instruction's is
  // FUNC+OFF.
  latency_names_.try_emplace(plan.latency_key,
                             plan.location.substr(0, plan.retprobe ? std::string::npos : plan.location.rfind('+')));
  if (stack.empty()) return std::nullopt;  // entered before tracing began
  uint64_t start = stack.back();
  stack.pop_back();
  uint64_t duration = record.ts >= start ? record.ts - start : 0;
  durations_[plan.latency_key].emplace_back(record.ts, duration);
  return duration;
}

// A kernel stack is as long as the kernel made it (its "size" counts the
// addresses since Linux 5.x; the record's length bounds it either way).
std::vector<std::string> Printer::KernelFrames(const EventStacks& stacks) const {
  std::vector<std::string> frames;
  const StackPlan& plan = options_.stacks;
  if (!stacks.kernel || plan.kernel_callers_offset > stacks.kernel_size) return frames;
  uint64_t room = (stacks.kernel_size - plan.kernel_callers_offset) / 8;
  uint64_t count = plan.kernel_count_offset + 4 <= stacks.kernel_size
                       ? line::ReadUnsigned(stacks.kernel + plan.kernel_count_offset, 4)
                       : room;
  for (uint64_t i = 0; i < std::min(count, room); ++i) {
    uint64_t address = line::ReadUnsigned(stacks.kernel + plan.kernel_callers_offset + 8 * i, 8);
    if (address == 0 || address == UINT64_MAX) break;
    std::string frame = kernel_symbol_ ? kernel_symbol_(address) : std::string();
    if (frame.empty()) AppendHex(frame, address);
    frames.push_back(std::move(frame));
  }
  return frames;
}

// A user stack has a fixed number of slots, the unused ones 0.
std::vector<std::string> Printer::UserFrames(const Record& record, const EventStacks& stacks) const {
  std::vector<std::string> frames;
  const StackPlan& plan = options_.stacks;
  if (!stacks.user) return frames;
  int tgid = record.pid;
  if (plan.user_tgid_offset + 4 <= stacks.user_size)
    tgid = static_cast<int>(line::ReadUnsigned(stacks.user + plan.user_tgid_offset, 4));
  for (unsigned i = 0; i < plan.user_slots; ++i) {
    size_t at = plan.user_callers_offset + size_t{8} * i;
    if (at + 8 > stacks.user_size) break;
    uint64_t address = line::ReadUnsigned(stacks.user + at, 8);
    if (address == 0 || address == UINT64_MAX) break;
    std::string frame = user_frame_ ? user_frame_(tgid, address) : std::string();
    if (frame.empty()) {
      AppendHex(frame, address);
      frame += " ([unknown])";
    }
    frames.push_back(std::move(frame));
  }
  return frames;
}

// The frames a captured stack unwinds to, the probe's own first.
std::vector<std::string> Printer::UnwoundFrames(const EventPlan& plan, const Record& record) const {
  CapturedState state;
  for (auto [dwarf, offset] : plan.captured_registers)
    if (offset + 8 <= record.size) state.registers.emplace_back(dwarf, line::ReadUnsigned(record.data + offset, 8));
  for (unsigned offset : plan.captured_stack) {
    if (offset + kCaptureChunkBytes > record.size) break;
    state.stack.append(reinterpret_cast<const char*>(record.data + offset), kCaptureChunkBytes);
  }
  uint64_t ip = ProbeIp(plan, record);
  return unwind_(plan, record.pid, ip, state);
}

Printer::Frames Printer::StackFrames(const EventPlan& plan, const Record& record, EventStacks stacks) const {
  if (options_.stacks.own_side) (plan.kernel ? stacks.user : stacks.kernel) = nullptr;
  bool captured = !plan.captured_registers.empty() && unwind_;
  if (captured) stacks.user = nullptr;  // the kernel's frame-pointer walk, if it ran too
  return {KernelFrames(stacks), captured ? UnwoundFrames(plan, record) : UserFrames(record, stacks)};
}

void Printer::AppendStacks(const EventPlan& plan, const Record& record, EventStacks stacks, std::string& out) {
  auto [kernel, user] = StackFrames(plan, record, stacks);
  if (options_.stacks.own_side) (plan.kernel ? stacks.user : stacks.kernel) = nullptr;
  bool captured = !plan.captured_registers.empty() && unwind_;
  if (!options_.json) {
    for (const std::vector<std::string>* frames : {&kernel, &user})
      for (const std::string& frame : *frames) {
        out += " => ";
        out += frame;
        out += '\n';
      }
    return;
  }
  // Inside the event's object, before its closing "}\n".
  out.resize(out.size() - 2);
  for (auto [name, frames] : {std::pair{"kernel_stack", &kernel}, std::pair{"user_stack", &user}}) {
    if (name == std::string_view("kernel_stack") ? !stacks.kernel : !stacks.user && !captured) continue;
    out += ",\"";
    out += name;
    out += "\":[";
    for (size_t i = 0; i < frames->size(); ++i) {
      if (i) out += ',';
      AppendJsonString(out, (*frames)[i]);
    }
    out += ']';
  }
  out += "}\n";
}

std::string Printer::Caller(const EventPlan& plan, const Record& record) const {
  uint64_t ip = ProbeIp(plan, record);
  uint64_t ret_ip = plan.ret_offset + 8 <= record.size ? line::ReadUnsigned(record.data + plan.ret_offset, 8) : 0;
  std::string caller;
  if (plan.kernel && kernel_symbol_)
    caller = kernel_symbol_(ret_ip);
  else if (plan.caller)
    caller = plan.caller(record.pid, ip, ret_ip);
  if (caller.empty()) AppendHex(caller, ret_ip);
  return caller;
}

bool Printer::Print(const EventPlan& plan, const Record& record, std::string& out, const EventStacks* stacks) {
  std::optional<uint64_t> latency;
  if (options_.latency) latency = TrackLatency(plan, record);
  if (plan.hidden) return false;
  uint64_t ip = ProbeIp(plan, record);
  // The plan's location, unless the kernel's symbols name the address (no copy per event).
  std::string symbol;
  if (plan.kernel && kernel_symbol_ && !plan.retprobe && !plan.event_probe) symbol = kernel_symbol_(ip);
  std::string caller = plan.retprobe ? Caller(plan, record) : std::string();
  std::string comm = comm_ ? comm_(record.pid) : std::string();
  if (comm.empty()) comm = "<...>";
  Line line{plan, record, symbol.empty() ? plan.location : symbol, caller, comm, latency};
  AppendLine(line, out);
  if (stacks || (!plan.captured_registers.empty() && unwind_))
    AppendStacks(plan, record, stacks ? *stacks : EventStacks{}, out);
  ++printed_;
  return true;
}

void Printer::Observe(const EventPlan& plan, const Record& record) {
  if (options_.latency) TrackLatency(plan, record);
  if (!plan.hidden) ++printed_;
}

std::vector<Printer::LatencyCalls> Printer::Latencies() const {
  std::vector<LatencyCalls> out;
  for (const auto& [key, calls] : durations_) {
    auto name = latency_names_.find(key);
    out.push_back({name != latency_names_.end() ? name->second : key, calls});
  }
  return out;
}

std::string Printer::Histograms() const {
  std::string out;
  for (const LatencyCalls& function : Latencies()) {
    if (function.calls.empty()) continue;
    std::vector<uint64_t> values;
    uint64_t sum = 0;
    std::map<uint64_t, uint64_t> buckets;  // the kernel's log2 buckets of the duration in ns
    for (auto [end, ns] : function.calls) {
      values.push_back(ns);
      sum += ns;
      ++buckets[Log2Bucket(ns)];
    }
    uint64_t min = *std::min_element(values.begin(), values.end());
    uint64_t max = *std::max_element(values.begin(), values.end());
    out += "\n" + function.function + ": " + std::to_string(values.size()) + " calls, min " + std::to_string(min) +
           " ns, avg " + std::to_string(sum / values.size()) + " ns, max " + std::to_string(max) + " ns\n";
    out += QuantileLine(ExactQuantiles(std::move(values)), "ns") + "\n";
    uint64_t peak = 0;
    size_t label_width = 0;
    for (const auto& [k, n] : buckets) {
      peak = std::max(peak, n);
      label_width = std::max(label_width, Log2BucketText(k).size());
    }
    for (uint64_t k = buckets.begin()->first; k <= buckets.rbegin()->first; ++k) {
      uint64_t n = buckets.contains(k) ? buckets.at(k) : 0;
      std::string range = Log2BucketText(k);
      range.resize(label_width, ' ');
      std::string count = std::to_string(n);
      count.insert(0, count.size() < 8 ? 8 - count.size() : 0, ' ');
      size_t width = static_cast<size_t>(peak ? n * 50 / peak : 0);
      out += range + count + " |" + std::string(width, '@') + std::string(50 - width, ' ') + "|\n";
    }
  }
  return out;
}

}  // namespace kprobectl
