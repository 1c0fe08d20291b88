#pragma once
// A run's per-iteration times summarised (bench/statistics.h computes it).
#include <nlohmann/json.hpp>

namespace nnbench::results {

struct Interval {
  double lo = 0, hi = 0;
  // The probability that [lo, hi] covers the true median, from the ranks
  // alone: 1 - 2 P(B <= k - 1) for order statistics k and n - k + 1,
  // B ~ Binomial(n, 1/2). What the interval actually achieves, which may be
  // below the level asked for (see median_ci); 0 for a single sample.
  double coverage = 0;
};

struct Summary {
  int n = 0;
  double median = 0, mean = 0, stddev = 0, cv = 0, min = 0, max = 0;
  // Tail percentiles, linear interpolation between order statistics
  // (Hyndman-Fan type 7, numpy's default): a latency's p90 and p99.
  double p90 = 0, p99 = 0;
  // Asked at 95 %; `coverage` says what it is (lower for n < 6).
  Interval median_ci;
};

// As records write it: the fields above, the interval as median_ci_lo,
// median_ci_hi and median_ci_coverage, a p90 or p99 that is not finite as
// null (read back as NaN).
nlohmann::json to_json(const Summary& s);
Summary summary_from_json(const nlohmann::json& j);

}  // namespace nnbench::results
