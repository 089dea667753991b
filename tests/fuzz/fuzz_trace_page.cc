// SPDX-License-Identifier: GPL-2.0-or-later
//
// Fuzz target: a ring-buffer page, decoded with the formats captured from a
// real kernel (tests/data/trace) and every record printed as text and JSON,
// as `kprobectl trace` does.
#include <fstream>
#include <map>
#include <sstream>

#include "fuzz_target.h"
#include "kprobectl/trace_decoder.h"
#include "kprobectl/trace_printer.h"

using namespace kprobectl;

namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Setup {
  std::unique_ptr<EventDecoder> decoder;
  std::map<int, EventPlan> plans;
  Setup() {
    std::vector<std::pair<std::string, std::string>> formats;
    for (const char* event : {"all", "ret__return", "tick"})
      formats.emplace_back("kptypes", Read(std::string(KP_FUZZ_DATA_DIR) + "/trace/" + event + ".format"));
    auto made = EventDecoder::FromFormats(formats);
    KP_FUZZ_CHECK(made.has_value());
    decoder = std::move(*made);
    for (const EventFormat& f : decoder->formats()) {
      auto plan = PlanEvent(f);
      KP_FUZZ_CHECK(plan.has_value());
      plan->location = f.name + "+0x0";
      plans[f.id] = *plan;
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Setup setup;  // read-only after the first call
  std::vector<Record> records;
  uint64_t missed = 0;
  if (!setup.decoder->DecodePage({data, size}, 0, records, &missed)) return 0;
  for (bool json : {false, true}) {
    Printer printer(
        {json, false, {}}, [](int) { return std::string("comm"); }, [](uint64_t) { return std::string("sym+0x1"); });
    std::string out;
    for (const Record& r : records) {
      KP_FUZZ_CHECK(r.data >= data && r.data + r.size <= data + size);
      auto plan = setup.plans.find(r.type);
      if (plan != setup.plans.end()) printer.Print(plan->second, r, out);
    }
  }
  return 0;
}
