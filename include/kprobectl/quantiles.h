// SPDX-License-Identifier: GPL-2.0-or-later
//
// How a distribution of times (or any values) is told: the kernel's log2
// buckets and the one notation trace and hist both print them in, and the
// percentiles p50, p90, p99, p99.9 and the maximum. In: every value seen
// (trace --latency sees each call: the percentiles are exact), or only
// counts per bucket (a hist table: the percentiles are the buckets that
// hold them, said as bounds). Out: the values, and a line of text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kprobectl {

// The kernel's log2 bucket of a value, ilog2(roundup_pow_of_two(v))
// (kernel/trace/trace_events_hist.c, hist_field_log2): 0 for 0 and 1.
uint64_t Log2Bucket(uint64_t value);
// Bucket k holds (2^(k-1), 2^k]: "(1024, 2048]"; k = 0 holds "[0, 1]".
std::string Log2BucketText(uint64_t k);
// The smallest and largest value bucket k holds.
uint64_t Log2BucketLow(uint64_t k);
uint64_t Log2BucketHigh(uint64_t k);

struct Quantile {
  std::string name;   // "p50", "p90", "p99", "p99.9", "max"
  std::string value;  // "1520", or a bucket: "(1024, 2048]"
};
struct Quantiles {
  std::vector<Quantile> values;
  bool exact = false;
  uint64_t count = 0;
};

// From every value, in any order: the nearest-rank percentiles (the value
// at rank ceil(p/100 * N) of the sorted values) and the largest.
Quantiles ExactQuantiles(std::vector<uint64_t> values);
// From buckets in ascending order, each its text and count: the bucket
// that holds each rank.
struct CountedBucket {
  std::string text;
  uint64_t count = 0;
};
Quantiles BucketQuantiles(const std::vector<CountedBucket>& ascending);

// "p50 1520 ns, p90 ..., max 9001 ns (exact: each call was seen)" or
// "p50 in (1024, 2048] ns, ... (bounds: only buckets were counted)";
// empty when nothing was counted.
std::string QuantileLine(const Quantiles& quantiles, const std::string& unit);

}  // namespace kprobectl
