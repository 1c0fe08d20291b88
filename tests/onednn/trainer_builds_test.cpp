// Compile work stays out of timed regions: a training run that evaluates at
// another batch size (with a short last batch) and measures batch-1 latency
// builds its three graphs in compile and none while its clocks run.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backend/registry.h"
#include "train/trainer.h"

namespace nnbench::train {
namespace {

data::Split images(int64_t n, uint32_t seed) {
  data::Split s;
  s.input.shape = {1, 28, 28};
  s.classes = 10;
  s.size = n;
  std::mt19937 gen(seed);
  std::normal_distribution<float> px;
  s.f.resize(n * 28 * 28);
  for (float& x : s.f) x = px(gen);
  for (int64_t i = 0; i < n; ++i) s.labels.push_back(i % 10);
  return s;
}

TEST(OnednnTraining, EveryGraphIsBuiltBeforeTheClockStarts) {
  data::Dataset d;
  d.name = "fashion-mnist";
  d.train = images(64, 1);
  d.test = images(50, 2);  // 32 + a short batch of 18, padded
  Task t = task("fashion-mnist-92");
  t.batch = 16;
  t.eval_batch = 32;
  TrainOptions o;
  o.threads = 2;
  o.epochs = 2;
  o.latency = true;
  o.latency_items = 3;
  auto b = backend::make_backend("onednn");
  const TrainRun r = train_task(*b, t, d, o);
  ASSERT_TRUE(r.state == results::State::kNotConverged ||
              r.state == results::State::kConverged)
      << results::state_name(r.state) << ": " << r.message;
  ASSERT_EQ(r.epochs.size(), 2u);
  // Read after the run: train 16, evaluation 32, latency 1; nothing more.
  EXPECT_EQ(r.effective.extras.at("graph_builds"), "3");
  EXPECT_EQ(r.effective.extras.at("built_for_batches"), "1, 16 (train), 32");
  // 50 items scored, the padding rows dropped: accuracy is k / 50.
  const double k = r.epochs[1].val_accuracy * 50;
  EXPECT_NEAR(k, std::round(k), 1e-9);
  EXPECT_TRUE(std::isfinite(r.epochs[1].val_loss));
  ASSERT_TRUE(r.latency);
  EXPECT_EQ(r.latency->items, 3);
}

}  // namespace
}  // namespace nnbench::train
