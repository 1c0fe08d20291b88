#include "bench/statistics.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "util/error.h"

namespace nnbench::bench {
namespace {

void require_non_empty(const std::vector<double>& x, const char* what) {
  if (x.empty()) throw Error(std::string(what) + ": empty sample");
}

std::vector<double> sorted(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  return x;
}

struct Ranks {
  long k = 0;        // lower rank; 0 when even k = 1 is too wide a tail
  double below = 0;  // P(B <= k - 1), the tail on each side it misses
};

// Largest k >= 1 with P(B <= k - 1) <= tail for B ~ Binomial(n, 1/2), or 0
// when even k = 1 is too wide a tail. Terms below n/2 - 10 sigma are skipped:
// by Hoeffding their total is below exp(-50), far under any useful tail. The
// first term comes from lgamma and the rest from the pmf ratio, so the sum
// stays accurate for n in the millions where 2^-n underflows.
Ranks lower_rank(long n, double tail) {
  if (tail <= 0) return {};  // only [min, max] covers with certainty
  const double sigma = std::sqrt(static_cast<double>(n)) / 2;
  const long start = std::max(0L, static_cast<long>(n / 2.0 - 10 * sigma) - 1);
  double log_p = std::lgamma(n + 1.0) - std::lgamma(start + 1.0) -
                 std::lgamma(static_cast<double>(n - start) + 1.0) -
                 n * std::log(2.0);
  double cdf = 0;
  Ranks r;
  for (long j = start; j < n; ++j) {
    cdf += std::exp(log_p);
    if (cdf > tail) break;
    r = {j + 1, cdf};
    log_p += std::log(static_cast<double>(n - j)) - std::log(j + 1.0);
  }
  return r;
}

}  // namespace

double mean(const std::vector<double>& x) {
  require_non_empty(x, "mean");
  double sum = 0;
  for (double v : x) sum += v;
  return sum / static_cast<double>(x.size());
}

double stddev(const std::vector<double>& x) {
  if (x.size() < 2) return 0;
  const double m = mean(x);
  double ss = 0;
  for (double v : x) ss += (v - m) * (v - m);
  return std::sqrt(ss / static_cast<double>(x.size() - 1));
}

double median(const std::vector<double>& x) { return quantile(x, 0.5); }

double quantile(const std::vector<double>& x, double q) {
  require_non_empty(x, "quantile");
  if (!(q >= 0 && q <= 1)) {
    throw Error("quantile: q must be in [0, 1], got " + std::to_string(q));
  }
  const std::vector<double> s = sorted(x);
  const double h = q * static_cast<double>(s.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (h - static_cast<double>(lo)) * (s[hi] - s[lo]);
}

// [x(k), x(n-k+1)] misses the median only when at most k - 1 samples fall on
// one side of it, so its coverage is 1 - 2 P(B <= k - 1).
results::Interval median_ci(const std::vector<double>& x, double level) {
  require_non_empty(x, "median_ci");
  if (!(level > 0 && level <= 1)) {
    throw Error("median_ci: level must be in (0, 1], got " +
                std::to_string(level));
  }
  const std::vector<double> s = sorted(x);
  const auto n = static_cast<long>(s.size());
  const Ranks r = lower_rank(n, (1 - level) / 2);
  // [min, max] misses only when every sample falls on one side: 2 * 2^-n.
  if (r.k == 0)
    return {s.front(), s.back(),
            1 - std::ldexp(1.0, static_cast<int>(std::max(1 - n, -4096L)))};
  return {s[r.k - 1], s[n - r.k], 1 - 2 * r.below};
}

namespace {

// P(B = j) for B ~ Binomial(n, q), j = 0..n, from lgamma (no underflow of
// q^n for large n: terms below 1e-300 are 0, which no tail here needs).
std::vector<double> binomial_pmf(long n, double q) {
  std::vector<double> p(static_cast<size_t>(n) + 1);
  const double lq = std::log(q), l1q = std::log1p(-q);
  for (long j = 0; j <= n; ++j)
    p[j] = std::exp(std::lgamma(n + 1.0) - std::lgamma(j + 1.0) -
                    std::lgamma(static_cast<double>(n - j) + 1.0) + j * lq +
                    static_cast<double>(n - j) * l1q);
  return p;
}

}  // namespace

results::Interval quantile_ci(const std::vector<double>& x, double q,
                              double level) {
  require_non_empty(x, "quantile_ci");
  if (!(q > 0 && q < 1))
    throw Error("quantile_ci: q must be in (0, 1), got " + std::to_string(q));
  if (!(level > 0 && level < 1))
    throw Error("quantile_ci: level must be in (0, 1), got " +
                std::to_string(level));
  const std::vector<double> s = sorted(x);
  const auto n = static_cast<long>(s.size());
  const double tail = (1 - level) / 2;
  const std::vector<double> pmf = binomial_pmf(n, q);
  std::vector<double> cdf(pmf.size());  // cdf[j] = P(B <= j)
  double acc = 0;
  for (size_t j = 0; j < pmf.size(); ++j) cdf[j] = acc += pmf[j];
  // B = #{x_i <= the q-quantile}: x(l) <= it iff B >= l, and it is below
  // x(u) iff B <= u - 1. Lower rank l: the largest with P(B <= l - 1) <=
  // tail, else 1 (the minimum).
  long l = 1;
  for (long k = 1; k <= n; ++k)
    if (cdf[k - 1] <= tail) l = k;
  // Upper rank u: the smallest with P(B >= u) <= tail, else n.
  long u = n;
  for (long k = n; k >= l; --k)
    if (1 - cdf[k - 1] <= tail) u = k;
  return {s[l - 1], s[u - 1], std::max(0.0, cdf[u - 1] - cdf[l - 1])};
}

results::Summary summarize(const std::vector<double>& x) {
  results::Summary s;
  s.n = static_cast<int>(x.size());
  s.median = median(x);
  s.mean = mean(x);
  s.stddev = stddev(x);
  s.cv = s.mean != 0 ? s.stddev / s.mean : 0;
  const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
  s.min = *lo;
  s.max = *hi;
  s.p90 = quantile(x, 0.9);
  s.p99 = quantile(x, 0.99);
  s.median_ci = median_ci(x, 0.95);
  return s;
}

}  // namespace nnbench::bench
