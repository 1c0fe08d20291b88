// The stopping criteria, alone and combined, on hand-made sample lists.
#include <gtest/gtest.h>

#include "bench/stopping/criterion.h"
#include "bench/stopping/registry.h"
#include "results/request.h"
#include "util/error.h"

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

TEST(Stopping, FromRuleEndsWithTheNamedCriterion) {
  results::StopRule s;
  EXPECT_EQ(from_rule(s).names(),
            (std::vector<std::string>{"iterations", "time", "minimums"}));
  results::set_max_relative_ci(s, 0.02);
  EXPECT_EQ(s.criterion, "median-ci");
  EXPECT_EQ(from_rule(s).names(),
            (std::vector<std::string>{"iterations", "time", "median-ci"}));
  EXPECT_EQ(resolved(s), (Values{{"max_rel", 0.02}}));
  s.parameters.clear();  // the default fills in
  EXPECT_EQ(resolved(s), (Values{{"max_rel", 0.01}}));
}

// What ended a loop: the limit reached first, else the last criterion.
TEST(Stopping, EndedByNamesTheLimitOrTheCriterion) {
  results::StopRule s;
  s.min_iterations = 3, s.max_iterations = 5, s.min_seconds = 1;
  s.max_seconds = 4;
  results::set_max_relative_ci(s, 0.01);
  const Rule r = from_rule(s);
  const std::vector<double> four(4, 0.5), five(5, 0.5);
  std::vector<double> spread;
  for (int i = 0; i < 8; ++i) spread.push_back(i % 2 ? 10.0 : 1.0);
  EXPECT_EQ(r.ended_by({four, 0.5}), "");  // under a second
  EXPECT_EQ(r.ended_by({five, 0.5}), "max_iterations");
  EXPECT_EQ(r.ended_by({four, 4.0}), "max_seconds");
  const Rule wide = from_rule([] {
    results::StopRule w;
    w.min_iterations = 1, w.min_seconds = 0;
    results::set_max_relative_ci(w, 0.01);
    return w;
  }());
  EXPECT_EQ(wide.ended_by({spread, 1.0}), "");  // CI as wide as the data
  EXPECT_EQ(wide.ended_by({std::vector<double>(8, 1.0), 1.0}), "median-ci");
  results::StopRule plain;
  plain.min_iterations = 2, plain.min_seconds = 0;
  EXPECT_EQ(from_rule(plain).ended_by({four, 0.1}), "minimums");
}

TEST(Stopping, UnknownCriteriaAndParametersAreNamed) {
  results::StopRule s;
  s.criterion = "ci";
  EXPECT_EQ(problem(s),
            "[stop] criterion (--criterion) 'ci' is unknown; known: median-ci "
            "minimums" +
                std::string(find_criterion("toy-count") ? " toy-count" : ""));
  EXPECT_THROW(from_rule(s), Error);
  s.criterion = "median-ci";
  s.parameters["max_noise"] = 0.1;
  EXPECT_EQ(problem(s),
            "[stop] criterion 'median-ci' has no parameter 'max_noise' "
            "(--criterion-param); its parameters: max_rel");
  s.parameters = {{"max_rel", 0.9}};
  EXPECT_EQ(problem(s),
            "[stop] max_rel (--criterion-param) 0.9 of criterion 'median-ci' "
            "must be in [1e-06, 0.5]");
  s.criterion = "minimums";
  s.parameters = {{"max_rel", 0.1}};
  EXPECT_NE(problem(s).find("its parameters: none"), std::string::npos);
}

// A criterion added from outside the folder with one call, as a later rule
// (LoadGen's minimum query count) would be: chosen by name, with its own
// parameter and default, ending the loop under its name.
TEST(Stopping, AToyCriterionPlugsInByName) {
  register_criterion({"toy-count",
                      "stop after `n` samples",
                      {{"n", 6, 1, 1000, "samples"}},
                      [](const Values& v) -> std::unique_ptr<Criterion> {
                        struct Toy : Criterion {
                          explicit Toy(size_t n) : n(n) {}
                          size_t n;
                          std::string name() const override {
                            return "toy-count";
                          }
                          bool may_stop(const Progress& p) const override {
                            return p.samples.size() >= n;
                          }
                        };
                        return std::make_unique<Toy>(
                            static_cast<size_t>(v.at("n")));
                      }});
  EXPECT_THROW(register_criterion({"toy-count", "", {}, nullptr}), Error);
  results::StopRule s;
  s.min_iterations = 1, s.min_seconds = 0;
  s.criterion = "toy-count";
  const std::vector<double> five(5, 0.1), six(6, 0.1), nine(9, 0.1);
  EXPECT_EQ(from_rule(s).ended_by({five, 1}), "");
  EXPECT_EQ(from_rule(s).ended_by({six, 1}), "toy-count");
  s.parameters["n"] = 9;
  EXPECT_EQ(from_rule(s).ended_by({six, 1}), "");
  EXPECT_EQ(from_rule(s).ended_by({nine, 1}), "toy-count");
  EXPECT_NE(describe_criteria().find("toy-count: stop after `n` samples (n 6"),
            std::string::npos);
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
