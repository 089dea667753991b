// SPDX-License-Identifier: GPL-2.0-or-later
//
// The hot path: one event's line, text or JSON. A first pass bounds its
// length (and looks up the names of %pS values, whose length it needs);
// the line is then written through a raw pointer into that room at once
// (line_writer.h says why).
#include "counted_string.h"
#include "kprobectl/trace_printer.h"
#include "line_writer.h"

namespace kprobectl {

namespace {

// A __data_loc string in the record, or nullopt when the kernel could not
// read it (length 0) or it lies outside the record.
std::optional<std::string_view> DynamicText(const ArgPlan& arg, const Record& record) {
  uint32_t loc = 0;
  if (arg.offset + 4 <= record.size) std::memcpy(&loc, record.data + arg.offset, 4);
  uint32_t offset = loc & 0xffff, length = loc >> 16;
  if (length == 0 || offset + length > record.size) return std::nullopt;
  std::string_view text(reinterpret_cast<const char*>(record.data + offset), length);
  if (text.back() == '\0') text.remove_suffix(1);
  return text;
}

bool FixedFits(const ArgPlan& arg, const Record& record) {
  return arg.offset + arg.size * (arg.count ? arg.count : 1) <= record.size;
}

constexpr size_t kFaultBound = 7;  // "(fault)", "null"

template <bool kJson>
char* WriteFault(char* p) {
  return line::Write(p, kJson ? "null" : "(fault)");
}

// One value of a fixed field; `symbol` is its name if it is a %pS.
template <bool kJson>
char* WriteScalar(const ArgPlan& arg, const uint8_t* at, const std::string* symbol, char* p) {
  switch (arg.kind) {
    case ValueKind::kSigned:
      return line::WriteSigned(p, line::ReadSigned(at, arg.size));
    case ValueKind::kUnsigned:
      return line::WriteUnsigned(p, line::ReadUnsigned(at, arg.size));
    case ValueKind::kHex:
      if (kJson) *p++ = '"';
      p = line::WriteHex(p, line::ReadUnsigned(at, arg.size));
      if (kJson) *p++ = '"';
      return p;
    case ValueKind::kChar: {
      std::string_view c(reinterpret_cast<const char*>(at), 1);
      if (kJson) return line::WriteQuoted<true>(p, c);
      *p++ = '\'';
      // One byte is never UTF-8: printable, a named escape, or \xNN.
      p = line::WriteEscaped<false>(p, c);
      *p++ = '\'';
      return p;
    }
    case ValueKind::kSymbol:
      if (!symbol->empty()) return kJson ? line::WriteQuoted<true>(p, *symbol) : line::Write(p, *symbol);
      if (kJson) *p++ = '"';
      p = line::WriteHex(p, line::ReadUnsigned(at, arg.size));
      if (kJson) *p++ = '"';
      return p;
    case ValueKind::kString:
    case ValueKind::kCountedString:
      break;  // only dynamic fields hold strings; counted ones are written whole
  }
  return p;
}

template <bool kJson>
char* WriteValue(const ArgPlan& arg, const Record& record, const std::string*& symbol, char* p) {
  if (arg.dynamic) {
    auto text = DynamicText(arg, record);
    return text ? line::WriteQuoted<kJson>(p, *text) : WriteFault<kJson>(p);
  }
  // A counted string's N bytes, escaped, and "...": within the bound of N
  // values that LineBound allows an array.
  if (arg.kind == ValueKind::kCountedString) {
    auto counted = ReadCountedString(arg, record);
    if (!counted) return WriteFault<kJson>(p);
    p = line::WriteQuoted<kJson>(p, counted->bytes);
    return counted->cut && !kJson ? line::Write(p, "...") : p;
  }
  if (!FixedFits(arg, record)) return WriteFault<kJson>(p);
  if (!arg.count)
    return WriteScalar<kJson>(arg, record.data + arg.offset, arg.kind == ValueKind::kSymbol ? symbol++ : nullptr, p);
  *p++ = kJson ? '[' : '{';
  for (unsigned i = 0; i < arg.count; ++i) {
    if (i) *p++ = ',';
    const uint8_t* at = record.data + arg.offset + size_t{i} * arg.size;
    p = WriteScalar<kJson>(arg, at, arg.kind == ValueKind::kSymbol ? symbol++ : nullptr, p);
  }
  *p++ = kJson ? ']' : '}';
  return p;
}

}  // namespace

// The line's bound: its fixed text, its strings as long as escaping makes
// them, each value at its longest.
size_t Printer::LineBound(const Line& line) {
  const size_t expand = options_.json ? line::kJsonEscape : 1;
  size_t bound =
      256 + expand * (line.comm.size() + line.plan.full_name.size() + line.where.size() + line.caller.size());
  symbols_.clear();
  for (const ArgPlan& arg : line.plan.args) {
    bound += 4 + expand * arg.name.size();
    if (arg.dynamic) {
      auto text = DynamicText(arg, line.record);
      bound += text ? line::EscapedBound(text->size(), options_.json) : kFaultBound;
      continue;
    }
    unsigned count = arg.count ? arg.count : 1;
    bound += 2 + size_t{count} * (line::kMaxDecimal + 3);  // a sign, quotes, a comma
    if (arg.kind != ValueKind::kSymbol || !FixedFits(arg, line.record)) continue;
    for (unsigned i = 0; i < count; ++i) {
      const uint8_t* at = line.record.data + arg.offset + size_t{i} * arg.size;
      symbols_.push_back(kernel_symbol_ ? kernel_symbol_(line::ReadUnsigned(at, arg.size)) : std::string());
      bound += line::EscapedBound(symbols_.back().size(), options_.json);
    }
  }
  return bound;
}

namespace {

template <bool kJson>
char* WriteArgs(const EventPlan& plan, const Record& record, const std::string* symbol, char* p) {
  for (size_t i = 0; i < plan.args.size(); ++i) {
    const ArgPlan& arg = plan.args[i];
    if (kJson) {
      if (i) *p++ = ',';
      p = line::WriteQuoted<true>(p, arg.name);
      *p++ = ':';
    } else {
      *p++ = ' ';
      p = line::Write(p, arg.name);
      *p++ = '=';
    }
    p = WriteValue<kJson>(arg, record, symbol, p);
  }
  return p;
}

}  // namespace

// {"time":..,"cpu":..,"pid":..,"comm":..,"event":..,"probe":..,["caller":..,]"args":{..}[,"latency_ns":..]}
char* Printer::WriteJson(const Line& line, char* p) const {
  const Record& record = line.record;
  p = line::Write(p, "{\"time\":");
  p = line::WriteTimestamp(p, record.ts);
  p = line::Write(p, ",\"cpu\":");
  p = line::WriteUnsigned(p, static_cast<uint64_t>(record.cpu));
  p = line::Write(p, ",\"pid\":");
  p = line::WriteSigned(p, record.pid);
  p = line::Write(p, ",\"comm\":");
  p = line::WriteQuoted<true>(p, line.comm);
  p = line::Write(p, ",\"event\":");
  p = line::WriteQuoted<true>(p, line.plan.full_name);
  p = line::Write(p, ",\"probe\":");
  p = line::WriteQuoted<true>(p, line.where);
  if (line.plan.retprobe) {
    p = line::Write(p, ",\"caller\":");
    p = line::WriteQuoted<true>(p, line.caller);
  }
  p = line::Write(p, ",\"args\":{");
  p = WriteArgs<true>(line.plan, record, symbols_.data(), p);
  *p++ = '}';
  if (line.latency) {
    p = line::Write(p, ",\"latency_ns\":");
    p = line::WriteUnsigned(p, *line.latency);
  }
  return line::Write(p, "}\n");
}

// "            demo-6925    [001] 982.997002: probe_demo:compute: (compute+0x0) a=1 b=2"
char* Printer::WriteText(const Line& line, char* p) const {
  const Record& record = line.record;
  if (line.comm.size() < 16) {
    std::memset(p, ' ', 16 - line.comm.size());
    p += 16 - line.comm.size();
  }
  p = line::Write(p, line.comm);
  *p++ = '-';
  char* pid_at = p;
  p = line::WriteSigned(p, record.pid);
  if (p - pid_at < 7) {
    std::memset(p, ' ', static_cast<size_t>(7 - (p - pid_at)));
    p = pid_at + 7;
  }
  p = line::Write(p, " [");
  *p++ = static_cast<char>('0' + record.cpu / 100 % 10);
  *p++ = static_cast<char>('0' + record.cpu / 10 % 10);
  *p++ = static_cast<char>('0' + record.cpu % 10);
  p = line::Write(p, "] ");
  p = line::WriteTimestamp(p, record.ts);
  p = line::Write(p, ": ");
  p = line::Write(p, line.plan.full_name);
  p = line::Write(p, ": (");
  if (line.plan.retprobe) {
    p = line::Write(p, line.caller);
    p = line::Write(p, " <- ");
  }
  p = line::Write(p, line.where);
  *p++ = ')';
  p = WriteArgs<false>(line.plan, record, symbols_.data(), p);
  if (line.latency) {
    p = line::Write(p, " latency=");
    p = line::WriteUnsigned(p, *line.latency / 1000);
    *p++ = '.';
    uint64_t frac = *line.latency % 1000;
    *p++ = static_cast<char>('0' + frac / 100);
    *p++ = static_cast<char>('0' + frac / 10 % 10);
    *p++ = static_cast<char>('0' + frac % 10);
    p = line::Write(p, "us");
  }
  *p++ = '\n';
  return p;
}

std::string Printer::ArgsJson(const EventPlan& plan, const Record& record) {
  static const std::string kNone;
  Line line{plan, record, kNone, kNone, kNone, std::nullopt};
  bool json = options_.json;
  options_.json = true;  // LineBound's escaping bound
  std::string out;
  out.resize_and_overwrite(LineBound(line), [&](char* p, size_t) {
    char* end = p;
    *end++ = '{';
    end = WriteArgs<true>(plan, record, symbols_.data(), end);
    *end++ = '}';
    return static_cast<size_t>(end - p);
  });
  options_.json = json;
  return out;
}

void Printer::AppendLine(const Line& line, std::string& out) {
  size_t at = out.size();
  out.resize_and_overwrite(at + LineBound(line), [&](char* p, size_t) {
    char* end = options_.json ? WriteJson(line, p + at) : WriteText(line, p + at);
    return static_cast<size_t>(end - p);
  });
}

}  // namespace kprobectl
