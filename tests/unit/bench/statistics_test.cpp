#include "bench/statistics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "util/error.h"

namespace nnbench::bench {
namespace {

TEST(Statistics, MeanAndStddevOfKnownSample) {
  // mean 5; squared deviations 9+1+1+1+0+0+4+16 = 32; 32 / 7 = 4.571...
  const std::vector<double> x = {2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_DOUBLE_EQ(mean(x), 5.0);
  EXPECT_DOUBLE_EQ(stddev(x), std::sqrt(32.0 / 7.0));
}

TEST(Statistics, StddevIsZeroBelowTwoSamples) {
  EXPECT_EQ(stddev({3.5}), 0.0);
  EXPECT_EQ(stddev({}), 0.0);
}

TEST(Statistics, MedianOfUnsortedOddAndEvenSamples) {
  EXPECT_DOUBLE_EQ(median({9, 1, 5, 3, 7}), 5.0);
  EXPECT_DOUBLE_EQ(median({8, 2, 6, 4}), 5.0);  // (4 + 6) / 2
  EXPECT_DOUBLE_EQ(median({42}), 42.0);
}

TEST(Statistics, QuantileInterpolatesLikeNumpy) {
  // numpy.quantile([1, 2, 3, 4, 10], q): h = q * 4.
  const std::vector<double> x = {10, 3, 1, 4, 2};
  EXPECT_DOUBLE_EQ(quantile(x, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile(x, 1.0), 10.0);
  EXPECT_DOUBLE_EQ(quantile(x, 0.25), 2.0);   // h = 1
  EXPECT_DOUBLE_EQ(quantile(x, 0.9), 7.6);    // h = 3.6: 4 + 0.6 * 6
  EXPECT_DOUBLE_EQ(quantile(x, 0.125), 1.5);  // h = 0.5
}

TEST(Statistics, EmptyInputAndBadArgumentsThrow) {
  EXPECT_THROW(mean({}), Error);
  EXPECT_THROW(median({}), Error);
  EXPECT_THROW(quantile({}, 0.5), Error);
  EXPECT_THROW(median_ci({}), Error);
  EXPECT_THROW(summarize({}), Error);
  EXPECT_THROW(quantile({1, 2}, 1.5), Error);
  EXPECT_THROW(median_ci({1, 2}, 0.0), Error);
}

TEST(Statistics, SummaryHasCoefficientOfVariation) {
  const results::Summary s = summarize({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_EQ(s.n, 8);
  EXPECT_DOUBLE_EQ(s.median, 4.5);
  EXPECT_DOUBLE_EQ(s.cv, std::sqrt(32.0 / 7.0) / 5.0);
  EXPECT_EQ(s.min, 2);
  EXPECT_EQ(s.max, 9);
}

// Values 1..n shuffled, so order statistic k (1-based) is the value k.
std::vector<double> shuffled_ranks(int n) {
  std::vector<double> x(n);
  std::iota(x.begin(), x.end(), 1.0);
  std::shuffle(x.begin(), x.end(), std::mt19937(7));
  return x;
}

// Ranks checked with exact integers (Python: math.comb(n, j) / 2**n):
// n = 10: P(B <= 1) = 11/1024 = 0.0107 <= 0.025 < P(B <= 2) = 56/1024
//         = 0.0547, so k - 1 = 1: ranks 2 and 9, coverage 1 - 22/1024.
// n = 20: P(B <= 5) = (1 + 20 + 190 + 1140 + 4845 + 15504) / 2^20
//         = 21700/1048576 = 0.0207 <= 0.025 < P(B <= 6) = 0.0577: ranks 6
//         and 15, coverage 1 - 43400/1048576.
// n = 100: P(B <= 39) = 0.0176 <= 0.025 < P(B <= 40) = 0.0284: ranks 40, 61.
TEST(MedianCi, ExactBinomialRanks) {
  const results::Interval ci10 = median_ci(shuffled_ranks(10));
  EXPECT_EQ(ci10.lo, 2);
  EXPECT_EQ(ci10.hi, 9);
  EXPECT_DOUBLE_EQ(ci10.coverage, 1002.0 / 1024);  // 0.9785
  const results::Interval ci20 = median_ci(shuffled_ranks(20));
  EXPECT_EQ(ci20.lo, 6);
  EXPECT_EQ(ci20.hi, 15);
  EXPECT_NEAR(ci20.coverage, 1005176.0 / 1048576, 1e-12);  // 0.9586
  const results::Interval ci100 = median_ci(shuffled_ranks(100));
  EXPECT_EQ(ci100.lo, 40);
  EXPECT_EQ(ci100.hi, 61);
  // 1 - 2 x 0.0176001: at least the level, as every n >= 6 gives.
  EXPECT_NEAR(ci100.coverage, 0.9648, 1e-5);
}

// [min, max] covers with 1 - 2^(1-n): 15/16 = 0.9375 for n = 5 (below
// 95 %, so no narrower interval exists and none reaches the level),
// 31/32 = 0.96875 for n = 6 (first n that reaches 95 %), 0 for n = 1.
TEST(MedianCi, SmallSamplesGiveMinMaxWithTheirTrueCoverage) {
  const results::Interval ci5 = median_ci({5, 1, 4, 2, 3});
  EXPECT_EQ(ci5.lo, 1);
  EXPECT_EQ(ci5.hi, 5);
  EXPECT_DOUBLE_EQ(ci5.coverage, 0.9375);
  EXPECT_LT(ci5.coverage, 0.95);
  const results::Interval ci6 = median_ci(shuffled_ranks(6));
  EXPECT_EQ(ci6.lo, 1);
  EXPECT_EQ(ci6.hi, 6);
  EXPECT_DOUBLE_EQ(ci6.coverage, 0.96875);
  const results::Interval ci2 = median_ci({2.0, 1.0});
  EXPECT_DOUBLE_EQ(ci2.coverage, 0.5);  // both samples on one side: 2/4
  EXPECT_EQ(median_ci({3.0}).lo, 3.0);
  EXPECT_EQ(median_ci({3.0}).coverage, 0.0);
}

TEST(MedianCi, SummaryKeepsTheAchievedCoverage) {
  EXPECT_DOUBLE_EQ(summarize({3, 1, 2, 5, 4}).median_ci.coverage, 0.9375);
  EXPECT_DOUBLE_EQ(summarize(shuffled_ranks(10)).median_ci.coverage,
                   1002.0 / 1024);
}

TEST(MedianCi, HigherLevelIsWider) {
  // n = 100 at 99 %: P(B <= 36) = 0.0033 <= 0.005 < P(B <= 37) = 0.0060.
  const results::Interval ci = median_ci(shuffled_ranks(100), 0.99);
  EXPECT_EQ(ci.lo, 37);
  EXPECT_EQ(ci.hi, 64);
  EXPECT_NEAR(ci.coverage, 1 - 2 * 0.0033186, 1e-6);
  EXPECT_EQ(median_ci(shuffled_ranks(100), 1.0).hi, 100);
  // Certainty is out of reach: [min, max], and the coverage says so.
  EXPECT_DOUBLE_EQ(median_ci(shuffled_ranks(6), 1.0).coverage, 0.96875);
}

// A million samples: 2^-n underflows, so this needs the log-space sum. The
// normal approximation gives ranks n/2 -+ 1.96 sqrt(n) / 2 = 500000 -+ 980.
TEST(MedianCi, LargeSampleMatchesNormalApproximation) {
  const results::Interval ci = median_ci(shuffled_ranks(1000000));
  EXPECT_NEAR(ci.lo, 499020, 2);
  EXPECT_NEAR(ci.hi, 500981, 2);
  EXPECT_EQ(ci.lo + ci.hi, 1000001);  // symmetric ranks
}

// The interval's promise, checked empirically: exponential samples (median
// ln 2) of size 20 have exact coverage 0.9586; 4000 draws give a standard
// error of 0.003, so 0.94 is a six-sigma margin.
TEST(MedianCi, CoversTheTrueMedianByDesign) {
  std::mt19937 rng(12345);
  std::exponential_distribution<double> dist(1.0);
  const double true_median = std::log(2.0);
  const int trials = 4000;
  int covered = 0;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> x(20);
    for (double& v : x) v = dist(rng);
    const results::Interval ci = median_ci(x);
    covered += ci.lo <= true_median && true_median <= ci.hi;
  }
  EXPECT_GE(covered / static_cast<double>(trials), 0.94);
  EXPECT_LE(covered / static_cast<double>(trials), 0.98);
}

// The coverage reported for [min, max] at n = 5 is what it achieves: uniform
// samples of 5 (median 0.5) over 20000 draws; the standard error of
// 0.9375 is sqrt(0.9375 * 0.0625 / 20000) = 0.0017, so 0.01 is six sigma.
// Had the interval been the 95 % it is often called, 0.95 lies outside.
TEST(MedianCi, SmallSampleCoverageIsWhatItClaims) {
  std::mt19937 rng(99);
  std::uniform_real_distribution<double> dist(0.0, 1.0);
  const int trials = 20000;
  int covered = 0;
  double claimed = 0;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> x(5);
    for (double& v : x) v = dist(rng);
    const results::Interval ci = median_ci(x);
    covered += ci.lo <= 0.5 && 0.5 <= ci.hi;
    claimed = ci.coverage;
  }
  EXPECT_DOUBLE_EQ(claimed, 0.9375);
  EXPECT_NEAR(covered / static_cast<double>(trials), 0.9375, 0.01);
}

}  // namespace
}  // namespace nnbench::bench
