// Cost per training run and its normalisation, on hand-made results and
// hand-computed prices.
#include "study/run_cost.h"

#include <gtest/gtest.h>

#include <map>

namespace nnbench::study {
namespace {

ResultRow training(int threads, const std::string& state, double total,
                   double to_target = 0, bool valid = true) {
  ResultRow r;
  r.model = "keras-mnist-mlp";
  r.backend = "torch";
  r.precision = "fp32";
  r.mode = "train";
  r.state = state;
  r.valid = valid;
  r.threads = threads;
  r.record = {{"total_train_seconds", total},
              {"time_to_target_seconds", to_target}};
  return r;
}

cost::Instance pro_rata() {
  cost::Instance i;
  i.name = "test-64";
  i.vcpus = 64;
  i.usd_per_hour = 0.64;  // $0.01 per vCPU-hour
  i.pro_rata_vcpus = true;
  return i;
}

std::map<std::string, std::map<double, double>> by_name(
    const std::vector<DerivedRow>& d) {
  std::map<std::string, std::map<double, double>> m;
  for (const auto& r : d) m[r.name][r.x] = r.value;
  return m;
}

TEST(StudyCost, PricedSecondsFollowTheState) {
  EXPECT_DOUBLE_EQ(*priced_seconds(training(1, "completed", 100, 40)), 100);
  EXPECT_DOUBLE_EQ(*priced_seconds(training(1, "converged", 100, 40)), 40);
  EXPECT_FALSE(priced_seconds(training(1, "stopped", 100)));
  EXPECT_FALSE(priced_seconds(training(1, "not_converged", 100)));
  EXPECT_FALSE(priced_seconds(training(1, "failed", 100)));
  EXPECT_FALSE(priced_seconds(training(1, "completed", 100, 0, false)));
}

TEST(StudyCost, ProRataPricesNormalisedToTheMostThreads) {
  // 1 thread: 7200 s at $0.01/h = $0.02. 2 threads: two repetitions, 3000
  // and 5000 s, median 4000 s at $0.02/h = $0.0222...; baseline 2 threads.
  const auto m = by_name(derive_costs(
      {training(1, "completed", 7200), training(2, "completed", 3000),
       training(2, "completed", 5000)},
      pro_rata(), 0));
  EXPECT_DOUBLE_EQ(m.at("train_seconds").at(1), 7200);
  EXPECT_DOUBLE_EQ(m.at("train_seconds").at(2), 4000);
  EXPECT_NEAR(m.at("cost_usd").at(1), 0.02, 1e-12);
  EXPECT_NEAR(m.at("cost_usd").at(2), 4000.0 / 3600 * 0.02, 1e-12);
  EXPECT_DOUBLE_EQ(m.at("relative_time").at(2), 1.0);
  EXPECT_DOUBLE_EQ(m.at("relative_time").at(1), 1.8);
  EXPECT_NEAR(m.at("relative_cost").at(1), 0.02 / (4000.0 / 3600 * 0.02),
              1e-12);
}

TEST(StudyCost, AWholeInstanceIsChargedWhateverTheThreads) {
  auto i = pro_rata();
  i.pro_rata_vcpus = false;
  const auto m = by_name(derive_costs(
      {training(1, "completed", 3600), training(2, "completed", 1800)}, i, 1));
  EXPECT_DOUBLE_EQ(m.at("cost_usd").at(1), 0.64);
  EXPECT_DOUBLE_EQ(m.at("cost_usd").at(2), 0.32);
  EXPECT_DOUBLE_EQ(m.at("relative_cost").at(2), 0.5);  // baseline 1 thread
}

TEST(StudyCost, NoRelativeFiguresWithoutTheBaselineCase) {
  const auto m = by_name(derive_costs(
      {training(1, "completed", 3600), training(2, "stopped", 1800)},
      pro_rata(), 2));
  EXPECT_EQ(m.count("relative_cost"), 0u);
  EXPECT_EQ(m.at("cost_usd").size(), 1u);  // the stopped run is not priced
}

}  // namespace
}  // namespace nnbench::study
