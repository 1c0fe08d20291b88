#pragma once
// The two statistics a comparison rests on: the Mann-Whitney U test (is one
// sample's distribution shifted against the other's?) and a percentile
// bootstrap interval of a ratio of statistics (how large is the change?).
// Checked against SciPy in tests/stats/scipy_oracle.py.
#include <cstdint>
#include <functional>
#include <vector>

#include "results/summary.h"

namespace nnbench::compare {

struct MannWhitney {
  double u = 0;  // U of the first sample: pairs (a, b) with a > b, ties 1/2
  double p = 1;  // two-sided
};

// Normal approximation with midranks, the tie correction and a continuity
// correction: scipy.stats.mannwhitneyu(a, b, method="asymptotic"). Both
// samples must be non-empty; p is 1 when every value is tied.
MannWhitney mann_whitney_u(const std::vector<double>& a,
                           const std::vector<double>& b);

using Statistic = std::function<double(const std::vector<double>&)>;

// Percentile bootstrap interval of stat(b) / stat(a): each sample resampled
// with replacement, independently, `resamples` times from a seeded
// generator (the same inputs and seed give the same interval). The
// coverage field is the level asked for: a bootstrap interval's real
// coverage is approximate (docs/compare.md gives the measured one).
results::Interval bootstrap_ratio_ci(const std::vector<double>& a,
                                     const std::vector<double>& b,
                                     const Statistic& stat, double level,
                                     int resamples, uint64_t seed);

}  // namespace nnbench::compare
