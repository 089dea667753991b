// SPDX-License-Identifier: GPL-2.0-or-later
//
// The printer's whole output, pinned byte for byte (tests/data/trace/
// printer_cases.txt and .json), on records assembled here rather than
// captured: every fetch type at its limits and in arrays, every byte value
// as a string and as a char, UTF-8 that is valid, truncated, overlong or
// out of range, faults (no data, data past the record, a record too short
// for a field), the header's padding at its limits (comm, pid, CPU,
// timestamp), kernel and user probes, return probes with and without a
// caller's name, event probes, hidden events, latency, and the stacks
// (kernel, user, own side, unwound from a capture). The files were made by
// the printer before it was rewritten for speed, and reviewed; a faster
// printer must print exactly the same.
#include <catch2/catch.hpp>
#include <cstring>

#include "json_check.h"
#include "kprobectl/call_pairing.h"
#include "kprobectl/strings.h"
#include "kprobectl/trace_event_def.h"
#include "kprobectl/trace_printer.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

// One record's bytes, the common fields first (type, flags, preempt
// count, pid), then fields appended where the next one starts.
class RecordBytes {
 public:
  RecordBytes() { data_.resize(8); }
  template <typename T>
  unsigned Put(T value) {
    return PutRaw(&value, sizeof value);
  }
  unsigned PutRaw(const void* bytes, size_t n) {
    auto at = static_cast<unsigned>(data_.size());
    data_.resize(data_.size() + n);
    std::memcpy(data_.data() + at, bytes, n);
    return at;
  }
  // A __data_loc: its (length << 16 | offset) word now, the bytes later.
  unsigned PutString(std::string_view text) {
    unsigned at = Put(uint32_t{0});
    strings_.emplace_back(at, std::string(text));
    return at;
  }
  // The strings' bytes after the fixed fields, as the kernel lays them out.
  const std::vector<uint8_t>& Finish() {
    for (const auto& [at, text] : strings_) {
      unsigned offset = PutRaw(text.data(), text.size());
      uint32_t loc = static_cast<uint32_t>(text.size()) << 16 | offset;
      std::memcpy(data_.data() + at, &loc, 4);
    }
    strings_.clear();
    return data_;
  }

 private:
  std::vector<uint8_t> data_;
  std::vector<std::pair<unsigned, std::string>> strings_;
};

ArgPlan Arg(std::string name, unsigned offset, unsigned size, ValueKind kind, unsigned count = 0) {
  return {std::move(name), offset, size, kind, kind == ValueKind::kString, count};
}

// One event to print: its plan, its record's bytes and header.
struct Event {
  EventPlan plan;
  std::vector<uint8_t> bytes;
  int pid = 4242;
  int cpu = 1;
  uint64_t ts = 123456789012;
};

EventPlan Plan(std::string name, std::string location, bool kernel = false) {
  EventPlan plan;
  plan.full_name = "kpgold:" + std::move(name);
  plan.location = std::move(location);
  plan.kernel = kernel;
  return plan;
}

// Every fetch type, scalar and array, from the record's first byte values.
Event AllTypes(int seed) {
  RecordBytes b;
  Event e{Plan("types", "all_types+0x4"), {}};
  auto& args = e.plan.args;
  e.plan.ip_offset = b.Put(uint64_t{0x401000});
  auto pick = [&](auto lo, auto hi, auto mid) { return seed == 0 ? lo : seed == 1 ? hi : mid; };
  using L8 = std::numeric_limits<int8_t>;
  using L16 = std::numeric_limits<int16_t>;
  using L32 = std::numeric_limits<int32_t>;
  using L64 = std::numeric_limits<int64_t>;
  args.push_back(Arg("s8", b.Put(pick(L8::min(), L8::max(), int8_t{-7})), 1, ValueKind::kSigned));
  args.push_back(Arg("s16", b.Put(pick(L16::min(), L16::max(), int16_t{-300})), 2, ValueKind::kSigned));
  args.push_back(Arg("s32", b.Put(pick(L32::min(), L32::max(), int32_t{-70000})), 4, ValueKind::kSigned));
  args.push_back(Arg("s64", b.Put(pick(L64::min(), L64::max(), int64_t{-5000000000})), 8, ValueKind::kSigned));
  args.push_back(Arg("u8", b.Put(pick(uint8_t{0}, uint8_t{255}, uint8_t{9})), 1, ValueKind::kUnsigned));
  args.push_back(Arg("u16", b.Put(pick(uint16_t{0}, uint16_t{65535}, uint16_t{1000})), 2, ValueKind::kUnsigned));
  args.push_back(Arg("u32", b.Put(pick(0u, 4294967295u, 100000u)), 4, ValueKind::kUnsigned));
  args.push_back(Arg("u64", b.Put(pick(uint64_t{0}, UINT64_MAX, uint64_t{10000000000})), 8, ValueKind::kUnsigned));
  args.push_back(Arg("x8", b.Put(pick(uint8_t{0}, uint8_t{0xff}, uint8_t{0x0a})), 1, ValueKind::kHex));
  args.push_back(Arg("x16", b.Put(pick(uint16_t{0}, uint16_t{0xffff}, uint16_t{0xbeef})), 2, ValueKind::kHex));
  args.push_back(Arg("x32", b.Put(pick(0u, 0xffffffffu, 0xdeadbeefu)), 4, ValueKind::kHex));
  args.push_back(Arg("x64", b.Put(pick(uint64_t{0}, UINT64_MAX, uint64_t{0x123456789abcdef})), 8, ValueKind::kHex));
  args.push_back(Arg("c", b.Put(pick('A', '\'', '\x7f')), 1, ValueKind::kChar));
  args.push_back(Arg("sym", b.Put(pick(uint64_t{0xffffffff81000010}, uint64_t{0xffffffff8100ffff}, uint64_t{0})), 8,
                     ValueKind::kSymbol));
  args.push_back(Arg("sym32", b.Put(pick(0x81000010u, 0x1u, 0u)), 4, ValueKind::kSymbol));
  int16_t s16s[3] = {pick(L16::min(), L16::max(), int16_t{0}), -1, 1};
  args.push_back(Arg("s16s", b.PutRaw(s16s, sizeof s16s), 2, ValueKind::kSigned, 3));
  uint8_t u8s[4] = {0, 1, 127, pick(uint8_t{128}, uint8_t{255}, uint8_t{200})};
  args.push_back(Arg("u8s", b.PutRaw(u8s, sizeof u8s), 1, ValueKind::kUnsigned, 4));
  uint32_t x32s[2] = {pick(0u, 0xffffffffu, 0x10u), 0xabcu};
  args.push_back(Arg("x32s", b.PutRaw(x32s, sizeof x32s), 4, ValueKind::kHex, 2));
  int64_t s64s[1] = {pick(L64::min(), L64::max(), int64_t{42})};
  args.push_back(Arg("s64s", b.PutRaw(s64s, sizeof s64s), 8, ValueKind::kSigned, 1));
  char chars[4] = {'o', pick('\n', '"', '\\'), '\0', pick('\xff', '\t', 'z')};
  args.push_back(Arg("chars", b.PutRaw(chars, sizeof chars), 1, ValueKind::kChar, 4));
  uint64_t syms[2] = {0xffffffff81000010, pick(uint64_t{1}, uint64_t{0xffffffff81000020}, UINT64_MAX)};
  args.push_back(Arg("syms", b.PutRaw(syms, sizeof syms), 8, ValueKind::kSymbol, 2));
  args.push_back(Arg("str", b.PutString(pick("plain", "", "with space")), 0, ValueKind::kString));
  args.push_back(Arg(
      "nul", b.PutString(pick(std::string_view("ends\0", 5), std::string_view("\0", 1), std::string_view("a\0b\0", 4))),
      0, ValueKind::kString));
  args.push_back(Arg("fault", b.Put(uint32_t{0}), 0, ValueKind::kString));  // the kernel's "could not read"
  args.push_back(Arg("past", b.Put(uint32_t{0x1000u << 16 | 8}), 0, ValueKind::kString));  // 4 KB at 8: past the end
  e.bytes = b.Finish();
  unsigned end = static_cast<unsigned>(e.bytes.size());
  // Fields a shorter record does not hold: scalars and an array past its end.
  args.push_back(Arg("short", end, 4, ValueKind::kUnsigned));
  args.push_back(Arg("short_hex", end - 2, 4, ValueKind::kHex));
  args.push_back(Arg("short_array", end - 4, 2, ValueKind::kSigned, 3));
  args.push_back(Arg("short_str", end + 2, 0, ValueKind::kString));
  e.cpu = seed;
  return e;
}

// One string argument: text or JSON escaping of `text`.
Event OneString(std::string_view text, std::string name = "bytes") {
  RecordBytes b;
  Event e{Plan(std::move(name), "escape+0x0"), {}};
  e.plan.ip_offset = b.Put(uint64_t{0x401100});
  e.plan.args.push_back(Arg("s", b.PutString(text), 0, ValueKind::kString));
  e.bytes = b.Finish();
  return e;
}

// Every byte value, 32 to a string (the kernel's strings end at a NUL:
// the first group's NUL is where it ends, and then a byte of each).
std::vector<Event> EveryByte() {
  std::vector<Event> out;
  for (int first = 0; first < 256; first += 32) {
    std::string text;
    for (int c = first; c < first + 32; ++c) text += static_cast<char>(c);
    out.push_back(OneString(text));
  }
  for (int c = 0; c < 256; c += 51) out.push_back(OneString(std::string(1, static_cast<char>(c)), "byte"));
  // As chars: an array of all 256.
  RecordBytes b;
  Event chars{Plan("chars", "escape+0x0"), {}};
  chars.plan.ip_offset = b.Put(uint64_t{0x401100});
  uint8_t all[256];
  for (int c = 0; c < 256; ++c) all[c] = static_cast<uint8_t>(c);
  chars.plan.args.push_back(Arg("c", b.PutRaw(all, sizeof all), 1, ValueKind::kChar, 256));
  chars.bytes = b.Finish();
  out.push_back(std::move(chars));
  return out;
}

std::vector<Event> Utf8Cases() {
  std::vector<Event> out;
  for (std::string_view text : {
           std::string_view("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),  // 2, 3 and 4 bytes
           std::string_view("\xc3"),                                       // truncated at the end
           std::string_view("\xc3("),                                      // a continuation missing
           std::string_view("\xe2\x82"),                                   // 3 bytes cut to 2
           std::string_view("\xf0\x9f\x98"),                               // 4 cut to 3
           std::string_view("\xc0\x80 \xc1\xbf"),                          // overlong 2-byte
           std::string_view("\xe0\x80\x80"),                               // overlong 3-byte
           std::string_view("\xed\xa0\x80"),                               // a surrogate
           std::string_view("\xf4\x8f\xbf\xbf \xf4\x90\x80\x80"),          // U+10FFFF, and past it
           std::string_view("\xf5\x80\x80\x80 \xf8\x88\x80\x80\x80"),      // lead bytes never valid
           std::string_view("\x80\xbf"),                                   // continuations alone
           std::string_view("\xfe\xff"),                                   // never in UTF-8
           std::string_view("\xc2\xa0\xc2\x80\xdf\xbf"),                   // the 2-byte range's ends
       })
    out.push_back(OneString(text, "utf8"));
  return out;
}

// The header at its limits, and the kinds of probe.
std::vector<Event> Headers() {
  std::vector<Event> out;
  for (auto [pid, cpu, ts] : {std::tuple{0, 0, uint64_t{0}}, std::tuple{1234567, 99, uint64_t{999999999}},
                              std::tuple{12345678, 123, uint64_t{1000000000}}, std::tuple{-1, 1234, UINT64_MAX}}) {
    Event e = OneString("h", "header");
    e.pid = pid;
    e.cpu = cpu;
    e.ts = ts;
    out.push_back(std::move(e));
  }
  RecordBytes b;
  Event none{Plan("noargs", "noargs+0x0"), {}};
  none.plan.ip_offset = b.Put(uint64_t{0x401200});
  none.bytes = b.Finish();
  out.push_back(none);
  Event short_ip = none;  // a record too short for its probe address
  short_ip.plan.ip_offset = 16;
  out.push_back(std::move(short_ip));
  // Kernel probes: the address named by the kernel's symbols, or not.
  Event kernel = none;
  kernel.plan = Plan("kfunc", "kfunc_location", true);
  kernel.plan.ip_offset = none.plan.ip_offset;
  for (uint64_t ip : {uint64_t{0xffffffff81000010}, uint64_t{0xffffffff8100ffff}}) {
    std::memcpy(kernel.bytes.data() + 8, &ip, 8);
    out.push_back(kernel);
  }
  Event event_probe = kernel;  // an event probe's location, never an address
  event_probe.plan = Plan("eprobe", "syscalls.sys_enter_openat", true);
  event_probe.plan.event_probe = true;
  event_probe.plan.ip_offset = none.plan.ip_offset;
  out.push_back(std::move(event_probe));
  // Return probes: __probe_func then __probe_ret_ip.
  RecordBytes rb;
  Event ret{Plan("ret__return", "compute"), {}};
  ret.plan.retprobe = true;
  ret.plan.ip_offset = rb.Put(uint64_t{0x401300});
  ret.plan.ret_offset = rb.Put(uint64_t{0x401abc});
  ret.plan.args.push_back(Arg("retval", rb.Put(int64_t{-2}), 8, ValueKind::kSigned));
  ret.bytes = rb.Finish();
  ret.plan.caller = [](int pid, uint64_t func, uint64_t ret_ip) {
    return pid == 4242 && func == 0x401300 && ret_ip == 0x401abc ? std::string("main+0x5e") : std::string();
  };
  out.push_back(ret);
  ret.pid = 7;  // the caller cannot name it: its address
  out.push_back(ret);
  ret.plan.caller = nullptr;
  out.push_back(ret);
  Event kret = ret;  // a kernel return probe: the kernel's symbols name the caller
  kret.plan = Plan("kret__return", "vfs_read", true);
  kret.plan.retprobe = true;
  kret.plan.ip_offset = ret.plan.ip_offset;
  kret.plan.ret_offset = ret.plan.ret_offset;
  uint64_t kernel_ret = 0xffffffff81000020;
  std::memcpy(kret.bytes.data() + 16, &kernel_ret, 8);
  out.push_back(kret);
  Event comm_cases = OneString("c", "comm");  // comm lengths: see Comm() below
  for (int pid : {1, 2, 3, 4, 5}) {
    comm_cases.pid = pid;
    out.push_back(comm_cases);
  }
  Event hidden = none;
  hidden.plan.hidden = true;
  out.push_back(std::move(hidden));
  return out;
}

std::string Comm(int pid) {
  switch (pid) {
    case 1:
      return "";  // unknown: <...>
    case 2:
      return "fifteen-chars-x";
    case 3:
      return "sixteen-chars-xx";
    case 4:
      return "seventeen-chars-x";
    case 5:
      return "q\"uo\\te\tc";
    default:
      return "types";
  }
}

std::string KernelSymbol(uint64_t address) {
  if (address == 0xffffffff81000010) return "vfs_read+0x0";
  if (address == 0xffffffff81000020) return "ksys_read+0x6d";
  if (address == 0x81000010) return "low_symbol";
  return "";
}

// The stacks recorded after an event, as the ftrace events lay them out.
struct StackRecords {
  std::vector<uint8_t> kernel, user;
};

StackRecords Stacks(unsigned kernel_count, std::vector<uint64_t> kernel, int tgid, std::vector<uint64_t> user) {
  StackRecords s;
  RecordBytes k;
  k.Put(uint32_t{kernel_count});
  k.Put(uint32_t{0});
  for (uint64_t a : kernel) k.Put(a);
  s.kernel = k.Finish();
  RecordBytes u;
  u.Put(uint32_t(tgid));
  u.Put(uint32_t{0});
  for (uint64_t a : user) u.Put(a);
  s.user = u.Finish();
  return s;
}

std::string UserFrame(int pid, uint64_t address) {
  if (pid == 4242 && address == 0x401050) return "compute+0x10 (/usr/bin/demo)";
  if (pid == 4242 && address == 0x7f0000001000) return "__libc_start_main+0x80 (/usr/lib/libc.so.6)";
  return "";
}

Record RecordOf(const Event& e) {
  Record r;
  r.ts = e.ts;
  r.cpu = e.cpu;
  r.pid = e.pid;
  r.data = e.bytes.data();
  r.size = static_cast<unsigned>(e.bytes.size());
  return r;
}

std::string PrintAll(bool json, bool latency) {
  Printer printer({json, latency, {}}, Comm, KernelSymbol, UserFrame);
  std::string out;
  std::vector<Event> events;
  for (int seed = 0; seed < 3; ++seed) events.push_back(AllTypes(seed));
  for (auto* group : {EveryByte, Utf8Cases, Headers})
    for (Event& e : group()) events.push_back(std::move(e));
  for (const Event& e : events) {
    bool printed = printer.Print(e.plan, RecordOf(e), out);
    CHECK(printed == !e.plan.hidden);
  }
  return out;
}

// Stacks: kernel frames (named or not, a count longer than the record,
// ended by 0 or -1), user frames (named, unknown, ended early), own side
// only, and frames unwound from a capture.
std::string PrintStacks(bool json) {
  StackPlan plan;
  plan.kernel_id = 10;
  plan.user_id = 11;
  std::string out;
  auto print = [&](StackPlan stack_plan, const Event& event, const StackRecords& records, bool kernel, bool user,
                   UnwindFrames unwind = {}) {
    Printer printer({json, false, stack_plan}, Comm, KernelSymbol, UserFrame, std::move(unwind));
    EventStacks stacks;
    if (kernel) stacks.kernel = records.kernel.data(), stacks.kernel_size = unsigned(records.kernel.size());
    if (user) stacks.user = records.user.data(), stacks.user_size = unsigned(records.user.size());
    printer.Print(event.plan, RecordOf(event), out, kernel || user ? &stacks : nullptr);
  };
  Event user_event = OneString("stacked", "stacked");
  Event kernel_event = Headers()[6];  // kfunc, named by the kernel's symbols
  StackRecords both = Stacks(3, {0xffffffff81000010, 0xffffffff81abcdef, 0xffffffff81000020, 0xffffffff81000010}, 4242,
                             {0x401050, 0x7f0000001000, 0x7f0000009999, 0, 0x401050});
  print(plan, user_event, both, true, true);
  print(plan, user_event, both, true, false);
  print(plan, user_event, both, false, true);
  print(plan, kernel_event, both, true, true);
  StackPlan own = plan;
  own.own_side = true;
  print(own, kernel_event, both, true, true);
  print(own, user_event, both, true, true);
  StackRecords long_count =
      Stacks(100, {0xffffffff81000010, UINT64_MAX, 0xffffffff81000020}, 99, {UINT64_MAX, 0x401050});
  print(plan, user_event, long_count, true, true);
  StackRecords empty = Stacks(0, {}, 4242, {});
  print(plan, user_event, empty, true, true);
  // A capture: two registers and two chunks of stack, unwound by the CLI.
  RecordBytes b;
  Event captured{Plan("captured", "compute+0x0"), {}};
  captured.plan.ip_offset = b.Put(uint64_t{0x401050});
  captured.plan.args.push_back(Arg("a", b.Put(int32_t{5}), 4, ValueKind::kSigned));
  captured.plan.captured_registers = {{7, b.Put(uint64_t{0x7ffc0000})}, {16, b.Put(uint64_t{0x401050})}};
  std::string chunk(kCaptureChunkBytes, 'k');
  captured.plan.captured_stack = {b.PutRaw(chunk.data(), chunk.size()), b.PutRaw(chunk.data(), chunk.size())};
  captured.plan.captured_stack.push_back(b.Put(uint32_t{1}));  // a chunk cut short: not read
  captured.bytes = b.Finish();
  auto unwind = [](const EventPlan& p, int pid, uint64_t ip, const CapturedState& state) {
    std::string what = p.full_name + " pid " + std::to_string(pid) + " ip " + Hex(ip);
    for (auto [reg, value] : state.registers) what += " r" + std::to_string(reg) + "=" + Hex(value);
    what += " stack " + std::to_string(state.stack.size()) + " bytes";
    return std::vector<std::string>{what, "main+0x20 (/usr/bin/demo)"};
  };
  print(plan, captured, both, true, true, unwind);
  print(plan, captured, both, false, false, unwind);
  print(plan, captured, both, false, false);  // no unwinder: no stack
  return out;
}

void CheckGolden(const std::string& actual, const std::string& name) {
  WriteFile(FixturePath(name), actual);  // to diff and, once reviewed, copy over
  CHECK(actual == ReadFile(DataPath("trace/" + name)));
}

}  // namespace

TEST_CASE("printer golden: every fetch type, byte, escape and header, as text") {
  CheckGolden(PrintAll(false, false), "printer_cases.txt");
}

TEST_CASE("printer golden: the same as JSON, every line valid JSON") {
  std::string json = PrintAll(true, false);
  CheckGolden(json, "printer_cases.json");
  for (const std::string& line : SplitLines(json)) {
    INFO(line);
    CHECK(JsonValid(line));
  }
}

TEST_CASE("printer golden: stacks, as text and JSON") {
  CheckGolden(PrintStacks(false), "printer_stacks.txt");
  std::string json = PrintStacks(true);
  CheckGolden(json, "printer_stacks.json");
  for (const std::string& line : SplitLines(json)) {
    INFO(line);
    CHECK(JsonValid(line));
  }
}

TEST_CASE("printer golden: latency, as text and JSON") {
  for (bool json : {false, true}) {
    Printer printer({json, true, {}}, Comm, KernelSymbol);
    CallPairing calls;
    Event entry = OneString("in", "f");
    entry.plan.opens = {"kp/f__return"};
    Event ret = OneString("out", "f__return");
    ret.plan.retprobe = true;
    ret.plan.call_key = "kp/f__return";
    ret.plan.location = "f";
    std::string out;
    for (auto [event, ts] : {std::pair{&entry, uint64_t{1000}}, std::pair{&ret, uint64_t{1999}},
                             std::pair{&entry, uint64_t{5000}}, std::pair{&ret, uint64_t{4000}}}) {
      event->ts = ts;
      event->cpu = 0;
      auto call = calls.Next(event->plan, RecordOf(*event));
      printer.Print(event->plan, RecordOf(*event), out, nullptr, call ? &*call : nullptr);
    }
    CheckGolden(out, json ? "printer_latency.json" : "printer_latency.txt");
  }
}
