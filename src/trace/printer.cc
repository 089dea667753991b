// SPDX-License-Identifier: GPL-2.0-or-later
//
// The hot path: one call per event. It appends to a caller-owned buffer,
// formats integers with std::to_chars, and looks nothing up by name.
#include <algorithm>
#include <charconv>
#include <cstring>

#include "counted_string.h"
#include "kprobectl/trace_event_def.h"
#include "kprobectl/trace_printer.h"

namespace kprobectl {

namespace {

void AppendUnsigned(std::string& out, uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void AppendSigned(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void AppendHex(std::string& out, uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v, 16);
  out += "0x";
  out.append(buf, r.ptr);
}

uint64_t ReadUnsigned(const uint8_t* p, unsigned size) {
  switch (size) {
    case 1:
      return *p;
    case 2: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      uint64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

int64_t ReadSigned(const uint8_t* p, unsigned size) {
  switch (size) {
    case 1:
      return static_cast<int8_t>(*p);
    case 2: {
      int16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case 4: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

// Length of the valid UTF-8 sequence at s[i], or 0.
size_t Utf8Length(std::string_view s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
  return n;
}

void AppendTimestamp(std::string& out, uint64_t ns) {
  AppendUnsigned(out, ns / 1000000000);
  out += '.';
  char buf[8];
  uint64_t micros = (ns / 1000) % 1000000;
  for (int i = 5; i >= 0; --i, micros /= 10) buf[i] = static_cast<char>('0' + micros % 10);
  out.append(buf, 6);
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
  out += '"';
  for (size_t i = 0; i < bytes.size(); ++i) {
    auto c = static_cast<unsigned char>(bytes[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\r':
        out += "\\r";
        continue;
      default:
        break;
    }
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else if (size_t n = c >= 0x80 ? Utf8Length(bytes, i) : 0) {
      out.append(bytes.substr(i, n));
      i += n - 1;
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  out += '"';
}

void AppendJsonString(std::string& out, std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (size_t i = 0; i < bytes.size(); ++i) {
    auto c = static_cast<unsigned char>(bytes[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (size_t n = Utf8Length(bytes, i)) {
      out.append(bytes.substr(i, n));
      i += n - 1;
    } else {
      // Not UTF-8: the byte as the code point of the same value (\u00XX),
      // so the JSON stays valid and the byte recoverable.
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  out += '"';
}

void Printer::AppendValue(const ArgPlan& arg, const Record& record, std::string& out, bool json) {
  const uint8_t* base = record.data;
  if (arg.dynamic) {
    uint32_t loc = 0;
    if (arg.offset + 4 <= record.size) std::memcpy(&loc, base + arg.offset, 4);
    uint32_t offset = loc & 0xffff, length = loc >> 16;
    if (length == 0 || offset + length > record.size) {
      out += json ? "null" : "(fault)";
      return;
    }
    std::string_view text(reinterpret_cast<const char*>(base + offset), length);
    if (!text.empty() && text.back() == '\0') text.remove_suffix(1);
    if (json)
      AppendJsonString(out, text);
    else
      AppendCString(out, text);
    return;
  }
  if (arg.kind == ValueKind::kCountedString) {
    auto counted = ReadCountedString(arg, record);
    if (!counted) {
      out += json ? "null" : "(fault)";
    } else {
      json ? AppendJsonString(out, counted->bytes) : AppendCString(out, counted->bytes);
      if (counted->cut && !json) out += "...";  // NAME__len says how long it is
    }
    return;
  }
  unsigned count = arg.count ? arg.count : 1;
  if (arg.offset + arg.size * count > record.size) {
    out += json ? "null" : "(fault)";
    return;
  }
  if (arg.count) out += json ? '[' : '{';
  for (unsigned i = 0; i < count; ++i) {
    if (i) out += ',';
    const uint8_t* p = base + arg.offset + size_t{i} * arg.size;
    switch (arg.kind) {
      case ValueKind::kSigned:
        AppendSigned(out, ReadSigned(p, arg.size));
        break;
      case ValueKind::kUnsigned:
        AppendUnsigned(out, ReadUnsigned(p, arg.size));
        break;
      case ValueKind::kHex:
        if (json) out += '"';
        AppendHex(out, ReadUnsigned(p, arg.size));
        if (json) out += '"';
        break;
      case ValueKind::kChar: {
        char c = static_cast<char>(*p);
        if (json) {
          AppendJsonString(out, std::string_view(&c, 1));
        } else {
          std::string quoted;
          AppendCString(quoted, std::string_view(&c, 1));
          out += '\'';
          out.append(quoted, 1, quoted.size() - 2);
          out += '\'';
        }
        break;
      }
      case ValueKind::kSymbol: {
        std::string symbol = kernel_symbol_ ? kernel_symbol_(ReadUnsigned(p, arg.size)) : std::string();
        if (symbol.empty()) {
          symbol.clear();
          AppendHex(symbol, ReadUnsigned(p, arg.size));
        }
        if (json)
          AppendJsonString(out, symbol);
        else
          out += symbol;
        break;
      }
      case ValueKind::kString:
      case ValueKind::kCountedString:
        break;  // only dynamic fields hold strings; counted ones are read above
    }
  }
  if (arg.count) out += json ? ']' : '}';
}

std::optional<uint64_t> Printer::TrackLatency(const EventPlan& plan, const Record& record) {
  if (plan.latency_key.empty()) return std::nullopt;
  auto& stack = open_calls_[{plan.latency_key, record.pid}];
  if (!plan.retprobe) {
    stack.push_back(record.ts);
    return std::nullopt;
  }
  latency_names_.try_emplace(plan.latency_key, plan.location);  // a return probe's location is its function
  if (stack.empty()) return std::nullopt;                       // entered before tracing began
  uint64_t start = stack.back();
  stack.pop_back();
  uint64_t duration = record.ts >= start ? record.ts - start : 0;
  durations_[plan.latency_key].push_back(duration);
  return duration;
}

void Printer::AppendJson(const Line& line, std::string& out) {
  const Record& record = line.record;
  out += "{\"time\":";
  AppendTimestamp(out, record.ts);
  out += ",\"cpu\":";
  AppendUnsigned(out, static_cast<uint64_t>(record.cpu));
  out += ",\"pid\":";
  AppendSigned(out, record.pid);
  out += ",\"comm\":";
  AppendJsonString(out, line.comm);
  out += ",\"event\":";
  AppendJsonString(out, line.plan.full_name);
  out += ",\"probe\":";
  AppendJsonString(out, line.where);
  if (line.plan.retprobe) {
    out += ",\"caller\":";
    AppendJsonString(out, line.caller);
  }
  out += ",\"args\":{";
  for (size_t i = 0; i < line.plan.args.size(); ++i) {
    if (i) out += ',';
    AppendJsonString(out, line.plan.args[i].name);
    out += ':';
    AppendValue(line.plan.args[i], record, out, true);
  }
  out += '}';
  if (line.latency) {
    out += ",\"latency_ns\":";
    AppendUnsigned(out, *line.latency);
  }
  out += "}\n";
}

// "            demo-6925    [001] 982.997002: probe_demo:compute: (compute+0x0) a=1 b=2"
void Printer::AppendText(const Line& line, std::string& out) {
  const Record& record = line.record;
  if (line.comm.size() < 16) out.append(16 - line.comm.size(), ' ');
  out += line.comm;
  out += '-';
  size_t pid_at = out.size();
  AppendSigned(out, record.pid);
  size_t pid_len = out.size() - pid_at;
  if (pid_len < 7) out.append(7 - pid_len, ' ');
  out += " [";
  char cpu[4] = {static_cast<char>('0' + record.cpu / 100 % 10), static_cast<char>('0' + record.cpu / 10 % 10),
                 static_cast<char>('0' + record.cpu % 10), ']'};
  out.append(cpu, 4);
  out += ' ';
  AppendTimestamp(out, record.ts);
  out += ": ";
  out += line.plan.full_name;
  out += ": (";
  if (line.plan.retprobe) {
    out += line.caller;
    out += " <- ";
  }
  out += line.where;
  out += ')';
  for (const ArgPlan& arg : line.plan.args) {
    out += ' ';
    out += arg.name;
    out += '=';
    AppendValue(arg, record, out, false);
  }
  if (line.latency) {
    out += " latency=";
    AppendUnsigned(out, *line.latency / 1000);
    out += '.';
    uint64_t frac = *line.latency % 1000;
    out += static_cast<char>('0' + frac / 100);
    out += static_cast<char>('0' + frac / 10 % 10);
    out += static_cast<char>('0' + frac % 10);
    out += "us";
  }
  out += '\n';
}

// A kernel stack is as long as the kernel made it (its "size" counts the
// addresses since Linux 5.x; the record's length bounds it either way).
std::vector<std::string> Printer::KernelFrames(const EventStacks& stacks) const {
  std::vector<std::string> frames;
  const StackPlan& plan = options_.stacks;
  if (!stacks.kernel || plan.kernel_callers_offset > stacks.kernel_size) return frames;
  uint64_t room = (stacks.kernel_size - plan.kernel_callers_offset) / 8;
  uint64_t count = plan.kernel_count_offset + 4 <= stacks.kernel_size
                       ? ReadUnsigned(stacks.kernel + plan.kernel_count_offset, 4)
                       : room;
  for (uint64_t i = 0; i < std::min(count, room); ++i) {
    uint64_t address = ReadUnsigned(stacks.kernel + plan.kernel_callers_offset + 8 * i, 8);
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
    tgid = static_cast<int>(ReadUnsigned(stacks.user + plan.user_tgid_offset, 4));
  for (unsigned i = 0; i < plan.user_slots; ++i) {
    size_t at = plan.user_callers_offset + size_t{8} * i;
    if (at + 8 > stacks.user_size) break;
    uint64_t address = ReadUnsigned(stacks.user + at, 8);
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
    if (offset + 8 <= record.size) state.registers.emplace_back(dwarf, ReadUnsigned(record.data + offset, 8));
  for (unsigned offset : plan.captured_stack) {
    if (offset + kCaptureChunkBytes > record.size) break;
    state.stack.append(reinterpret_cast<const char*>(record.data + offset), kCaptureChunkBytes);
  }
  uint64_t ip = plan.ip_offset + 8 <= record.size ? ReadUnsigned(record.data + plan.ip_offset, 8) : 0;
  return unwind_(plan, record.pid, ip, state);
}

void Printer::AppendStacks(const EventPlan& plan, const Record& record, EventStacks stacks, std::string& out) {
  if (options_.stacks.own_side) (plan.kernel ? stacks.user : stacks.kernel) = nullptr;
  bool captured = !plan.captured_registers.empty() && unwind_;
  if (captured) stacks.user = nullptr;  // the kernel's frame-pointer walk, if it ran too
  std::vector<std::string> kernel = KernelFrames(stacks);
  std::vector<std::string> user = captured ? UnwoundFrames(plan, record) : UserFrames(record, stacks);
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

bool Printer::Print(const EventPlan& plan, const Record& record, std::string& out, const EventStacks* stacks) {
  std::optional<uint64_t> latency;
  if (options_.latency) latency = TrackLatency(plan, record);
  if (plan.hidden) return false;
  uint64_t ip = plan.ip_offset + 8 <= record.size ? ReadUnsigned(record.data + plan.ip_offset, 8) : 0;
  // The plan's location, unless the kernel's symbols name the address (no copy per event).
  std::string symbol;
  if (plan.kernel && kernel_symbol_ && !plan.retprobe && !plan.event_probe) symbol = kernel_symbol_(ip);
  std::string caller;
  if (plan.retprobe) {
    uint64_t ret_ip = plan.ret_offset + 8 <= record.size ? ReadUnsigned(record.data + plan.ret_offset, 8) : 0;
    if (plan.kernel && kernel_symbol_)
      caller = kernel_symbol_(ret_ip);
    else if (plan.caller)
      caller = plan.caller(record.pid, ip, ret_ip);
    if (caller.empty()) AppendHex(caller, ret_ip);
  }
  std::string comm = comm_ ? comm_(record.pid) : std::string();
  if (comm.empty()) comm = "<...>";
  Line line{plan, record, symbol.empty() ? plan.location : symbol, caller, comm, latency};
  if (options_.json)
    AppendJson(line, out);
  else
    AppendText(line, out);
  if (stacks || (!plan.captured_registers.empty() && unwind_))
    AppendStacks(plan, record, stacks ? *stacks : EventStacks{}, out);
  ++printed_;
  return true;
}

std::string Printer::Histograms() const {
  std::string out;
  for (const auto& [key, values] : durations_) {
    if (values.empty()) continue;
    auto name = latency_names_.find(key);
    uint64_t min = values[0], max = values[0], sum = 0;
    std::map<int, uint64_t> buckets;  // log2 of the duration in ns
    for (uint64_t v : values) {
      min = std::min(min, v);
      max = std::max(max, v);
      sum += v;
      int bucket = v == 0 ? 0 : 64 - __builtin_clzll(v);
      ++buckets[bucket];
    }
    out += "\n" + (name != latency_names_.end() ? name->second : key) + ": " + std::to_string(values.size()) +
           " calls, min " + std::to_string(min) + " ns, avg " + std::to_string(sum / values.size()) + " ns, max " +
           std::to_string(max) + " ns\n";
    uint64_t peak = 0;
    for (const auto& [b, n] : buckets) peak = std::max(peak, n);
    auto label = [](uint64_t v) {
      const char* units[] = {"", "K", "M", "G"};
      int u = 0;
      while (v >= 1024 && u < 3) v /= 1024, ++u;
      return std::to_string(v) + units[u];
    };
    for (int b = buckets.begin()->first; b <= buckets.rbegin()->first; ++b) {
      uint64_t n = buckets.contains(b) ? buckets.at(b) : 0;
      uint64_t lo = b == 0 ? 0 : uint64_t{1} << (b - 1), hi = uint64_t{1} << b;
      std::string range = "[" + label(lo) + ", " + label(hi) + ")";
      range.resize(std::max<size_t>(range.size(), 14), ' ');
      std::string count = std::to_string(n);
      count.insert(0, count.size() < 8 ? 8 - count.size() : 0, ' ');
      size_t width = static_cast<size_t>(peak ? n * 50 / peak : 0);
      out += range + count + " |" + std::string(width, '@') + std::string(50 - width, ' ') + "|\n";
    }
  }
  return out;
}

}  // namespace kprobectl
