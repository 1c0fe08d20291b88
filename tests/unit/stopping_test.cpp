// The stopping criteria, alone and combined, on hand-made sample lists.
#include <gtest/gtest.h>

#include "bench/stopping/criterion.h"

namespace nnbench::bench::stopping {
namespace {

std::vector<std::unique_ptr<Criterion>> list(
    std::unique_ptr<Criterion> a, std::unique_ptr<Criterion> b = nullptr,
    std::unique_ptr<Criterion> c = nullptr) {
  std::vector<std::unique_ptr<Criterion>> out;
  for (auto* p : {&a, &b, &c})
    if (*p) out.push_back(std::move(*p));
  return out;
}

TEST(Stopping, MinimumsMustAllHold) {
  const Rule r(list(iterations(3, 100), time(1.0, 60)));
  const std::vector<double> two(2, 0.5), three(3, 0.5);
  EXPECT_FALSE(r.done({two, 5.0}));    // 2 < 3 iterations
  EXPECT_FALSE(r.done({three, 0.9}));  // 0.9 < 1 s
  EXPECT_TRUE(r.done({three, 1.0}));
}

TEST(Stopping, AnyMaximumStops) {
  const Rule r(list(iterations(10, 4), time(100, 2.0)));
  const std::vector<double> three(3, 0.5), four(4, 0.5);
  EXPECT_FALSE(r.done({three, 1.0}));
  EXPECT_TRUE(r.done({four, 1.0}));   // max 4 iterations, min 10 unmet
  EXPECT_TRUE(r.done({three, 2.0}));  // max 2 s
}

TEST(Stopping, CiWidthIsCheckedEveryEighthSampleOnly) {
  const Rule r(list(iterations(1, 1000), time(0, 60), median_ci_width(0.01)));
  const std::vector<double> flat15(15, 1.0), flat16(16, 1.0);
  EXPECT_FALSE(r.done({flat15, 1}));  // 15 is not a multiple of 8
  EXPECT_TRUE(r.done({flat16, 1}));   // CI [1, 1]: width 0
  // Half ones, half twos: the 95 % CI of the median of 16 spans order
  // statistics 4..13, i.e. [1, 2]; half-width 0.5 > 1 % of the median.
  std::vector<double> mixed;
  for (int i = 0; i < 16; ++i) mixed.push_back(i % 2 ? 2.0 : 1.0);
  EXPECT_FALSE(r.done({mixed, 1}));
}

// A criterion from outside the folder, as a later rule would be: it is
// asked only once the cheaper minimums before it hold.
class Counting : public Criterion {
 public:
  explicit Counting(int* calls) : calls_(calls) {}
  std::string name() const override { return "counting"; }
  bool may_stop(const Progress&) const override {
    ++*calls_;
    return true;
  }

 private:
  int* calls_;
};

TEST(Stopping, LaterCriteriaAreAskedOnlyOnceEarlierMinimumsHold) {
  int calls = 0;
  const Rule r(list(iterations(5, 100), std::make_unique<Counting>(&calls)));
  EXPECT_EQ(r.names(), (std::vector<std::string>{"iterations", "counting"}));
  for (int n = 1; n < 5; ++n)
    EXPECT_FALSE(r.done({std::vector<double>(n, 1.0), 0}));
  EXPECT_EQ(calls, 0);
  EXPECT_TRUE(r.done({std::vector<double>(5, 1.0), 0}));
  EXPECT_EQ(calls, 1);
}

TEST(Stopping, FromRuleAddsTheCiOnlyWhenAsked) {
  results::StopRule s;
  EXPECT_EQ(from_rule(s).names(),
            (std::vector<std::string>{"iterations", "time"}));
  s.max_relative_ci = 0.02;
  EXPECT_EQ(
      from_rule(s).names(),
      (std::vector<std::string>{"iterations", "time", "median_ci_width"}));
}

// What a maximum cut short is named, for the record's validity: the CI
// criterion is judged on every sample at the end, not only every eighth.
TEST(Stopping, UnmetNamesTheMinimumsAMaximumCutShort) {
  const Rule r(list(iterations(10, 4), time(2.0, 60), median_ci_width(0.5)));
  const std::vector<double> four(4, 0.5);  // identical: a zero-width CI
  EXPECT_EQ(r.unmet({four, 1.0}),
            (std::vector<std::string>{"10 iterations", "2 s"}));
  const std::vector<double> ten(10, 0.5);
  EXPECT_TRUE(r.unmet({ten, 2.0}).empty());
  // 1 and 10 alternating: a CI of the median as wide as the data.
  std::vector<double> spread;
  for (int i = 0; i < 10; ++i) spread.push_back(i % 2 ? 10.0 : 1.0);
  EXPECT_EQ(r.unmet({spread, 2.0}),
            (std::vector<std::string>{"the median's 95 % CI within +-50 %"}));
}

}  // namespace
}  // namespace nnbench::bench::stopping
