// SPDX-License-Identifier: GPL-2.0-or-later
//
// Decoder and printer speed on a ring-buffer page captured from the kernel
// (tests/data/trace): the page is decoded and every event formatted, again
// and again, on one core, for text and for JSON. Prints events per second
// of the process's CPU time (the machine is shared: wall time would count
// the other processes' turns).
// Usage: trace_decode_bench DATA_DIR [SECONDS]
#include <time.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "kprobectl/trace_decoder.h"
#include "kprobectl/trace_printer.h"

using namespace kprobectl;

namespace {

double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DATA_DIR [SECONDS]\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  double seconds = argc > 2 ? std::atof(argv[2]) : 2.0;
  std::vector<std::pair<std::string, std::string>> formats;
  for (const char* event : {"all", "ret__return", "tick"})
    formats.emplace_back("kptypes", Read(dir + "/" + event + ".format"));
  auto decoder = EventDecoder::FromFormats(formats);
  if (!decoder) {
    std::fprintf(stderr, "%s\n", decoder.error().message.c_str());
    return 1;
  }
  std::map<int, EventPlan> plans;
  for (const EventFormat& f : (*decoder)->formats()) {
    auto plan = PlanEvent(f);
    if (!plan) return 1;
    plan->location = f.name + "+0x0";
    plan->caller = [](int, uint64_t, uint64_t) { return std::string("main+0x5e"); };
    plans[f.id] = *plan;
  }
  std::vector<const EventPlan*> plan_of(65536, nullptr);
  for (auto& [id, plan] : plans) plan_of[static_cast<size_t>(id)] = &plan;
  std::string page = Read(dir + "/types.cpu0.raw");
  std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(page.data()), page.size());

  for (bool json : {false, true}) {
    Printer printer(
        {json, false, {}}, [](int) { return std::string("types"); }, nullptr);
    std::vector<Record> records;
    std::string out;
    uint64_t events = 0, output_bytes = 0;
    double start = CpuSeconds();
    double elapsed = 0;
    while (elapsed < seconds) {
      for (int round = 0; round < 1000; ++round) {
        records.clear();
        (void)(*decoder)->DecodePage(bytes, 0, records, nullptr);
        for (const Record& r : records) printer.Print(*plan_of[static_cast<size_t>(r.type)], r, out);
        events += records.size();
        output_bytes += out.size();
        out.clear();
      }
      elapsed = CpuSeconds() - start;
    }
    std::printf("%-5s %10.0f events/s  %7.1f MB/s of output  (%llu events in %.2f s of CPU)\n", json ? "json" : "text",
                static_cast<double>(events) / elapsed, static_cast<double>(output_bytes) / elapsed / 1e6,
                static_cast<unsigned long long>(events), elapsed);
  }
  return 0;
}
