// SPDX-License-Identifier: GPL-2.0-or-later
#include "kprobectl/quantiles.h"

#include <algorithm>
#include <bit>

namespace kprobectl {

namespace {

// The percentiles told, and the rank of each among `n` values (1-based,
// nearest rank): ceil(p * n / 1000) in tenths of a percent, in integers.
constexpr struct {
  const char* name;
  uint64_t per_mille;
} kPercentiles[] = {{"p50", 500}, {"p90", 900}, {"p99", 990}, {"p99.9", 999}};

uint64_t Rank(uint64_t per_mille, uint64_t n) { return std::max<uint64_t>(1, (per_mille * n + 999) / 1000); }

}  // namespace

uint64_t Log2Bucket(uint64_t value) {
  if (value <= 1) return 0;
  return static_cast<uint64_t>(std::bit_width(value - 1));
}

uint64_t Log2BucketLow(uint64_t k) { return k <= 1 ? k : (uint64_t{1} << (k - 1)) + 1; }

uint64_t Log2BucketHigh(uint64_t k) { return k >= 64 ? UINT64_MAX : uint64_t{1} << k; }

std::string Log2BucketText(uint64_t k) {
  if (k == 0) return "[0, 1]";
  return "(" + std::to_string(uint64_t{1} << (k - 1)) + ", " + (k < 64 ? std::to_string(uint64_t{1} << k) : "2^64") +
         "]";
}

Quantiles ExactQuantiles(std::vector<uint64_t> values) {
  Quantiles out;
  out.exact = true;
  out.count = values.size();
  if (values.empty()) return out;
  std::sort(values.begin(), values.end());
  for (const auto& p : kPercentiles)
    out.values.push_back({p.name, std::to_string(values[Rank(p.per_mille, values.size()) - 1])});
  out.values.push_back({"max", std::to_string(values.back())});
  return out;
}

Quantiles BucketQuantiles(const std::vector<CountedBucket>& ascending) {
  Quantiles out;
  for (const CountedBucket& b : ascending) out.count += b.count;
  if (out.count == 0) return out;
  auto at_rank = [&](uint64_t rank) -> const std::string& {
    uint64_t seen = 0;
    for (const CountedBucket& b : ascending) {
      seen += b.count;
      if (seen >= rank) return b.text;
    }
    return ascending.back().text;
  };
  for (const auto& p : kPercentiles) out.values.push_back({p.name, at_rank(Rank(p.per_mille, out.count))});
  out.values.push_back({"max", at_rank(out.count)});
  return out;
}

std::string QuantileLine(const Quantiles& quantiles, const std::string& unit) {
  if (quantiles.values.empty()) return {};
  std::string out;
  for (const Quantile& q : quantiles.values) {
    if (!out.empty()) out += ", ";
    out += q.name + (quantiles.exact ? " " : " in ") + q.value + " " + unit;
  }
  return out + (quantiles.exact ? " (exact: each call was seen)" : " (bounds: only buckets were counted)");
}

}  // namespace kprobectl
