#pragma once
// Statistics over a run's per-iteration times: small free functions over
// vectors, tested against known values (tests/unit/statistics_test.cpp).
#include <vector>

namespace nnbench::bench {

double mean(const std::vector<double>& x);
// Sample standard deviation (n - 1 in the divisor); 0 for fewer than 2.
double stddev(const std::vector<double>& x);
// Median; the mean of the two middle values for even n. Throws on empty.
double median(const std::vector<double>& x);
// Linear-interpolated quantile, q in [0, 1] (type 7, as numpy's default).
double quantile(const std::vector<double>& x, double q);

struct Interval {
  double lo = 0, hi = 0;
  // The probability that [lo, hi] covers the true median, from the ranks
  // alone: 1 - 2 P(B <= k - 1) for order statistics k and n - k + 1,
  // B ~ Binomial(n, 1/2). What the interval actually achieves, which may be
  // below the level asked for (see median_ci); 0 for a single sample.
  double coverage = 0;
};

// Distribution-free confidence interval of the median from order statistics:
// ranks chosen from the Binomial(n, 1/2) distribution so that coverage is at
// least `level`. Exact binomial for any n. For n too small to reach the
// level (n < 6 at 95 %) no interval can: it returns [min, max] with the
// lower coverage it has (1 - 2^(1-n): 93.75 % at n = 5), never the level.
Interval median_ci(const std::vector<double>& x, double level = 0.95);

struct Summary {
  int n = 0;
  double median = 0, mean = 0, stddev = 0, cv = 0, min = 0, max = 0;
  // Asked at 95 %; `coverage` says what it is (lower for n < 6).
  Interval median_ci;
};

Summary summarize(const std::vector<double>& x);

}  // namespace nnbench::bench
