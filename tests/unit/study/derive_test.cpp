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

// A data-parallel row: `ranks` over `engine`, samples/s of the global batch.
ResultRow ranked(int ranks, const std::string& engine, double sps) {
  ResultRow r = row(1, 64, 64 / sps);
  r.samples_per_second = sps;
  if (ranks > 1)
    r.record["distributed"] = {{"ranks", ranks}, {"engine", engine}};
  return r;
}

TEST(Derive, SpeedupOverProcessesAgainstTheOneProcessCase) {
  // One process 100 samples/s (two repetitions: 90 and 110); MPI 2 ranks
  // 190, 4 ranks 300; Gloo 2 ranks 150.
  auto two_threads = row(2, 64, 0.4);
  two_threads.samples_per_second = 160;
  const auto d =
      derive({ranked(1, "", 90), ranked(1, "", 110), ranked(2, "mpi", 190),
              ranked(4, "mpi", 300), ranked(2, "gloo", 150), two_threads});
  std::map<std::string, std::map<double, double>> speedup, eff;
  for (const auto& r : d) {
    if (r.name == "speedup_processes") speedup[r.group][r.x] = r.value;
    if (r.name == "efficiency_processes") eff[r.group][r.x] = r.value;
  }
  const std::string mpi = "m b fp32 train b64 t1 mpi";
  const std::string gloo = "m b fp32 train b64 t1 gloo";
  EXPECT_DOUBLE_EQ(speedup.at(mpi).at(1), 1.0);
  EXPECT_DOUBLE_EQ(speedup.at(mpi).at(2), 1.9);
  EXPECT_DOUBLE_EQ(speedup.at(mpi).at(4), 3.0);
  EXPECT_DOUBLE_EQ(eff.at(mpi).at(4), 0.75);
  EXPECT_DOUBLE_EQ(speedup.at(gloo).at(2), 1.5);
  // Thread sweeps keep processes apart: the 1-rank-thread rows of the
  // data-parallel runs are no repetitions of the one-process 1-thread case
  // (pooled, its median would be 64/150 s and the speed-up 1.07).
  double threads2 = 0;
  for (const auto& r : d)
    if (r.name == "speedup" && r.group == "m b fp32 train b64" && r.x == 2)
      threads2 = r.value;
  EXPECT_DOUBLE_EQ(threads2, (64.0 / 90 + 64.0 / 110) / 2 / 0.4);
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
