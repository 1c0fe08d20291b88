// Comparison statistics and verdicts: hand-checked values, and the honesty
// of the verdicts in simulation (false positives and power, figures in
// docs/compare.md). SciPy checks the statistics on random samples too
// (tests/stats/scipy_oracle.py).
#include "compare/compare.h"

#include <gtest/gtest.h>

#include <random>

#include "bench/statistics.h"
#include "compare/tests.h"

namespace nnbench::compare {
namespace {

TEST(MannWhitney, MatchesSciPyOnSmallSamples) {
  // scipy.stats.mannwhitneyu(a, b, method="asymptotic") (SciPy 1.10.1).
  auto r = mann_whitney_u({1, 2, 3}, {4, 5, 6});
  EXPECT_DOUBLE_EQ(r.u, 0);
  EXPECT_NEAR(r.p, 0.08085559837005224, 1e-12);
  r = mann_whitney_u({1, 2, 2, 3, 7}, {2, 4, 5, 6, 6, 9});  // ties
  EXPECT_DOUBLE_EQ(r.u, 7);
  EXPECT_NEAR(r.p, 0.16601056437093298, 1e-12);
  EXPECT_DOUBLE_EQ(mann_whitney_u({2, 2}, {2, 2, 2}).p, 1.0);  // all tied
}

TEST(QuantileCi, MedianMatchesTheMedianInterval) {
  // n = 10: P(B <= 1) = 11/1024 <= 0.025 < P(B <= 2): ranks 2 and 9.
  std::vector<double> x = {5, 3, 9, 1, 7, 2, 8, 4, 10, 6};
  const auto q = bench::quantile_ci(x, 0.5);
  EXPECT_EQ(q.lo, 2);
  EXPECT_EQ(q.hi, 9);
  EXPECT_NEAR(q.coverage, 1 - 2 * 11.0 / 1024, 1e-12);
  const auto m = bench::median_ci(x);
  EXPECT_EQ(m.lo, q.lo);
  EXPECT_EQ(m.hi, q.hi);
}

TEST(QuantileCi, P99OfTwentySamplesSaysItsLowCoverage) {
  std::vector<double> x;
  for (int i = 1; i <= 20; ++i) x.push_back(i);
  const auto q = bench::quantile_ci(x, 0.99);
  EXPECT_EQ(q.hi, 20);  // no rank holds the upper tail: the maximum
  // Upper miss P(B = 20) = 0.99^20 = 0.818: far below 95 % coverage.
  EXPECT_LT(q.coverage, 0.2);
}

TEST(Decide, EachVerdictAndWhy) {
  Options o;
  std::string why;
  EXPECT_EQ(decide(1, 1, 400, 400, 1e-50, 0.5, o, &why),
            Verdict::kInconclusive);
  EXPECT_NE(why.find("1 and 1 repetitions"), std::string::npos) << why;
  EXPECT_EQ(decide(5, 5, 4, 20, 0.001, 0.5, o, &why), Verdict::kInconclusive);
  EXPECT_NE(why.find("at least 5"), std::string::npos) << why;
  EXPECT_EQ(decide(5, 5, 20, 20, 0.2, 0.8, o, &why), Verdict::kNoChange);
  EXPECT_EQ(decide(5, 5, 20, 20, 0.001, 1.005, o, &why), Verdict::kNoChange);
  EXPECT_NE(why.find("noise"), std::string::npos) << why;
  EXPECT_EQ(decide(5, 5, 20, 20, 0.001, 0.9, o, &why), Verdict::kFaster);
  EXPECT_EQ(decide(5, 5, 20, 20, 0.001, 1.1, o, &why), Verdict::kSlower);
  o.min_repetitions = 1;  // one process a side, accepted explicitly
  EXPECT_EQ(decide(1, 1, 400, 400, 1e-50, 0.5, o, &why), Verdict::kFaster);
}

TEST(Compare, MediansAndRatiosAgreeWithTheStatisticsModule) {
  // compare_case selects instead of sorting: the same values as bench::.
  std::mt19937_64 g(3);
  std::lognormal_distribution<double> d(0, 0.5);
  for (int n : {1, 2, 7, 10, 101}) {
    std::vector<double> a(n), b(n);
    for (auto& v : a) v = d(g);
    for (auto& v : b) v = d(g);
    Options o;
    o.min_repetitions = 1;
    const auto c = compare_case("x", Side{{a}}, Side{{b}}, o);
    EXPECT_DOUBLE_EQ(c.median_a, bench::median(a)) << n;
    EXPECT_DOUBLE_EQ(c.ratio, bench::median(b) / bench::median(a)) << n;
    EXPECT_DOUBLE_EQ(c.p90_ratio,
                     bench::quantile(b, 0.9) / bench::quantile(a, 0.9))
        << n;
  }
}

// A case that ran on one side only (the other's runs failed): that side's
// median stands, every ratio and the other median are absent ("-", null),
// never 0.
TEST(Compare, ASideWithoutSamplesShowsNoFigures) {
  Side a{{{0.003, 0.001, 0.002}}}, none{{}};
  const Result r = compare_all({{"x", a}}, {{"x", none}}, Options{});
  ASSERT_EQ(r.cases.size(), 1u);
  const std::string md = to_markdown(r, Options{});
  EXPECT_NE(md.find("| x | inconclusive | - | - | - | 3/0 (iterations) | "
                    "2.000 | - | - | - | no samples on one side |"),
            std::string::npos)
      << md;
  const auto j = to_json(r, Options{})["cases"][0];
  EXPECT_DOUBLE_EQ(j["median_a_seconds"].get<double>(), 0.002);
  EXPECT_TRUE(j["median_b_seconds"].is_null());
  EXPECT_TRUE(j["ratio"].is_null());
  EXPECT_TRUE(j["ratio_ci95"].is_null());
  EXPECT_TRUE(j["mann_whitney_p"].is_null());
}

TEST(Compare, RepetitionsAreTheUnitWhenBothSidesHaveSeveral) {
  Side a{{{1, 1, 1}, {2, 2}, {3}}}, b{{{1, 2, 3}}};
  EXPECT_EQ(samples_of(a, true), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(samples_of(a, false).size(), 6u);
  const auto r = compare_all({{"x", a}, {"only-a", a}},
                             {{"x", b}, {"only-b", b}}, Options{});
  ASSERT_EQ(r.cases.size(), 1u);
  EXPECT_EQ(r.cases[0].unit, "iterations");               // b has 1 repetition
  EXPECT_EQ(r.cases[0].verdict, Verdict::kInconclusive);  // 3 and 1 < 5
  EXPECT_EQ(compare_case("x", a, a, Options{}).unit, "repetitions");
  EXPECT_EQ(r.only_a, std::vector<std::string>{"only-a"});
  EXPECT_EQ(r.only_b, std::vector<std::string>{"only-b"});
}

// Timing-like samples: a floor of 1 plus a right-skewed (exponential) tail
// with mean `spread`; `shift` multiplies them.
std::vector<double> timings(std::mt19937_64& g, int n, double spread,
                            double shift = 1) {
  std::exponential_distribution<double> tail(1 / spread);
  std::vector<double> x(n);
  for (auto& v : x) v = shift * (1 + tail(g));
  return x;
}

// n process-level samples: n repetitions of one sample each.
Side side(const std::vector<double>& x) {
  Side s;
  for (double v : x) s.repetitions.push_back({v});
  return s;
}

double called_rate(double noise, double spread, double shift, int trials,
                   Verdict want) {
  std::mt19937_64 g(42);
  Options o;
  o.noise = noise;
  o.resamples = 200;
  int hits = 0;
  for (int i = 0; i < trials; ++i) {
    const auto c = compare_case("x", side(timings(g, 20, spread)),
                                side(timings(g, 20, spread, shift)), o);
    hits += c.verdict == want ||
            (want == Verdict::kInconclusive &&  // any change called
             (c.verdict == Verdict::kFaster || c.verdict == Verdict::kSlower));
  }
  return static_cast<double>(hits) / trials;
}

TEST(Honesty, FalsePositivesAtTheSignificanceLevelThenNearZero) {
  // 1000 comparisons of two samples (n = 20) from one skewed distribution.
  const double before = called_rate(0, 0.005, 1, 1000, Verdict::kInconclusive);
  const double after =
      called_rate(0.01, 0.005, 1, 1000, Verdict::kInconclusive);
  std::printf(
      "false positives: %.3f without the noise threshold, %.3f with "
      "1 %%\n",
      before, after);
  EXPECT_GE(before, 0.03);
  EXPECT_LE(before, 0.07);
  EXPECT_LE(after, 0.005);
}

TEST(Honesty, FivePercentSlowerIsFound) {
  const double power = called_rate(0.01, 0.005, 1.05, 200, Verdict::kSlower);
  std::printf("power at a 5 %% shift: %.3f\n", power);
  EXPECT_GE(power, 0.95);
}

TEST(Honesty, BootstrapIntervalCoversTheTrueRatio) {
  // Lognormal(0, 0.3) against 1.1 x the same: true median ratio 1.1.
  std::mt19937_64 g(7);
  std::lognormal_distribution<double> d(0, 0.3);
  int covered = 0;
  const int trials = 300;
  const Statistic med = [](const std::vector<double>& x) {
    return bench::median(x);
  };
  for (int i = 0; i < trials; ++i) {
    std::vector<double> a(40), b(40);
    for (auto& v : a) v = d(g);
    for (auto& v : b) v = 1.1 * d(g);
    const auto ci = bootstrap_ratio_ci(a, b, med, 0.95, 1000, i);
    covered += ci.lo <= 1.1 && 1.1 <= ci.hi;
  }
  const double coverage = static_cast<double>(covered) / trials;
  std::printf("bootstrap coverage of the true ratio: %.3f\n", coverage);
  EXPECT_GE(coverage, 0.90);
  EXPECT_LE(coverage, 0.99);
}

}  // namespace
}  // namespace nnbench::compare
