// The fastest engine per model, from one run's records (compare/engines.h),
// and the figures' axes the report draws them on.
#include "compare/engines.h"

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
  EXPECT_EQ(v[3].line,
            "torch only, fp32 train b64 t2; onednn: unimplemented "
            "(layer 'lstm_1' (lstm))");
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
