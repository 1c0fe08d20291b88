// The time-to-target rules of train_task (DAWNBench's, docs/training.md),
// run end to end on a scripted backend whose validation accuracy per epoch
// and step times are given. Expected times come from the sleeps the script
// makes and from the backend's own clock, never from the trainer's
// arithmetic: a run must stop at the first epoch that reaches the target,
// read the training time there, and leave evaluation out of it unless asked.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "scripted_backend.h"
#include "tiny_data.h"
#include "train/trainer.h"

namespace nnbench::train {
namespace {

using test::Script;
using test::ScriptedBackend;

constexpr int kStepsPerEpoch = 3;  // test::tiny_dataset() at batch 4

Task task(double target, int epochs) {
  Task t;
  t.name = "scripted";
  t.dataset = "tiny";
  t.model = "mnist-mlp";
  t.batch = 4;
  t.eval_batch = 8;
  t.schedule = {"constant", 0.1};
  t.target = target;
  t.epochs = epochs;
  return t;
}

double sum_to(const std::vector<double>& v, size_t epochs) {
  return std::accumulate(v.begin(), v.begin() + epochs, 0.0);
}

// Reaches 7/8 >= 0.8 at epoch 3 of 4. Steps sleep 10 ms (30 ms an epoch),
// each evaluation 250 ms: evaluation is excluded, so the time to target is
// the training loop time of epochs 1-3 alone.
TEST(TimeToTarget, ReadAtTheFirstEpochThatReachesTheTarget) {
  Script s;
  s.val_accuracy = {0.25, 0.5, 0.875, 1.0};
  s.step_seconds = 0.01;
  s.infer_seconds = 0.25;
  ScriptedBackend b(s);
  const TrainRun r = train_task(b, task(0.8, 4), test::tiny_dataset(), {});
  ASSERT_EQ(results::state_name(r.state), "converged") << r.message;
  ASSERT_EQ(r.epochs.size(), 3u);  // stopped at epoch 3, never ran epoch 4
  EXPECT_EQ(b.record.train_steps, 3 * kStepsPerEpoch);
  EXPECT_DOUBLE_EQ(r.epochs[0].val_accuracy, 0.25);
  EXPECT_DOUBLE_EQ(r.epochs[1].val_accuracy, 0.5);
  EXPECT_DOUBLE_EQ(r.epochs[2].val_accuracy, 0.875);
  // At least the nine 10 ms sleeps and the backend's own time in its
  // steps; less than that plus one evaluation (250 ms), since none counts.
  const double own_train = sum_to(b.record.train_seconds, 3);
  EXPECT_GE(r.time_to_target, 9 * 0.01);
  EXPECT_GE(r.time_to_target, own_train);
  EXPECT_LT(r.time_to_target, own_train + 0.2);
  EXPECT_GE(r.total_eval_seconds, 3 * 0.25);
  EXPECT_EQ(r.time_to_target, r.epochs[2].train_seconds);
  EXPECT_EQ(to_json(r)["time_to_target_seconds"].get<double>(),
            r.time_to_target);
}

// The same run with --include-eval-time: the three evaluations (at least
// 3 x 250 ms by the sleeps) are part of the time to target.
TEST(TimeToTarget, IncludeEvalTimeCountsEveryEvaluationUpToTheTarget) {
  Script s;
  s.val_accuracy = {0.25, 0.5, 0.875, 1.0};
  s.step_seconds = 0.01;
  s.infer_seconds = 0.25;
  ScriptedBackend b(s);
  TrainOptions o;
  o.include_eval_time = true;
  const TrainRun r = train_task(b, task(0.8, 4), test::tiny_dataset(), o);
  ASSERT_EQ(results::state_name(r.state), "converged") << r.message;
  ASSERT_EQ(r.epochs.size(), 3u);
  const double own =
      sum_to(b.record.train_seconds, 3) + sum_to(b.record.infer_seconds, 3);
  EXPECT_GE(r.time_to_target, 9 * 0.01 + 3 * 0.25);
  EXPECT_GE(r.time_to_target, own);
  EXPECT_LT(r.time_to_target, own + 0.2);
}

// Accuracy never reaches 0.9 in the 3-epoch budget: not_converged after
// exactly 3 epochs, and no time to target at all.
TEST(TimeToTarget, NeverReachedWithinTheEpochBudgetIsNotConverged) {
  Script s;
  s.val_accuracy = {0.125, 0.25, 0.375};
  ScriptedBackend b(s);
  const TrainRun r = train_task(b, task(0.9, 3), test::tiny_dataset(), {});
  EXPECT_EQ(results::state_name(r.state), "not_converged");
  EXPECT_EQ(r.epochs.size(), 3u);
  EXPECT_EQ(b.record.train_steps, 3 * kStepsPerEpoch);
  EXPECT_TRUE(to_json(r)["time_to_target_seconds"].is_null());
}

// A 90 ms training-time budget with steps of 20 ms (60 ms an epoch): two
// epochs take at least 120 ms, so the run must stop after the first or the
// second epoch (the first whose cumulative time reaches 90 ms), far short
// of its 10-epoch budget, and it did not converge.
TEST(TimeToTarget, NeverReachedWithinTheTimeBudgetIsNotConverged) {
  Script s;
  s.val_accuracy = {0.125};
  s.step_seconds = 0.02;
  ScriptedBackend b(s);
  TrainOptions o;
  o.max_seconds = 0.09;
  const TrainRun r = train_task(b, task(0.9, 10), test::tiny_dataset(), o);
  EXPECT_EQ(results::state_name(r.state), "not_converged");
  ASSERT_GE(r.epochs.size(), 1u);
  ASSERT_LE(r.epochs.size(), 2u);
  EXPECT_GE(r.epochs.back().train_seconds, 0.09);
  for (size_t e = 0; e + 1 < r.epochs.size(); ++e)
    EXPECT_LT(r.epochs[e].train_seconds, 0.09);
  EXPECT_TRUE(to_json(r)["time_to_target_seconds"].is_null());
}

// A NaN loss in epoch 2 fails the run there, naming the epoch: epoch 1 is
// recorded, epoch 2 stops at its first step (3 + 1 steps in all).
TEST(TimeToTarget, NanLossFailsTheRunNamingTheEpoch) {
  Script s;
  s.val_accuracy = {0.125};
  s.loss = {1.0, std::nan("")};
  ScriptedBackend b(s);
  const TrainRun r = train_task(b, task(0.9, 3), test::tiny_dataset(), {});
  EXPECT_EQ(results::state_name(r.state), "failed");
  EXPECT_NE(r.message.find("nan"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("epoch 2"), std::string::npos) << r.message;
  EXPECT_EQ(r.epochs.size(), 1u);
  EXPECT_EQ(b.record.train_steps, kStepsPerEpoch + 1);
  EXPECT_TRUE(to_json(r)["time_to_target_seconds"].is_null());
}

TEST(TimeToTarget, InfiniteLossFailsTooInTheFirstEpoch) {
  Script s;
  s.loss = {INFINITY};
  ScriptedBackend b(s);
  const TrainRun r = train_task(b, task(0.9, 3), test::tiny_dataset(), {});
  EXPECT_EQ(results::state_name(r.state), "failed");
  EXPECT_NE(r.message.find("epoch 1"), std::string::npos) << r.message;
  EXPECT_TRUE(r.epochs.empty());
}

// Without a target the run is a fixed number of epochs, all of them run,
// even when the accuracy is perfect from the start.
TEST(TimeToTarget, FixedEpochRunsComplete) {
  Script s;
  s.val_accuracy = {1.0};
  ScriptedBackend b(s);
  const TrainRun r = train_task(b, task(0, 2), test::tiny_dataset(), {});
  EXPECT_EQ(results::state_name(r.state), "completed");
  EXPECT_EQ(r.epochs.size(), 2u);
  EXPECT_EQ(b.record.train_steps, 2 * kStepsPerEpoch);
}

// --max-time is checked at epoch ends: with 50 ms steps (150 ms an epoch)
// and a 0.1 s budget, epoch 1 runs whole, then the run stops. A fixed-epoch
// run cut short is "stopped", never "completed", and says why.
TEST(TimeToTarget, FixedEpochRunCutShortByTheTimeBudgetIsStopped) {
  Script s;
  s.step_seconds = 0.05;
  ScriptedBackend b(s);
  TrainOptions o;
  o.max_seconds = 0.1;
  const TrainRun r = train_task(b, task(0, 4), test::tiny_dataset(), o);
  EXPECT_EQ(results::state_name(r.state), "stopped");
  EXPECT_EQ(r.epochs.size(), 1u);
  EXPECT_EQ(b.record.train_steps, kStepsPerEpoch);
  EXPECT_NE(r.message.find("after 1 of 4 epochs"), std::string::npos)
      << r.message;
}

// A budget reached in the last epoch cuts nothing short: completed.
TEST(TimeToTarget, BudgetReachedInTheLastEpochStillCompletes) {
  Script s;
  s.step_seconds = 0.05;
  ScriptedBackend b(s);
  TrainOptions o;
  o.max_seconds = 0.1;
  const TrainRun r = train_task(b, task(0, 1), test::tiny_dataset(), o);
  EXPECT_EQ(results::state_name(r.state), "completed") << r.message;
}

// Any exception from the backend becomes the run's state, never an escape
// that loses the other seeds' runs.
TEST(TimeToTarget, ABackendErrorIsARunStateNotAnEscape) {
  Script s;
  s.throw_in_step = "scripted: unknown batch size 4";
  ScriptedBackend b(s);
  const TrainRun r = train_task(b, task(0.9, 3), test::tiny_dataset(), {});
  EXPECT_EQ(results::state_name(r.state), "invalid_args");
  EXPECT_EQ(r.message, "scripted: unknown batch size 4");
  s.throw_in_step.clear();
  s.runtime_error_in_step = "scripted: primitive failed";
  ScriptedBackend c(s);
  const TrainRun f = train_task(c, task(0.9, 3), test::tiny_dataset(), {});
  EXPECT_EQ(results::state_name(f.state), "failed");
  EXPECT_EQ(f.message, "scripted: primitive failed");
}

// A backend that runs out of memory is a result, not a crash.
TEST(TimeToTarget, OutOfMemoryInCompileIsAnOomRun) {
  Script s;
  s.oom_in_compile = true;
  ScriptedBackend b(s);
  const TrainRun r = train_task(b, task(0.9, 3), test::tiny_dataset(), {});
  EXPECT_EQ(results::state_name(r.state), "oom");
  EXPECT_TRUE(r.epochs.empty());
}

}  // namespace
}  // namespace nnbench::train
