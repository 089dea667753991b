// SPDX-License-Identifier: GPL-2.0-or-later
//
// The decoder and printer on a ring-buffer page captured from the real
// kernel (tests/data/trace, see its README): every integer type at its
// limits, strings with escapes and bytes that are not UTF-8, a faulting
// pointer, bitfields, an array, a return probe. Golden text and JSON.
#include "kprobectl/trace_printer.h"

#include <catch2/catch.hpp>
#include <cstring>

#include "json_check.h"
#include "kprobectl/call_pairing.h"
#include "kprobectl/strings.h"
#include "kprobectl/trace_decoder.h"
#include "test_support.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

std::string PrintCaptured(bool json) {
  std::vector<std::pair<std::string, std::string>> formats;
  for (const char* event : {"all", "ret__return", "tick"})
    formats.emplace_back("kptypes", ReadFile(DataPath(std::string("trace/") + event + ".format")));
  auto decoder = EventDecoder::FromFormats(formats);
  REQUIRE(decoder);
  std::map<int, EventPlan> plans;
  for (const EventFormat& format : (*decoder)->formats()) {
    auto plan = PlanEvent(format);
    REQUIRE(plan);
    plan->location = format.name == "ret__return" ? "all_types" : format.name == "tick" ? "tick+0x0" : "all_types+0x0";
    plan->caller = [](int, uint64_t, uint64_t) { return std::string("main+0x5e"); };
    plans[format.id] = *plan;
  }
  std::string raw = ReadFile(DataPath("trace/types.cpu0.raw"));
  REQUIRE(raw.size() == 4096);
  std::vector<Record> records;
  uint64_t missed = 0;
  REQUIRE((*decoder)->DecodePage({reinterpret_cast<const uint8_t*>(raw.data()), raw.size()}, 0, records, &missed));
  CHECK(missed == 0);
  Printer printer(
      {json, false, {}}, [](int) { return std::string("types"); }, nullptr);
  std::string out;
  for (const Record& r : records) printer.Print(plans.at(r.type), r, out);
  return out;
}

}  // namespace

TEST_CASE("captured page: golden text") {
  std::string text = PrintCaptured(false);
  WriteFile(FixturePath("trace-actual.txt"), text);
  CHECK(text == ReadFile(DataPath("trace/types.txt")));
}

TEST_CASE("captured page: golden JSON, and every line is valid JSON") {
  std::string json = PrintCaptured(true);
  WriteFile(FixturePath("trace-actual.json"), json);
  CHECK(json == ReadFile(DataPath("trace/types.json")));
  for (const std::string& line : SplitLines(json)) {
    INFO(line);
    CHECK(JsonValid(line));
  }
}

TEST_CASE("escaping: C strings and JSON, with bytes that are not UTF-8") {
  std::string c, j;
  AppendCString(c, std::string_view("a\"b\\c\nd\te\x01\xff\xc3\xa9", 13));
  CHECK(c == "\"a\\\"b\\\\c\\nd\\te\\x01\\xff\xc3\xa9\"");
  AppendJsonString(j, std::string_view("a\"b\\c\nd\te\x01\xff\xc3\xa9", 13));
  CHECK(j == "\"a\\\"b\\\\c\\nd\\te\\u0001\\u00ff\xc3\xa9\"");
  CHECK(JsonValid("{\"s\":" + j + "}"));
}

TEST_CASE("plans read the print fmt: x versus u, strings, chars, arrays") {
  EventFormat f;
  f.id = 7;
  f.system = "g";
  f.name = "e";
  f.fields = {{"__probe_ip", 8, 8, false, false, 0}, {"a", 16, 4, false, false, 0}, {"b", 20, 4, false, false, 0},
              {"c", 24, 1, false, false, 0},         {"s", 25, 4, true, true, 0},   {"v", 29, 8, true, false, 2}};
  f.print_fmt = "(%lx) a=0x%x b=%u c='%c' s=\"%s\" v={%Ld,%Ld}";
  auto plan = PlanEvent(f);
  REQUIRE(plan);
  REQUIRE(plan->args.size() == 5);
  CHECK(plan->args[0].kind == ValueKind::kHex);
  CHECK(plan->args[1].kind == ValueKind::kUnsigned);
  CHECK(plan->args[2].kind == ValueKind::kChar);
  CHECK(plan->args[3].kind == ValueKind::kString);
  CHECK(plan->args[4].kind == ValueKind::kSigned);
  CHECK(plan->args[4].count == 2);
  EventFormat not_probe = f;
  not_probe.fields.erase(not_probe.fields.begin());
  CHECK_FALSE(PlanEvent(not_probe));
}

TEST_CASE("counted strings: u8[N] and NAME__len print as a string cut at the length, text and JSON") {
  EventFormat f;
  f.id = 9;
  f.system = "g";
  f.name = "e";
  // p: u8[4] and p__len; q: u8[2] with a length field of another name.
  f.fields = {{"__probe_ip", 8, 8, false, false, 0},
              {"p", 16, 4, false, false, 1},
              {"p__len", 20, 8, true, false, 0},
              {"q", 28, 2, false, false, 1},
              {"qlen", 30, 8, true, false, 0}};
  f.print_fmt = "(%lx) p={0x%x,0x%x,0x%x,0x%x} p__len=%Ld q={0x%x,0x%x} qlen=%Ld";
  auto plan = PlanEvent(f);
  REQUIRE(plan);
  REQUIRE(plan->args.size() == 4);
  CHECK(plan->args[0].kind == ValueKind::kCountedString);
  CHECK(plan->args[2].kind == ValueKind::kHex);
  plan->location = "f+0x0";
  struct Case {
    const char* bytes;  // 4 of them, NULs included
    int64_t length;
    std::string text, json;
  } cases[] = {
      {"ab\0\0", 2, "p=\"ab\" p__len=2", "\"p\":\"ab\",\"p__len\":2"},
      {"\0\0\0\0", 0, "p=\"\" p__len=0", "\"p\":\"\",\"p__len\":0"},
      {"a\0\"\n", 4, "p=\"a\\x00\\\"\\n\" p__len=4", "\"p\":\"a\\u0000\\\"\\n\",\"p__len\":4"},
      {"abcd", 300, "p=\"abcd\"... p__len=300", "\"p\":\"abcd\",\"p__len\":300"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    std::string data(38, '\0');
    data.replace(16, 4, c.bytes, 4);
    std::memcpy(data.data() + 20, &c.length, 8);
    data.replace(28, 2, "xy");
    Record r;
    r.type = 9;
    r.data = reinterpret_cast<const uint8_t*>(data.data());
    r.size = static_cast<unsigned>(data.size());
    for (bool json : {false, true}) {
      Printer printer(
          {json, false, {}}, [](int) { return std::string("t"); }, nullptr);
      std::string out;
      printer.Print(*plan, r, out);
      if (json)
        CHECK(out ==
              "{\"time\":0.000000,\"cpu\":0,\"pid\":0,\"comm\":\"t\",\"event\":\"g:e\",\"probe\":\"f+0x0\",\"args\":{" +
                  c.json + ",\"q\":[\"0x78\",\"0x79\"],\"qlen\":0}}\n");
      else
        CHECK(out == "               t-0       [000] 0.000000: g:e: (f+0x0) " + c.text + " q={0x78,0x79} qlen=0\n");
      if (json) CHECK(JsonValid(out.substr(0, out.size() - 1)));
    }
  }
}

TEST_CASE("latency: entry and return paired per thread, log2 histogram") {
  EventFormat entry_format;
  entry_format.id = 1;
  entry_format.system = "g";
  entry_format.name = "f";
  entry_format.fields = {{"__probe_ip", 8, 8, false, false, 0}};
  entry_format.print_fmt = "(%lx)";
  EventFormat ret_format = entry_format;
  ret_format.id = 2;
  ret_format.name = "f__return";
  ret_format.fields = {{"__probe_func", 8, 8, false, false, 0}, {"__probe_ret_ip", 16, 8, false, false, 0}};
  ret_format.print_fmt = "(%lx <- %lx)";
  EventPlan entry = *PlanEvent(entry_format), ret = *PlanEvent(ret_format);
  entry.opens = {"g/f__return"};
  ret.call_key = "g/f__return";
  entry.location = "f+0x0";
  ret.location = "f";
  uint8_t data[24] = {};
  Printer printer(
      {false, true, {}}, [](int) { return std::string("x"); }, nullptr);
  CallPairing calls;
  std::string out;
  auto at = [&](uint64_t ts, int pid, bool is_ret) {
    Record r;
    r.ts = ts;
    r.pid = pid;
    r.data = data;
    r.size = sizeof data;
    auto call = calls.Next(is_ret ? ret : entry, r);
    printer.Print(is_ret ? ret : entry, r, out, nullptr, call ? &*call : nullptr);
  };
  at(1000, 1, false);
  at(1500, 2, false);
  at(3000, 1, true);  // 2000 ns
  at(9500, 2, true);  // 8000 ns
  at(9600, 3, true);  // no entry seen: no latency
  CHECK(out ==
        "               x-1       [000] 0.000001: g:f: (f+0x0)\n"
        "               x-2       [000] 0.000001: g:f: (f+0x0)\n"
        "               x-1       [000] 0.000003: g:f__return: (0x0 <- f) latency=2.000us\n"
        "               x-2       [000] 0.000009: g:f__return: (0x0 <- f) latency=8.000us\n"
        "               x-3       [000] 0.000009: g:f__return: (0x0 <- f)\n");  // no entry seen: no latency
  CHECK(printer.Histograms() ==
        "\nf: 2 calls, min 2000 ns, avg 5000 ns, max 8000 ns\n"
        "p50 2000 ns, p90 8000 ns, p99 8000 ns, p99.9 8000 ns, max 8000 ns (exact: each call was seen)\n"
        "(1024, 2048]       1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
        "(2048, 4096]       0 |                                                  |\n"
        "(4096, 8192]       1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n");
}

// Go's FUNC%return: plain probes on the return instructions, a call paired
// by its goroutine (the hidden __kp_g argument), whichever thread runs it
// when it returns; the histogram named by the function, not FUNC+OFF.
TEST_CASE("latency: a Go return instruction paired with its entry by goroutine, not thread") {
  EventFormat entry_format;
  entry_format.id = 1;
  entry_format.system = "g";
  entry_format.name = "f__entry";
  entry_format.fields = {{"__probe_ip", 8, 8, false, false, 0}, {"__kp_g", 16, 8, false, false, 0}};
  entry_format.print_fmt = "(%lx) __kp_g=0x%Lx";
  EventFormat ret_format = entry_format;
  ret_format.id = 2;
  ret_format.name = "f__return";
  EventPlan entry = *PlanEvent(entry_format), ret = *PlanEvent(ret_format);
  CHECK(entry.args.empty());  // the goroutine is never printed
  REQUIRE(ret.call_offset);
  entry.opens = {"g/f__return"};
  ret.call_key = "g/f__return";
  ret.latency_return = true;
  entry.location = "main.f+0x0";
  ret.location = "main.f+0x2c";
  Printer printer(
      {false, true, {}}, [](int) { return std::string("g"); }, nullptr);
  CallPairing calls;
  std::string out;
  auto at = [&](uint64_t ts, int pid, uint64_t goroutine, bool is_ret) {
    uint8_t data[24] = {};
    std::memcpy(data + 16, &goroutine, 8);
    Record r;
    r.ts = ts;
    r.pid = pid;
    r.data = data;
    r.size = sizeof data;
    auto call = calls.Next(is_ret ? ret : entry, r);
    printer.Print(is_ret ? ret : entry, r, out, nullptr, call ? &*call : nullptr);
  };
  at(1000, 1, 0xa0, false);
  at(2000, 1, 0xb0, false);  // the thread runs another goroutine
  at(5000, 2, 0xa0, true);   // the first returns on another thread: 4000 ns
  at(9000, 1, 0xb0, true);   // 7000 ns
  CHECK(out ==
        "               g-1       [000] 0.000001: g:f__entry: (main.f+0x0)\n"
        "               g-1       [000] 0.000002: g:f__entry: (main.f+0x0)\n"
        "               g-2       [000] 0.000005: g:f__return: (main.f+0x2c) latency=4.000us\n"
        "               g-1       [000] 0.000009: g:f__return: (main.f+0x2c) latency=7.000us\n");
  CHECK(printer.Histograms() ==
        "\nmain.f: 2 calls, min 4000 ns, avg 5500 ns, max 7000 ns\n"
        "p50 4000 ns, p90 7000 ns, p99 7000 ns, p99.9 7000 ns, max 7000 ns (exact: each call was seen)\n"
        "(2048, 4096]       1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
        "(4096, 8192]       1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n");
}
