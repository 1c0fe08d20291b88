#pragma once
// Statistics over a run's per-iteration times: small free functions over
// vectors, tested against known values (tests/unit/bench/statistics_test.cpp).
#include <vector>

#include "results/summary.h"

namespace nnbench::bench {

double mean(const std::vector<double>& x);
// Sample standard deviation (n - 1 in the divisor); 0 for fewer than 2.
double stddev(const std::vector<double>& x);
// Median; the mean of the two middle values for even n. Throws on empty.
double median(const std::vector<double>& x);
// Linear-interpolated quantile, q in [0, 1] (type 7, as numpy's default).
double quantile(const std::vector<double>& x, double q);

// Distribution-free confidence interval of the median from order statistics:
// ranks chosen from the Binomial(n, 1/2) distribution so that coverage is at
// least `level`. Exact binomial for any n. For n too small to reach the
// level (n < 6 at 95 %) no interval can: it returns [min, max] with the
// lower coverage it has (1 - 2^(1-n): 93.75 % at n = 5), never the level.
results::Interval median_ci(const std::vector<double>& x, double level = 0.95);

// The same for any quantile q in (0, 1): ranks l <= u from Binomial(n, q)
// with each tail at most (1 - level) / 2, so [x(l), x(u)] covers the
// q-quantile with probability P(l <= B <= u - 1). A tail that no rank can
// hold that small (p99 needs n >= 368 for its upper side at 95 %) falls
// back to the sample's extreme, and the coverage returned is then the
// lower one it really has.
results::Interval quantile_ci(const std::vector<double>& x, double q,
                              double level = 0.95);

results::Summary summarize(const std::vector<double>& x);

}  // namespace nnbench::bench
