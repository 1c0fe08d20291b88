#include "compare/tests.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "util/error.h"

namespace nnbench::compare {

MannWhitney mann_whitney_u(const std::vector<double>& a,
                           const std::vector<double>& b) {
  if (a.empty() || b.empty()) throw Error("mann_whitney_u: empty sample");
  const double n1 = static_cast<double>(a.size());
  const double n2 = static_cast<double>(b.size());
  std::vector<std::pair<double, int>> all;  // value, 0 for a / 1 for b
  for (double x : a) all.push_back({x, 0});
  for (double x : b) all.push_back({x, 1});
  std::sort(all.begin(), all.end());
  // Midranks (1-based) and the tie term sum(t^3 - t).
  double rank_sum_a = 0, ties = 0;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const double mid =
        (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k)
      if (all[k].second == 0) rank_sum_a += mid;
    const double t = static_cast<double>(j - i);
    ties += t * t * t - t;
    i = j;
  }
  MannWhitney r;
  r.u = rank_sum_a - n1 * (n1 + 1) / 2;
  const double n = n1 + n2;
  const double mu = n1 * n2 / 2;
  const double var = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)));
  if (var <= 0) return r;  // every value tied: no evidence either way
  // Two-sided, as SciPy: U = max(U1, U2), continuity-corrected.
  const double u = std::max(r.u, n1 * n2 - r.u);
  const double z = (u - mu - 0.5) / std::sqrt(var);
  r.p = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return r;
}

results::Interval bootstrap_ratio_ci(const std::vector<double>& a,
                                     const std::vector<double>& b,
                                     const Statistic& stat, double level,
                                     int resamples, uint64_t seed) {
  if (a.empty() || b.empty()) throw Error("bootstrap_ratio_ci: empty sample");
  if (resamples < 100)
    throw Error("bootstrap_ratio_ci: at least 100 resamples");
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick_a(0, a.size() - 1),
      pick_b(0, b.size() - 1);
  std::vector<double> ratios, ra(a.size()), rb(b.size());
  ratios.reserve(static_cast<size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    for (auto& x : ra) x = a[pick_a(rng)];
    for (auto& x : rb) x = b[pick_b(rng)];
    const double den = stat(ra);
    if (den != 0) ratios.push_back(stat(rb) / den);
  }
  if (ratios.empty()) throw Error("bootstrap_ratio_ci: statistic of a is 0");
  std::sort(ratios.begin(), ratios.end());
  // Percentiles by linear interpolation (numpy's default), as SciPy's
  // percentile method reads them.
  const auto at = [&](double q) {
    const double h = q * static_cast<double>(ratios.size() - 1);
    const auto lo = static_cast<size_t>(std::floor(h));
    const size_t hi = std::min(lo + 1, ratios.size() - 1);
    return ratios[lo] +
           (h - static_cast<double>(lo)) * (ratios[hi] - ratios[lo]);
  };
  const double tail = (1 - level) / 2;
  return {at(tail), at(1 - tail), level};
}

}  // namespace nnbench::compare
