// MLPerf's seed aggregation at its edges, and which training time a price
// may be applied to. Expected values are worked out by hand beside each.
#include "train/aggregate.h"

#include <gtest/gtest.h>

namespace nnbench::train {
namespace {

TrainRun run(uint64_t seed, const std::string& state, double t) {
  TrainRun r;
  r.seed = seed;
  r.state = results::state_from_name(state);
  r.time_to_target = t;
  r.target = 0.9;
  return r;
}

TEST(AggregateEdges, NoRunsIsInvalid) {
  const auto a = aggregate({});
  EXPECT_FALSE(a.valid);
  EXPECT_EQ(a.reason, "no runs");
}

// Below 3 runs there is no fastest and slowest to drop: the mean of all.
TEST(AggregateEdges, OneRunIsItsOwnTime) {
  const auto a = aggregate({run(7, "converged", 12.5)});
  ASSERT_TRUE(a.valid);
  EXPECT_DOUBLE_EQ(a.mean_time_to_target, 12.5);
  EXPECT_EQ(a.kept_seeds, std::vector<uint64_t>{7});
  EXPECT_TRUE(a.dropped_seeds.empty());
}

TEST(AggregateEdges, TwoRunsAreAveragedWithNothingDropped) {
  const auto a = aggregate({run(1, "converged", 10), run(2, "converged", 20)});
  ASSERT_TRUE(a.valid);
  EXPECT_DOUBLE_EQ(a.mean_time_to_target, 15.0);  // (10 + 20) / 2
  EXPECT_EQ(a.kept_seeds, (std::vector<uint64_t>{1, 2}));
  EXPECT_TRUE(a.dropped_seeds.empty());
}

// With fewer than 3 runs a miss cannot be dropped as the slowest.
TEST(AggregateEdges, OneMissOfTwoIsInvalid) {
  const auto a =
      aggregate({run(1, "converged", 10), run(2, "not_converged", 0)});
  EXPECT_FALSE(a.valid);
  EXPECT_EQ(a.converged, 1);
  EXPECT_EQ(a.reason, "1 of 2 runs did not converge (seed 2 not_converged)");
}

// 3 runs all converged: drop 9 (fastest) and 30 (slowest), keep 11.
TEST(AggregateEdges, ThreeRunsKeepTheMiddleOne) {
  const auto a = aggregate({run(1, "converged", 30), run(2, "converged", 9),
                            run(3, "converged", 11)});
  ASSERT_TRUE(a.valid);
  EXPECT_DOUBLE_EQ(a.mean_time_to_target, 11.0);
  EXPECT_EQ(a.kept_seeds, std::vector<uint64_t>{3});
  EXPECT_EQ(a.dropped_seeds, (std::vector<uint64_t>{2, 1}));
}

// 3 runs, one miss: the miss is the slowest, 8 the fastest; 14 is kept.
TEST(AggregateEdges, ThreeRunsWithOneMissKeepTheSlowerConverged) {
  const auto a = aggregate({run(1, "converged", 14), run(2, "not_converged", 0),
                            run(3, "converged", 8)});
  ASSERT_TRUE(a.valid);
  EXPECT_DOUBLE_EQ(a.mean_time_to_target, 14.0);
  EXPECT_EQ(a.kept_seeds, std::vector<uint64_t>{1});
  EXPECT_EQ(a.dropped_seeds, (std::vector<uint64_t>{3, 2}));
}

TEST(AggregateEdges, TwoMissesOfThreeAreInvalid) {
  const auto a = aggregate({run(1, "not_converged", 0), run(2, "converged", 10),
                            run(3, "not_converged", 0)});
  EXPECT_FALSE(a.valid);
  EXPECT_EQ(a.mean_time_to_target, 0);
  EXPECT_EQ(a.reason,
            "2 of 3 runs did not converge (seed 1 not_converged, seed 3 "
            "not_converged)");
}

// A diverged run (failed) is a miss like any other: with 5 runs it is
// dropped as the slowest; 10 is dropped as the fastest; (12 + 13 + 20) / 3
// = 15 is the result.
TEST(AggregateEdges, AFailedRunCountsAsAMiss) {
  const auto a = aggregate({run(1, "converged", 12), run(2, "failed", 0),
                            run(3, "converged", 10), run(4, "converged", 20),
                            run(5, "converged", 13)});
  ASSERT_TRUE(a.valid);
  EXPECT_EQ(a.converged, 4);
  EXPECT_DOUBLE_EQ(a.mean_time_to_target, 15.0);
  EXPECT_EQ(a.dropped_seeds, (std::vector<uint64_t>{3, 2}));
}

// Runs that never trained (oom, unimplemented) or failed are misses too,
// and the reason names each with its state.
TEST(AggregateEdges, FailedAndUnrunRunsAreNamedInTheReason) {
  const auto a = aggregate({run(1, "failed", 0), run(2, "converged", 10),
                            run(3, "oom", 0), run(4, "unimplemented", 0)});
  EXPECT_FALSE(a.valid);
  EXPECT_EQ(a.reason,
            "3 of 4 runs did not converge (seed 1 failed, seed 3 oom, seed 4 "
            "unimplemented)");
}

// Equal times: the lower seed counts as the faster, so the same runs always
// drop the same seeds (5 dropped as fastest, 9 as slowest).
TEST(AggregateEdges, TiesAreBrokenBySeed) {
  const auto a = aggregate({run(9, "converged", 10), run(5, "converged", 10),
                            run(7, "converged", 10)});
  ASSERT_TRUE(a.valid);
  EXPECT_EQ(a.dropped_seeds, (std::vector<uint64_t>{5, 9}));
  EXPECT_EQ(a.kept_seeds, std::vector<uint64_t>{7});
}

// A run with its epochs' cumulative (counted) training time.
TrainRun fixed_run(uint64_t seed, const std::string& state,
                   std::vector<double> cumulative) {
  TrainRun r = run(seed, state, 0);
  r.target = 0;
  for (size_t e = 0; e < cumulative.size(); ++e) {
    EpochRow row;
    row.epoch = static_cast<int>(e + 1);
    row.train_seconds = cumulative[e];
    r.epochs.push_back(row);
  }
  return r;
}

TEST(PricedTrainingTime, ValidTimeToTargetIsPriced) {
  const std::vector<TrainRun> runs = {
      run(1, "converged", 30), run(2, "converged", 9), run(3, "converged", 11)};
  std::string why;
  const auto t = priced_training_time(runs, aggregate(runs), false, &why);
  ASSERT_TRUE(t.has_value()) << why;
  EXPECT_DOUBLE_EQ(t->seconds, 11.0);
  EXPECT_NE(t->basis.find("time to target"), std::string::npos);
  EXPECT_NE(t->basis.find("evaluation not counted"), std::string::npos);
  const auto with_eval =
      priced_training_time(runs, aggregate(runs), true, &why);
  EXPECT_NE(with_eval->basis.find("evaluation included"), std::string::npos);
}

// A target task whose runs missed it has no training cost, and says so.
TEST(PricedTrainingTime, MissedTargetIsNotPriced) {
  const std::vector<TrainRun> runs = {run(1, "not_converged", 0)};
  std::string why;
  EXPECT_FALSE(priced_training_time(runs, aggregate(runs), false, &why));
  EXPECT_EQ(why,
            "no training cost: the target was not reached (1 of 1 runs did "
            "not converge (seed 1 not_converged))");
}

// Fixed epochs: the mean of each run's last cumulative time as counted
// (with --include-eval-time that count includes evaluation): (60 + 66) / 2.
TEST(PricedTrainingTime, FixedEpochRunsPriceTheirCountedTime) {
  const std::vector<TrainRun> runs = {fixed_run(1, "completed", {20, 40, 60}),
                                      fixed_run(2, "completed", {22, 44, 66})};
  std::string why;
  const auto t = priced_training_time(runs, aggregate(runs), true, &why);
  ASSERT_TRUE(t.has_value()) << why;
  EXPECT_DOUBLE_EQ(t->seconds, 63.0);
  EXPECT_NE(t->basis.find("3 epochs"), std::string::npos) << t->basis;
}

TEST(PricedTrainingTime, AFixedEpochRunThatFailedIsNotPriced) {
  const std::vector<TrainRun> runs = {fixed_run(1, "completed", {20, 40}),
                                      fixed_run(2, "failed", {21})};
  std::string why;
  EXPECT_FALSE(priced_training_time(runs, aggregate(runs), false, &why));
  EXPECT_EQ(why,
            "no training cost: 1 of 2 runs did not complete (seed 2 failed)");
}

// A fixed-epoch run that the time budget cut short trained fewer epochs
// than the others: the mean would price a shorter run as the whole.
TEST(PricedTrainingTime, AFixedEpochRunStoppedByTheTimeBudgetIsNotPriced) {
  const std::vector<TrainRun> runs = {fixed_run(1, "completed", {20, 40}),
                                      fixed_run(2, "stopped", {21})};
  std::string why;
  EXPECT_FALSE(priced_training_time(runs, aggregate(runs), false, &why));
  EXPECT_EQ(why,
            "no training cost: 1 of 2 runs did not complete (seed 2 stopped)");
}

TrainRun contended(TrainRun r) {
  r.validity.add("contended", "other load 1.00 CPUs");
  return r;
}

// Three converged runs, one contended: MLPerf's dropping would discard it
// as the slowest and report a clean mean, hiding that the machine was
// shared. Invalid instead, naming the run.
TEST(AggregateEdges, AContendedRunMakesTheResultInvalid) {
  const auto a = aggregate({run(1, "converged", 10), run(2, "converged", 11),
                            contended(run(3, "converged", 40))});
  EXPECT_FALSE(a.valid);
  EXPECT_EQ(a.converged, 3);
  EXPECT_EQ(a.reason, "1 of 3 runs invalid (seed 3 invalid: contended)");
}

TEST(PricedTrainingTime, AContendedFixedEpochRunIsNotPriced) {
  const std::vector<TrainRun> runs = {
      fixed_run(1, "completed", {20, 40}),
      contended(fixed_run(2, "completed", {30, 70}))};
  std::string why;
  EXPECT_FALSE(priced_training_time(runs, aggregate(runs), false, &why));
  EXPECT_EQ(why,
            "no training cost: 1 of 2 runs invalid (seed 2 invalid: "
            "contended)");
}

}  // namespace
}  // namespace nnbench::train
