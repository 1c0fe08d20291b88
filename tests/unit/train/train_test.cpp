// Schedules, MLPerf aggregation and scoring, on hand-made values (exports:
// exports_test.cpp).
#include <gtest/gtest.h>

#include <cmath>

#include "model/zoo/zoo.h"
#include "train/adapt.h"
#include "train/aggregate.h"
#include "train/schedule.h"
#include "train/task.h"
#include "train/trainer.h"
#include "util/error.h"

namespace nnbench::train {
namespace {

TEST(Schedule, ShapesOverARun) {
  Schedule s;
  s.lr = 0.1;
  EXPECT_DOUBLE_EQ(learning_rate(s, 3, 10), 0.1);
  s.kind = "step";
  s.step_epochs = 2;
  s.gamma = 0.5;
  EXPECT_DOUBLE_EQ(learning_rate(s, 1.9, 10), 0.1);
  EXPECT_DOUBLE_EQ(learning_rate(s, 4.0, 10), 0.025);
  s.kind = "cosine";
  s.final_fraction = 0;
  EXPECT_NEAR(learning_rate(s, 0, 10), 0.1, 1e-12);
  EXPECT_NEAR(learning_rate(s, 5, 10), 0.05, 1e-12);
  EXPECT_NEAR(learning_rate(s, 10, 10), 0.0, 1e-12);
  s.kind = "one-cycle";
  s.warmup_fraction = 0.25;
  s.final_fraction = 0.1;
  EXPECT_NEAR(learning_rate(s, 0, 8), 0.01, 1e-12);
  EXPECT_NEAR(learning_rate(s, 2, 8), 0.1, 1e-12);  // the peak
  EXPECT_NEAR(learning_rate(s, 5, 8), 0.055, 1e-12);
  EXPECT_NEAR(learning_rate(s, 8, 8), 0.01, 1e-12);
  s.kind = "exponential";
  EXPECT_THROW(learning_rate(s, 1, 2), Error);
}

TrainRun run(uint64_t seed, const std::string& state, double t) {
  TrainRun r;
  r.seed = seed;
  r.state = results::state_from_name(state);
  r.time_to_target = t;
  return r;
}

TEST(Aggregate, DropsFastestAndSlowest) {
  const auto a = aggregate({run(1, "converged", 10), run(2, "converged", 30),
                            run(3, "converged", 12), run(4, "converged", 14),
                            run(5, "converged", 11)});
  ASSERT_TRUE(a.valid);
  EXPECT_DOUBLE_EQ(a.mean_time_to_target, (11 + 12 + 14) / 3.0);
  EXPECT_EQ(a.dropped_seeds, (std::vector<uint64_t>{1, 2}));
}

TEST(Aggregate, OneNonConvergedRunIsDroppedAsTheSlowest) {
  const auto a = aggregate({run(1, "converged", 10), run(2, "not_converged", 0),
                            run(3, "converged", 12), run(4, "converged", 14)});
  ASSERT_TRUE(a.valid);
  EXPECT_DOUBLE_EQ(a.mean_time_to_target, 13.0);
  EXPECT_EQ(a.dropped_seeds, (std::vector<uint64_t>{1, 2}));
}

TEST(Aggregate, TwoNonConvergedRunsAreInvalid) {
  const auto a =
      aggregate({run(1, "converged", 10), run(2, "not_converged", 0),
                 run(3, "not_converged", 0), run(4, "converged", 9)});
  EXPECT_FALSE(a.valid);
  EXPECT_NE(a.reason.find("2 of 4"), std::string::npos);
}

TEST(Aggregate, SeedsAreDistinct) {
  const auto s = seeds_for(7, 5);
  EXPECT_EQ(std::set<uint64_t>(s.begin(), s.end()).size(), 5u);
  EXPECT_EQ(s[0], 7u);
}

TEST(Score, CrossEntropyAndAccuracy) {
  host::Tensor logits, labels;
  logits.f = {2, 0, 0, 0, 0, 1};  // rows: predicts 0; predicts 2
  labels.i = {0, 1};
  Score s;
  score(logits, labels, false, s);
  EXPECT_EQ(s.count, 2);
  EXPECT_EQ(s.correct, 1);
  const double l0 = std::log(std::exp(2.0) + 2) - 2;
  const double l1 = std::log(2 + std::exp(1.0)) - 0;
  EXPECT_NEAR(s.loss_sum, l0 + l1, 1e-6);
}

TEST(Score, BinaryCrossEntropy) {
  host::Tensor logits, labels;
  logits.f = {3, -1};
  labels.i = {1, 1};
  Score s;
  score(logits, labels, true, s);
  EXPECT_EQ(s.correct, 1);
  EXPECT_NEAR(s.loss_sum,
              std::log1p(std::exp(-3.0)) + std::log1p(std::exp(1.0)), 1e-9);
}

TEST(Tasks, ShippedTasksAreWellFormed) {
  for (const auto& t : tasks()) {
    SCOPED_TRACE(t.name);
    EXPECT_GT(t.batch, 0);
    EXPECT_GT(t.epochs, 0);
    EXPECT_GE(t.target, 0);
    EXPECT_LE(t.target, 1);
    EXPECT_FALSE(t.source.empty());
  }
  EXPECT_EQ(task("fashion-mnist-92").target, 0.92);
  EXPECT_EQ(task("cifar10-94").target, 0.94);
  EXPECT_THROW(task("imagenet-93"), Error);
}

}  // namespace
}  // namespace nnbench::train

namespace nnbench::train {
namespace {

// IMDb's labels are one per review ([N]); a binary model's output is [N, 1],
// the label shape every engine takes: LibTorch and PyTorch refused [N]
// (found running keras-imdb-fasttext on synthetic data).
TEST(Adapt, ABinaryModelsLabelsTakeTheOutputsShape) {
  const model::Model m = model::zoo::get("imdb-fasttext");
  ASSERT_EQ(m.loss, model::Loss::kSigmoidBinaryCrossEntropy);
  host::Batch b;
  b.input.shape = {4, 400};
  b.labels.shape = {4};
  reshape_inputs(b, m);
  EXPECT_EQ(b.labels.shape, (model::Shape{4, 1}));
  EXPECT_EQ(b.input.shape, (model::Shape{4, 400}));
  // A softmax model's class ids keep their shape.
  host::Batch c;
  c.input.shape = {4, 1, 28, 28};
  c.labels.shape = {4};
  reshape_inputs(c, model::zoo::get("mnist-mlp"));
  EXPECT_EQ(c.labels.shape, (model::Shape{4}));
  EXPECT_EQ(c.input.shape, (model::Shape{4, 784}));
}

}  // namespace
}  // namespace nnbench::train
