// Derived figures and the max-batch search, on hand-made results.
#include "study/derive.h"

#include <gtest/gtest.h>

#include "results/result.h"
#include "study/max_batch.h"

namespace nnbench::study {
namespace {

ResultRow row(int threads, int64_t batch, double median, int effective = 0) {
  ResultRow r;
  r.model = "m";
  r.backend = "b";
  r.precision = "fp32";
  r.mode = "train";
  r.state = "ok";
  r.valid = true;
  r.threads = threads;
  r.batch = batch;
  r.median_seconds = median;
  if (effective) r.record["effective"]["threads"] = std::to_string(effective);
  return r;
}

TEST(Derive, SpeedupAndEfficiencyAgainstOneThread) {
  // Threads 0 resolved to 4 (effective); 2 threads has two repetitions,
  // medians 0.006 and 0.004: their median is 0.005.
  const auto d = derive({row(1, 32, 0.010), row(2, 32, 0.006),
                         row(2, 32, 0.004), row(0, 32, 0.004, 4)});
  std::map<double, double> speedup, eff;
  for (const auto& r : d) {
    if (r.name == "speedup") speedup[r.x] = r.value;
    if (r.name == "efficiency") eff[r.x] = r.value;
    EXPECT_EQ(r.group, "m b fp32 train b32");
  }
  EXPECT_DOUBLE_EQ(speedup.at(1), 1.0);
  EXPECT_DOUBLE_EQ(speedup.at(2), 2.0);
  EXPECT_DOUBLE_EQ(speedup.at(4), 2.5);
  EXPECT_DOUBLE_EQ(eff.at(2), 1.0);
  EXPECT_DOUBLE_EQ(eff.at(4), 0.625);
}

TEST(Derive, NoSpeedupWithoutAOneThreadCaseAndInvalidRowsIgnored) {
  auto bad = row(1, 8, 0.001);
  bad.valid = false;
  const auto d = derive({row(2, 8, 0.010), row(4, 8, 0.006), bad});
  for (const auto& r : d) EXPECT_NE(r.name, "speedup");
}

TEST(Derive, SamplesPerSecondAgainstBatch) {
  const auto d = derive({row(2, 16, 0.010), row(2, 32, 0.016)});
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].name, "samples_per_second");
  EXPECT_DOUBLE_EQ(d[0].value, 1600);
  EXPECT_DOUBLE_EQ(d[1].value, 2000);
}

// A model that fits up to batch 12: doubling to 16, then bisection.
TEST(MaxBatch, DoublingThenBisection) {
  std::vector<int64_t> asked;
  const Probe probe = [&](const PlannedCase& p) {
    asked.push_back(p.c.request.batch);
    auto r = std::make_unique<results::RunResult>();
    if (p.c.request.batch > 12) r->state = results::State::kOom;
    EXPECT_EQ(p.c.request.stop.min_iterations, 2);
    return r;
  };
  PlannedCase base;
  base.scenario = "throughput";
  base.c.model = "m";
  const MaxBatch m = find_max_batch(base, 1024, probe);
  EXPECT_EQ(m.batch, 12);
  EXPECT_TRUE(m.bounded);
  EXPECT_EQ(asked, (std::vector<int64_t>{1, 2, 4, 8, 16, 12, 14, 13}));
  EXPECT_EQ(m.probes, 8);
  // The cap: everything fits up to it.
  asked.clear();
  const MaxBatch c = find_max_batch(base, 8, probe);
  EXPECT_EQ(c.batch, 8);
  EXPECT_FALSE(c.bounded);
  // Another failure stops the search and says so.
  const Probe crash = [](const PlannedCase& p) {
    auto r = std::make_unique<results::RunResult>();
    if (p.c.request.batch == 4) {
      r->state = results::State::kCrashed;
      r->message = "signal 11";
    }
    return r;
  };
  const MaxBatch x = find_max_batch(base, 1024, crash);
  EXPECT_EQ(x.batch, 2);
  EXPECT_NE(x.why.find("batch 4: crashed"), std::string::npos) << x.why;
}

}  // namespace
}  // namespace nnbench::study
