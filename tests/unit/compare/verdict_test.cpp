// The fastest engine per model, from one run's records (compare/verdict.h),
// and the figures' axes the report draws them on.
#include "compare/verdict.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "report/charts.h"

namespace nnbench {
namespace {

// A throughput record of `n` samples around `ms` milliseconds (+-1 %,
// seeded), or a failure.
results::RunResult run(const std::string& model, const std::string& engine,
                       const std::string& mode, int threads, double ms,
                       unsigned seed, int n = 30) {
  results::RunResult r;
  r.model = model;
  r.backend = engine;
  r.backend_version = engine + " 1";
  r.requested.backend = engine;
  r.requested.batch = 64;
  r.requested.mode = backend::mode_from_name(mode);
  r.requested.options.threads = threads;
  r.effective.threads = threads;
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> noise(0.99, 1.01);
  for (int i = 0; i < n; ++i) r.samples.push_back(ms / 1e3 * noise(g));
  std::vector<double> s = r.samples;
  std::sort(s.begin(), s.end());
  if (n > 0) r.stats.median = s[s.size() / 2];
  r.stats.n = n;
  return r;
}

TEST(Engines, FastestPerModelFromTheTrainingCellAtTheMostThreads) {
  std::vector<results::RunResult> runs = {
      // mlp: onednn twice as fast training at 2 threads; torch faster at
      // inference on 1 thread.
      run("mlp", "torch", "train", 2, 10, 1),
      run("mlp", "onednn", "train", 2, 5, 2),
      run("mlp", "torch", "train", 1, 18, 3),
      run("mlp", "onednn", "train", 1, 9, 4),
      run("mlp", "torch", "infer", 1, 2, 5),
      run("mlp", "onednn", "infer", 1, 4, 6),
      // cnn: 3 % apart, under the 10 % tie threshold.
      run("cnn", "torch", "train", 2, 10, 7),
      run("cnn", "onednn", "train", 2, 10.3, 8),
      // resnet: onednn out of memory training at 2 threads; the headline
      // is the cell both ran.
      run("resnet", "torch", "train", 2, 50, 11),
      run("resnet", "onednn", "train", 2, 0, 12, 0),
      run("resnet", "torch", "train", 1, 90, 13),
      run("resnet", "onednn", "train", 1, 60, 14),
      // lstm: onednn refuses the layer.
      run("lstm", "torch", "train", 0, 30, 9),
      run("lstm", "onednn", "train", 0, 0, 10, 0)};
  // Every CPU asked (0); torch ran 2 threads, onednn never said.
  runs[12].effective.threads = 2;
  runs.back().effective.threads = 0;
  runs[9].state = results::State::kOom;
  runs.back().state = results::State::kUnimplemented;
  runs.back().message = "layer 'lstm_1' (lstm)";
  const auto v = compare::fastest_engines(runs);
  ASSERT_EQ(v.size(), 4u);

  EXPECT_EQ(v[0].model, "mlp");
  EXPECT_EQ(v[0].headline.name, "fp32 train b64 t2");
  EXPECT_EQ(v[0].headline.fastest, "onednn");
  EXPECT_EQ(v[0].headline.runner_up, "torch");
  EXPECT_FALSE(v[0].headline.tie);
  // Medians 10 and 5 ms (+-1 %): a ratio near 2 whose interval holds it.
  EXPECT_NEAR(v[0].headline.speedup, 2.0, 0.03);
  EXPECT_LT(v[0].headline.speedup_ci.lo, v[0].headline.speedup);
  EXPECT_GT(v[0].headline.speedup_ci.hi, v[0].headline.speedup);
  EXPECT_GT(v[0].headline.speedup_ci.lo, 1.9);
  EXPECT_EQ(v[0].cells, 3);
  EXPECT_EQ(v[0].wins, 2);  // torch won the inference cell
  EXPECT_EQ(v[0].line.rfind("onednn is 2.0", 0), 0u) << v[0].line;
  EXPECT_NE(v[0].line.find("; cells won of 3: onednn 2, torch 1"),
            std::string::npos)
      << v[0].line;

  EXPECT_TRUE(v[1].headline.tie);
  EXPECT_EQ(v[1].line.rfind("tie: torch and onednn", 0), 0u) << v[1].line;
  EXPECT_NE(v[1].line.find("within the 10 % noise"), std::string::npos)
      << v[1].line;

  EXPECT_EQ(v[2].headline.name, "fp32 train b64 t1");
  EXPECT_EQ(v[2].headline.fastest, "onednn");
  EXPECT_NEAR(v[2].headline.speedup, 1.5, 0.03);
  EXPECT_EQ(v[2].cells, 1);
  EXPECT_EQ(v[2].wins, 1);

  EXPECT_EQ(v[3].headline.fastest, "torch");
  EXPECT_TRUE(v[3].headline.runner_up.empty());
  EXPECT_EQ(v[3].line, "torch only, fp32 train b64 t2");
  // The engine with no time is named beside the verdict, with its state.
  ASSERT_EQ(v[3].behind.size(), 1u);
  EXPECT_EQ(compare::behind_text(v[3].behind[0]),
            "onednn ran no valid time in fp32 train b64 t2: unimplemented "
            "(layer 'lstm_1' (lstm))");
  // resnet: onednn's OOM at 2 threads, in one of its two cells.
  ASSERT_EQ(v[2].behind.size(), 1u);
  EXPECT_EQ(compare::behind_text(v[2].behind[0]),
            "onednn ran no valid time in fp32 train b64 t2 (1 of its 2 "
            "cells): oom");
}

// `n` samples of exactly `ms` milliseconds: medians known to the last bit.
results::RunResult exact(const std::string& model, const std::string& engine,
                         const std::string& mode, double ms, int n = 5) {
  results::RunResult r = run(model, engine, mode, 2, ms, 0, n);
  for (auto& x : r.samples) x = ms / 1e3;
  r.stats.median = ms / 1e3;
  return r;
}

TEST(Engines, FarBehindIsMoreThanTwiceTheFastestAndNeedsBothMedians) {
  EXPECT_EQ(compare::kFarBehind, 2.0);
  EXPECT_FALSE(compare::far_behind(0.016, 0.008));  // exactly 2x
  EXPECT_TRUE(compare::far_behind(0.020, 0.008));   // 2.5x
  EXPECT_FALSE(compare::far_behind(std::nullopt, 0.008));
  EXPECT_FALSE(compare::far_behind(0.020, std::nullopt));
  EXPECT_FALSE(compare::far_behind(0.020, 0.0));
}

// Hand-made records: a at 8 ms, b exactly 2x, c 2.5x with reference
// kernels, d failed with a median of 0 that was never measured, e measured
// 1 ms but invalid (its time is no evidence).
TEST(Engines, EnginesFarBehindAreNamedWithTheirReasons) {
  std::vector<results::RunResult> runs = {
      exact("cnn", "a", "train", 8), exact("cnn", "b", "train", 16),
      exact("cnn", "c", "train", 20), exact("cnn", "d", "train", 0, 0),
      exact("cnn", "e", "train", 1)};
  runs[4].validity.add("contended", "another process took the CPUs");
  runs[2].effective.extras["reference_kernels"] =
      "conv2d_1 convolution ref:any";
  runs[3].state = results::State::kFailed;
  runs[3].message = "step 3: NaN loss\nat layer conv2d_1";
  const auto v = compare::fastest_engines(runs);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].headline.fastest, "a");  // never d's missing median
  EXPECT_EQ(v[0].asked, 5);
  ASSERT_EQ(v[0].behind.size(), 3u);
  const auto& c = v[0].behind[0];
  EXPECT_EQ(c.engine, "c");
  ASSERT_TRUE(c.factor.has_value());
  EXPECT_DOUBLE_EQ(*c.factor, 20.0 / 8.0);
  EXPECT_EQ(compare::behind_text(c),
            "c 2.50x behind a in fp32 train b64 t2: reference kernels: "
            "conv2d_1 convolution ref:any");
  const auto& d = v[0].behind[1];
  EXPECT_EQ(d.engine, "d");
  EXPECT_FALSE(d.factor.has_value());
  EXPECT_EQ(compare::behind_text(d),
            "d ran no valid time in fp32 train b64 t2: failed (step 3: NaN "
            "loss)");
  EXPECT_EQ(compare::behind_text(v[0].behind[2]),
            "e ran no valid time in fp32 train b64 t2: invalid: contended");
}

// Other reasons a record gives: a precision other than the one asked,
// fewer threads than the fastest ran; none at all is said, not left out.
// The headline cell is the one shown, with the count of the others.
TEST(Engines, FarBehindSaysPrecisionThreadsOrThatTheRecordGivesNone) {
  std::vector<results::RunResult> runs = {
      exact("mlp", "a", "train", 10), exact("mlp", "p", "train", 30),
      exact("mlp", "t", "train", 40), exact("mlp", "n", "train", 50),
      exact("mlp", "a", "infer", 2),  exact("mlp", "p", "infer", 3),
      exact("mlp", "t", "infer", 8),  exact("mlp", "n", "infer", 9)};
  for (auto& r : runs) {
    r.requested.options.precision = "bf16";
    r.effective.precision = r.backend == "p" ? "fp32" : "bf16";
    if (r.backend == "t") r.effective.threads = 1;
  }
  const auto v = compare::fastest_engines(runs);
  ASSERT_EQ(v.size(), 1u);
  ASSERT_EQ(v[0].behind.size(), 3u);
  EXPECT_EQ(compare::behind_text(v[0].behind[0]),
            "n 5.00x behind a in bf16 train b64 t2 (more than 2x in 2 of "
            "its 2 cells): no reason in its record");
  EXPECT_EQ(compare::behind_text(v[0].behind[1]),
            "p 3.00x behind a in bf16 train b64 t2 (more than 2x in 1 of its "
            "2 cells): ran fp32 where bf16 was asked");
  EXPECT_EQ(compare::behind_text(v[0].behind[2]),
            "t 4.00x behind a in bf16 train b64 t2 (more than 2x in 2 of its "
            "2 cells): ran 1 thread where a ran 2");
}

// Time per mini-batch: a log axis once the medians span a decade; thread
// axes: integer ticks.
TEST(Engines, FiguresUseLogAndIntegerAxesWhereTheyShould) {
  const auto figure = [](const std::vector<results::RunResult>& runs,
                         const std::string& id) {
    report::Source s;
    s.runs = runs;
    for (const auto& c : report::charts({s}))
      if (c.id == id) return c.config;
    return nlohmann::json();
  };
  const auto wide = figure({run("mlp", "torch", "train", 1, 1, 1),
                            run("resnet", "torch", "train", 1, 140, 2)},
                           "time-per-batch");
  EXPECT_EQ(wide["options"]["scales"]["y"]["type"], "logarithmic");
  const auto narrow = figure({run("mlp", "torch", "train", 1, 1, 1),
                              run("cnn", "torch", "train", 1, 5, 2)},
                             "time-per-batch");
  EXPECT_FALSE(narrow["options"]["scales"]["y"].contains("type"));
  const auto speedup = figure({run("mlp", "torch", "train", 1, 10, 1),
                               run("mlp", "torch", "train", 2, 6, 2)},
                              "speedup");
  EXPECT_EQ(speedup["options"]["scales"]["x"]["ticks"]["precision"], 0);
}

}  // namespace
}  // namespace nnbench
