// DAWNBench latency on a scripted backend: the warm-up is untimed, every
// item is then timed once, and the percentile method is stated.
#include "train/latency.h"

#include <gtest/gtest.h>

#include "model/zoo/zoo.h"
#include "scripted_backend.h"
#include "tiny_data.h"

namespace nnbench::train {
namespace {

using test::Script;
using test::ScriptedBackend;

// The first infer() sleeps 300 ms (one-off work such as a lazy allocation);
// every later one returns at once. That first call must land in the
// untimed warm-up: no timed item may take anywhere near 300 ms.
TEST(Latency, OneOffWorkFallsInTheUntimedWarmUp) {
  Script s;
  s.first_infer_seconds = 0.3;
  s.val_accuracy = {0.5};
  ScriptedBackend b(s);
  const model::Model m = model::zoo::get("mnist-mlp");
  auto exe = b.compile(m, {}, backend::Shapes::infer(1));
  const Latency l = measure_latency(*exe, test::mnist_like_split(20), m);
  EXPECT_EQ(l.warmup_items, kLatencyWarmupItems);
  EXPECT_EQ(l.items, 20);  // the whole set is still timed
  EXPECT_EQ(b.record.infers, 20 + kLatencyWarmupItems);
  EXPECT_LT(l.max, 0.1);
  // One item per batch: the scripted 50 % rounds to right or wrong per
  // item, so the timed predictions are all right (llround(0.5) = 1).
  EXPECT_DOUBLE_EQ(l.accuracy, 1.0);
}

TEST(Latency, WarmUpIsCappedBySmallSetsAndItemLimits) {
  ScriptedBackend b(Script{});
  const model::Model m = model::zoo::get("mnist-mlp");
  auto exe = b.compile(m, {}, backend::Shapes::infer(1));
  EXPECT_EQ(measure_latency(*exe, test::mnist_like_split(3), m).warmup_items,
            3);
  const Latency l = measure_latency(*exe, test::mnist_like_split(30), m, 5);
  EXPECT_EQ(l.items, 5);
  EXPECT_EQ(l.warmup_items, kLatencyWarmupItems);
}

TEST(Latency, JsonStatesThePercentileMethod) {
  ScriptedBackend b(Script{});
  const model::Model m = model::zoo::get("mnist-mlp");
  auto exe = b.compile(m, {}, backend::Shapes::infer(1));
  const auto j = to_json(measure_latency(*exe, test::mnist_like_split(12), m));
  EXPECT_NE(j["percentile_method"].get<std::string>().find("type 7"),
            std::string::npos);
  EXPECT_EQ(j["warmup_items"], 10);
  EXPECT_LE(j["p50_seconds"].get<double>(), j["p90_seconds"].get<double>());
  EXPECT_LE(j["p90_seconds"].get<double>(), j["p99_seconds"].get<double>());
  EXPECT_LE(j["p99_seconds"].get<double>(), j["max_seconds"].get<double>());
}

}  // namespace
}  // namespace nnbench::train
