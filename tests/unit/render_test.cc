// SPDX-License-Identifier: GPL-2.0-or-later
//
// The render stage, from plain data: frames as printed taken apart, folded
// stacks, the flame graph's SVG (its frames, legend and notes, whole), the
// heat map's cells, the Trace Event Format's JSON, the percentiles and the
// one log2 bucket notation.
#include <catch2/catch.hpp>

#include "json_check.h"
#include "kprobectl/flame_graph.h"
#include "kprobectl/heat_map.h"
#include "kprobectl/json_object.h"
#include "kprobectl/quantiles.h"
#include "kprobectl/strings.h"
#include "kprobectl/timeline.h"

using namespace kprobectl;
using namespace kprobectl::test;

namespace {

StackFrame User(const std::string& name, const std::string& file = "/bin/callers") {
  return {name, file, StackFrame::kUser};
}
StackFrame Kernel(const std::string& name, const std::string& module = "") {
  return {name, module, StackFrame::kKernel};
}

// The 30:7 of `callers 30 7`: work() called from two callers.
StackProfile Callers() {
  StackProfile p;
  p.title = "kpt:work: hits by user-space stack";
  p.subtitle = "37 hits in 1.5 s, counted by kprobectl";
  p.stacks = {{{User("main"), User("caller_a"), User("work")}, 30},
              {{User("main"), User("caller_b"), User("work")}, 7}};
  return p;
}

// The SVG after its script: what is drawn.
std::string Drawn(const std::string& svg) {
  size_t at = svg.find("]]></script>\n");
  REQUIRE(at != std::string::npos);
  return svg.substr(at + 13);
}

}  // namespace

TEST_CASE("render: frames as trace and hist print them, taken apart") {
  struct Case {
    std::string printed;
    StackFrame::Side side;
    StackFrame expected;
  };
  std::vector<Case> cases = {
      {"do_sys_openat2+0x5/0xe0", StackFrame::kKernel, Kernel("do_sys_openat2")},
      {"do_sys_openat2+0x1c", StackFrame::kKernel, Kernel("do_sys_openat2")},
      {"ext4_file_read_iter+0x1c/0x80 [ext4]", StackFrame::kKernel, Kernel("ext4_file_read_iter", "ext4")},
      {"do_sys_openat2 [ext4]", StackFrame::kKernel, Kernel("do_sys_openat2", "ext4")},
      {"0xffffffffc02920de", StackFrame::kKernel, Kernel("0xffffffffc02920de")},
      {"work+0x0 (/bin/callers)", StackFrame::kUser, User("work")},
      {"shop::Cart::operator+=(long)+0x4 (/opt/shop bin/shop)", StackFrame::kUser,
       User("shop::Cart::operator+=(long)", "/opt/shop bin/shop")},
      {"main.(*T).Run+0x1a (/bin/gofx)", StackFrame::kUser, User("main.(*T).Run", "/bin/gofx")},
      {"0x1139 (/bin/callers)", StackFrame::kUser, User("0x1139")},
      {"0x7f33ded4524a ([unknown])", StackFrame::kUser, User("0x7f33ded4524a", "")},
      {"[uretprobe trampoline] (a return probe holds this frame's return address)", StackFrame::kUser,
       User("[uretprobe trampoline]", "")},
      {"operator+0x2 (/bin/x)", StackFrame::kUser, User("operator", "/bin/x")},
      {"f+0xzz (/bin/x)", StackFrame::kUser, User("f+0xzz", "/bin/x")},
      {"comm=a+0x1", StackFrame::kLabel, {"comm=a+0x1", "", StackFrame::kLabel}},
  };
  for (const Case& c : cases) {
    INFO(c.printed);
    CHECK(ParseFrame(c.printed, c.side) == c.expected);
  }
}

TEST_CASE("render: folded stacks, merged and escaped, kernel frames marked where both sides are") {
  StackProfile p = Callers();
  p.stacks.push_back({{User("main"), User("caller_a"), User("work")}, 2});  // merges with the first
  p.stacks.push_back({{User("main"), User("a;b%c\nd")}, 1});
  p.stacks.push_back({{}, 3});
  p.stacks.push_back({{User("never")}, 0});
  CHECK(FoldedStacks(p) ==
        "[no stack] 3\n"
        "main;a%3Bb%25c%0Ad 1\n"
        "main;caller_a;work 32\n"
        "main;caller_b;work 7\n");
  // The kernel alone: names as they are; with user frames, _[k].
  StackProfile kernel;
  kernel.stacks = {{{Kernel("entry_SYSCALL_64"), Kernel("do_sys_openat2")}, 4}};
  CHECK(FoldedStacks(kernel) == "entry_SYSCALL_64;do_sys_openat2 4\n");
  kernel.stacks.push_back(
      {{{"cat", "", StackFrame::kLabel}, User("open64", "/lib/libc.so.6"), Kernel("entry_SYSCALL_64")}, 1});
  CHECK(FoldedStacks(kernel) ==
        "cat;open64;entry_SYSCALL_64_[k] 1\n"
        "entry_SYSCALL_64_[k];do_sys_openat2_[k] 4\n");
}

TEST_CASE("render: the flame graph's frames, as wide as their counts, 30:7") {
  std::string svg = FlameGraphSvg(Callers());
  CHECK(
      svg.starts_with("<?xml version=\"1.0\" standalone=\"no\"?>\n<svg version=\"1.1\" width=\"1200\" height=\"182\" "
                      "viewBox=\"0 0 1200 182\" xmlns=\"http://www.w3.org/2000/svg\" onload=\"init(evt)\">\n"));
  CHECK(Drawn(svg) ==
        "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#f8f8f4\"/>\n"
        "<text id=\"title\" x=\"600\" y=\"24\">kpt:work: hits by user-space stack</text>\n"
        "<text id=\"subtitle\" x=\"600\" y=\"42\">37 hits in 1.5 s, counted by kprobectl</text>\n"
        "<text id=\"unzoom\" class=\"button hide\" x=\"10\" y=\"24\">Reset Zoom</text>\n"
        "<text id=\"search\" class=\"button\" x=\"1190\" y=\"24\" style=\"text-anchor:end\">Search</text>\n"
        "<text id=\"omitted\" x=\"600\" y=\"56\" class=\"note\" style=\"text-anchor:middle\"></text>\n"
        "<rect x=\"10\" y=\"61\" width=\"11\" height=\"11\" fill=\"#4ca6e6\"/><text x=\"25\" y=\"70.5\" "
        "class=\"note\">user: callers</text>\n"
        "<g id=\"frames\" data-pad=\"10\" data-char=\"7.08\">\n"
        "<g data-n=\"all\"><title>all: 37 samples, 100%</title><rect x=\"10\" y=\"132\" width=\"1180\" "
        "height=\"15\" fill=\"#acacac\" rx=\"2\" ry=\"2\"/><text x=\"13\" y=\"143.5\">all</text></g>\n"
        "<g data-n=\"main\"><title>main (/bin/callers): 37 samples, 100%</title><rect x=\"10\" y=\"116\" "
        "width=\"1180\" height=\"15\" fill=\"#79bcec\" rx=\"2\" ry=\"2\"/><text x=\"13\" y=\"127.5\">main</text></g>\n"
        "<g data-n=\"caller_a\"><title>caller_a (/bin/callers): 30 samples, 81.08%</title><rect x=\"10\" "
        "y=\"100\" width=\"956.76\" height=\"15\" fill=\"#58abe7\" rx=\"2\" ry=\"2\"/><text x=\"13\" "
        "y=\"111.5\">caller_a</text></g>\n"
        "<g data-n=\"work\"><title>work (/bin/callers): 30 samples, 81.08%</title><rect x=\"10\" y=\"84\" "
        "width=\"956.76\" height=\"15\" fill=\"#41a0e4\" rx=\"2\" ry=\"2\"/><text x=\"13\" y=\"95.5\">work</text></g>\n"
        "<g data-n=\"caller_b\"><title>caller_b (/bin/callers): 7 samples, 18.92%</title><rect x=\"966.76\" "
        "y=\"100\" width=\"223.24\" height=\"15\" fill=\"#6eb6ea\" rx=\"2\" ry=\"2\"/><text x=\"969.76\" "
        "y=\"111.5\">caller_b</text></g>\n"
        "<g data-n=\"work\"><title>work (/bin/callers): 7 samples, 18.92%</title><rect x=\"966.76\" y=\"84\" "
        "width=\"223.24\" height=\"15\" fill=\"#41a0e4\" rx=\"2\" ry=\"2\"/><text x=\"969.76\" "
        "y=\"95.5\">work</text></g>\n"
        "</g>\n"
        "<text id=\"details\" x=\"10\" y=\"170\"> </text>\n"
        "<text id=\"matched\" x=\"1190\" y=\"170\" style=\"text-anchor:end\"> </text>\n"
        "</svg>\n");
}

TEST_CASE("render: the flame graph's colours say the side and the file, neighbours apart") {
  StackProfile p;
  p.stacks = {{{User("main", "/bin/app"), User("read", "/lib/libc.so.6"), Kernel("ksys_read"),
                Kernel("ext4_file_read_iter", "ext4")},
               5}};
  std::string svg = FlameGraphSvg(p);
  // The legend: the busiest place first; user space blue-green-purple, the
  // kernel orange, its modules another warm hue.
  CHECK(svg.find("<text x=\"25\" y=\"70.5\" class=\"note\">user: app</text>") != std::string::npos);
  CHECK(svg.find(">user: libc.so.6</text>") != std::string::npos);
  CHECK(svg.find(">kernel: kernel</text>") != std::string::npos);
  CHECK(svg.find(">kernel: [ext4]</text>") != std::string::npos);
  CHECK(svg.find("<title>ext4_file_read_iter (kernel module ext4): 5 samples, 100%</title>") != std::string::npos);
  CHECK(svg.find("<title>ksys_read (kernel): 5 samples, 100%</title>") != std::string::npos);
  CHECK(svg.find("<title>read (/lib/libc.so.6): 5 samples, 100%</title>") != std::string::npos);
  // Siblings of one file never share a colour, whatever their names hash to.
  StackProfile many;
  for (int i = 0; i < 40; ++i) many.stacks.push_back({{User("f" + std::to_string(i))}, 1});
  std::string drawn = FlameGraphSvg(many);
  std::string previous;
  size_t rects = 0;
  for (size_t at = drawn.find("<g data-n=\"f"); at != std::string::npos; at = drawn.find("<g data-n=\"f", at + 1)) {
    size_t fill = drawn.find("fill=\"", at) + 6;
    std::string colour = drawn.substr(fill, 7);
    CHECK(colour != previous);
    previous = colour;
    ++rects;
  }
  CHECK(rects == 40);
}

TEST_CASE("render: a frame narrower than a pixel is not drawn, and counted") {
  // 30,000 samples in 1180 px: one sample is 0.04 px.
  StackProfile p;
  p.title = "t";
  p.stacks = {{{User("main"), User("hot")}, 29000}};
  for (int i = 0; i < 100; ++i)
    p.stacks.push_back({{User("main"), User("cold" + std::to_string(i)), User("leaf")}, 10});
  std::string svg = FlameGraphSvg(p);
  CHECK(svg.find("<text id=\"omitted\" x=\"600\" y=\"56\" class=\"note\" style=\"text-anchor:middle\">200 frames "
                 "narrower than 1 px not drawn (the stacks of 1000 of 30000 samples cut short there)</text>") !=
        std::string::npos);
  // As tall as what is drawn: all, main, hot (the cold ones' leaves left out).
  CHECK(svg.find("height=\"166\"") != std::string::npos);
  CHECK(svg.find("data-n=\"cold0\"") == std::string::npos);
  CHECK(svg.find("<title>hot (/bin/callers): 29000 samples, 96.67%</title>") != std::string::npos);
  // Names are text, escaped; bytes that are not UTF-8 written as \xNN.
  StackProfile odd;
  odd.title = "a<b>&\"c\"";
  odd.stacks = {{{User("operator<<"), {"caf\xc3\xa9\xff", "", StackFrame::kLabel}}, 1}};
  std::string escaped = FlameGraphSvg(odd);
  CHECK(escaped.find(">a&lt;b&gt;&amp;&quot;c&quot;</text>") != std::string::npos);
  CHECK(escaped.find("data-n=\"operator&lt;&lt;\"") != std::string::npos);
  CHECK(escaped.find("data-n=\"caf\xc3\xa9\\xff\"") != std::string::npos);
}

TEST_CASE("render: the log2 buckets, their notation, the percentiles") {
  struct Bucket {
    uint64_t value, k;
    std::string text;
    uint64_t low, high;
  };
  for (const Bucket& b :
       std::vector<Bucket>{{0, 0, "[0, 1]", 0, 1},
                           {1, 0, "[0, 1]", 0, 1},
                           {2, 1, "(1, 2]", 1, 2},
                           {3, 2, "(2, 4]", 3, 4},
                           {2048, 11, "(1024, 2048]", 1025, 2048},
                           {2049, 12, "(2048, 4096]", 2049, 4096},
                           {UINT64_MAX, 64, "(9223372036854775808, 2^64]", (uint64_t{1} << 63) + 1, UINT64_MAX}}) {
    INFO(b.value);
    CHECK(Log2Bucket(b.value) == b.k);
    CHECK(Log2BucketText(b.k) == b.text);
    CHECK(Log2BucketLow(b.k) == b.low);
    CHECK(Log2BucketHigh(b.k) == b.high);
  }
  std::vector<uint64_t> thousand;
  for (uint64_t i = 1000; i >= 1; --i) thousand.push_back(i);
  CHECK(QuantileLine(ExactQuantiles(thousand), "ns") ==
        "p50 500 ns, p90 900 ns, p99 990 ns, p99.9 999 ns, max 1000 ns (exact: each call was seen)");
  // 37 calls: ranks 19, 34, 37, 37.
  std::vector<uint64_t> calls;
  for (uint64_t i = 1; i <= 37; ++i) calls.push_back(i * 10);
  CHECK(QuantileLine(ExactQuantiles(calls), "ns") ==
        "p50 190 ns, p90 340 ns, p99 370 ns, p99.9 370 ns, max 370 ns (exact: each call was seen)");
  CHECK(QuantileLine(
            BucketQuantiles({{"(512, 1024]", 50}, {"(1024, 2048]", 45}, {"(2048, 4096]", 4}, {"(4096, 8192]", 1}}),
            "ns") ==
        "p50 in (512, 1024] ns, p90 in (1024, 2048] ns, p99 in (2048, 4096] ns, p99.9 in (4096, 8192] ns, max in "
        "(4096, 8192] ns (bounds: only buckets were counted)");
  CHECK(QuantileLine(ExactQuantiles({}), "ns").empty());
  CHECK(QuantileLine(BucketQuantiles({{"[0, 1]", 0}}), "ns").empty());
}

TEST_CASE("render: the heat map's columns and rows, and its cells") {
  CHECK(ColumnSeconds(143e-3) == Approx(2e-3));
  CHECK(ColumnSeconds(10) == Approx(0.1));
  CHECK(ColumnSeconds(101) == Approx(2));
  CHECK(ColumnSeconds(0) == Approx(1e-6));
  // Calls ending at 0.5 ms (1500 ns, 3000 ns) and 2.5 ms (700 ns, twice),
  // from 0, in 1 ms columns.
  std::vector<std::pair<uint64_t, uint64_t>> calls = {
      {500000, 1500}, {500000, 3000}, {2500000, 700}, {2500000, 700}, {2999999, 700}};
  HeatMapSeries s = Log2Series("nap", calls, 0, 1e-3, 3);
  CHECK(s.buckets == std::vector<std::string>{"(512, 1024]", "(1024, 2048]", "(2048, 4096]"});
  CHECK(s.cells == std::vector<std::vector<uint64_t>>{{0, 1, 1}, {0, 0, 0}, {3, 0, 0}});
  CHECK(s.summary ==
        "5 calls: p50 700 ns, p90 3000 ns, p99 3000 ns, p99.9 3000 ns, max 3000 ns (exact: each call was seen)");
  HeatMap map;
  map.title = "Time from entry to return: nap";
  map.column_seconds = 1e-3;
  map.series = {s};
  std::string svg = HeatMapSvg(map);
  std::vector<std::string> cells;
  for (const std::string& line : SplitLines(svg))
    if (line.starts_with("<rect class=\"cell\"")) cells.push_back(line);
  // The row of (512, 1024] at the bottom, 18 px a row; columns 361.6 px
  // from the labels' edge (12 characters of 6.6 px, and 16).
  CHECK(cells == std::vector<std::string>{
                     "<rect class=\"cell\" x=\"818.4\" y=\"140\" width=\"361.6\" height=\"18\" fill=\"#800026\">"
                     "<title>2 ms to 3 ms, (512, 1024] ns: 3 calls</title></rect>",
                     "<rect class=\"cell\" x=\"95.2\" y=\"122\" width=\"361.6\" height=\"18\" fill=\"#ffffcc\">"
                     "<title>0 s to 1 ms, (1024, 2048] ns: 1 call</title></rect>",
                     "<rect class=\"cell\" x=\"95.2\" y=\"104\" width=\"361.6\" height=\"18\" fill=\"#ffffcc\">"
                     "<title>0 s to 1 ms, (2048, 4096] ns: 1 call</title></rect>"});
  CHECK(svg.find(">calls per cell: 1</text>") != std::string::npos);
  CHECK(svg.find(">3 (log scale)</text>") != std::string::npos);
}

TEST_CASE("render: a timeline in the Trace Event Format") {
  Timeline t;
  t.producer = "kprobectl trace";
  t.processes = {{100, "demo"}};
  t.tracks = {{{100, 100}, "demo"}, {{100, Timeline::kGoroutineTracks}, "goroutine (g 0xc000006000)"}};
  t.slices = {{100, 100, 2000, 2500, "work", "kpt", "{\"i\":1,\"return\":{\"r\":3}}"},
              {100, 100, 1000, 3000500, "caller_a", "kpt", ""},
              {100, Timeline::kGoroutineTracks, 1000, 1200, "main.f", "g", ""}};
  t.instants = {{100, 100, 1500, "kpt:mark", "kpt", "{\"s\":\"a\\\"b\"}", false},
                {0, 0, 2999, "3 events lost (CPU 1's ring buffer overran)", "kprobectl", "", true}};
  std::string json = TraceEventJson(t);
  CHECK(json ==
        "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"kprobectl trace\"},\"traceEvents\":[\n"
        "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":100,\"args\":{\"name\":\"demo\"}},\n"
        "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":100,\"tid\":100,\"args\":{\"name\":\"demo\"}},\n"
        "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":100,\"tid\":100,\"args\":{\"sort_index\":100}},\n"
        "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":100,\"tid\":1073741824,\"args\":{\"name\":\"goroutine (g "
        "0xc000006000)\"}},\n"
        "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":100,\"tid\":1073741824,\"args\":{\"sort_index\":"
        "1073741824}},\n"
        "{\"ph\":\"X\",\"name\":\"caller_a\",\"cat\":\"kpt\",\"pid\":100,\"tid\":100,\"ts\":1.000,\"dur\":2999.500},\n"
        "{\"ph\":\"X\",\"name\":\"main.f\",\"cat\":\"g\",\"pid\":100,\"tid\":1073741824,\"ts\":1.000,\"dur\":0.200},\n"
        "{\"ph\":\"i\",\"name\":\"kpt:mark\",\"cat\":\"kpt\",\"pid\":100,\"tid\":100,\"ts\":1.500,\"s\":\"t\","
        "\"args\":{\"s\":\"a\\\"b\"}},\n"
        "{\"ph\":\"X\",\"name\":\"work\",\"cat\":\"kpt\",\"pid\":100,\"tid\":100,\"ts\":2.000,\"dur\":0.500,"
        "\"args\":{\"i\":1,\"return\":{\"r\":3}}},\n"
        "{\"ph\":\"i\",\"name\":\"3 events lost (CPU 1's ring buffer overran)\",\"cat\":\"kprobectl\",\"pid\":0,"
        "\"tid\":0,\"ts\":2.999,\"s\":\"g\"}\n"
        "]}\n");
  CHECK(JsonValid(json));
}

TEST_CASE("render: JSON objects, escaped as trace --json escapes") {
  std::string object = JsonObject()
                           .String("name", "a\"b\n\xff")
                           .Number("n", 18446744073709551615u)
                           .Signed("s", -3)
                           .Bool("t", true)
                           .Raw("list", JsonStrings({"x", "y"}))
                           .str();
  CHECK(object ==
        "{\"name\":\"a\\\"b\\n\\u00ff\",\"n\":18446744073709551615,\"s\":-3,\"t\":true,\"list\":[\"x\",\"y\"]}");
  CHECK(JsonValid(object));
  CHECK(JsonObject().str() == "{}");
}
