// The answer across machines (compare/machines.h): which machine is
// fastest and which cheapest per job, with costs from each machine's
// recorded instance price. Expected figures are computed here by hand from
// the samples and prices the test gives.
#include "compare/machines.h"

#include <gtest/gtest.h>

namespace nnbench::compare {
namespace {

using nlohmann::json;

// 20 samples rising evenly from `first` by `step`: the median is the mean
// of the 10th and 11th, first + 9.5 steps.
results::RunResult run(const std::string& mode, int64_t batch, double first,
                       double step) {
  results::RunResult r;
  r.model = "m";
  r.backend = "x";
  r.requested.backend = "x";
  r.requested.batch = batch;
  r.requested.mode = backend::mode_from_name(mode);
  r.requested.options.threads = 8;
  r.effective.threads = 8;
  for (int i = 0; i < 20; ++i) r.samples.push_back(first + i * step);
  return r;
}

results::TrainRun training(int threads, double seconds) {
  results::TrainRun t;
  t.task = "t";
  t.backend = "x";
  t.state = results::State::kCompleted;
  t.effective.threads = threads;
  t.total_train_seconds = seconds;
  return t;
}

json environment(const std::string& host, const std::string& cpu,
                 const json& instance) {
  return {{"host", host},
          {"cpu", {{"name", cpu}, {"microarchitecture", "Zen 2"}}},
          {"logical_cpus", 8},
          {"instance", instance}};
}

// A: a CPU instance priced pro rata ($0.64/h for 64 vCPUs, 8 used: $0.08/h);
// B: a GPU instance at $3.60/h, never scaled.
const json kCpuBox = {{"name", "cpu-box"},
                      {"usd_per_hour", 0.64},
                      {"vcpus", 64},
                      {"gpus", 0},
                      {"pro_rata_vcpus", true}};
const json kGpuBox = {
    {"name", "gpu-box"}, {"usd_per_hour", 3.6}, {"vcpus", 8}, {"gpus", 1}};

TEST(Machines, FastestAndCheapestWithHandComputedCostsAndGaps) {
  std::vector<results::RunResult> a_runs = {run("train", 100, 0.100, 1e-4),
                                            run("infer", 100, 0.030, 1e-5),
                                            run("train", 1000, 1.0, 1e-3)};
  std::vector<results::RunResult> b_runs = {run("train", 100, 0.025, 1e-5),
                                            run("train", 1000, 0, 0)};
  b_runs[1].samples.clear();
  b_runs[1].state = results::State::kOom;
  std::vector<results::TrainRun> a_train = {training(4, 100), training(8, 60),
                                            training(8, 62)};
  std::vector<results::TrainRun> b_train = {training(8, 10)};
  b_runs[0].effective.threads = 8;
  const MachineAnswer a = fastest_machines(
      {{environment("sha256:aaaaaaaaaaaaaaaa", "CPU A", kCpuBox), &a_runs,
        &a_train},
       {environment("sha256:bbbbbbbbbbbbbbbb", "CPU B", kGpuBox), &b_runs,
        &b_train}});
  ASSERT_EQ(a.machines.size(), 2u);
  EXPECT_EQ(a.machines[0].label, "cpu-box");
  EXPECT_EQ(a.machines[1].label, "gpu-box");
  ASSERT_EQ(a.jobs.size(), 4u);

  const MachineJob& j = a.jobs[0];
  EXPECT_EQ(j.name, "m x fp32 train b100 t8");
  const double ma = 0.100 + 9.5e-4, mb = 0.025 + 9.5e-5;
  EXPECT_NEAR(j.on[0].seconds, ma, 1e-12);
  EXPECT_NEAR(j.on[1].seconds, mb, 1e-12);
  EXPECT_NEAR(j.on[1].per_second, 100 / mb, 1e-6);
  // Per 10,000 samples: 100 steps of the median at the price per second.
  const double ua = ma * 100 * 0.08 / 3600, ub = mb * 100 * 3.6 / 3600;
  EXPECT_NEAR(*j.on[0].usd, ua, 1e-12);
  EXPECT_NEAR(*j.on[1].usd, ub, 1e-12);
  EXPECT_NEAR(*j.on[1].time_vs_base, mb / ma, 1e-12);
  EXPECT_NEAR(*j.on[1].usd_vs_base, ub / ua, 1e-9);
  ASSERT_TRUE(j.fastest && j.cheapest);
  EXPECT_EQ(j.fastest->first, "gpu-box");
  EXPECT_EQ(j.fastest->second, "cpu-box");
  EXPECT_NEAR(j.fastest->factor, ma / mb, 1e-9);
  EXPECT_FALSE(j.fastest->tie);
  EXPECT_LT(j.fastest->ci.lo, ma / mb);
  EXPECT_GT(j.fastest->ci.hi, ma / mb);
  EXPECT_EQ(j.cheapest->first, "cpu-box");
  EXPECT_NEAR(j.cheapest->factor, ub / ua, 1e-9);
  EXPECT_FALSE(j.cheapest->tie);
  EXPECT_NE(j.on[0].price.find("scaled to 8 of 64 vCPUs"), std::string::npos)
      << j.on[0].price;

  // Only A inferred: a gap on B, never a zero.
  EXPECT_EQ(a.jobs[1].name, "m x fp32 infer b100 t8");
  EXPECT_FALSE(a.jobs[1].on[1].measured);
  EXPECT_EQ(a.jobs[1].on[1].state, "");
  EXPECT_FALSE(a.jobs[1].on[1].usd);
  EXPECT_EQ(a.jobs[1].fastest->first, "cpu-box");
  EXPECT_EQ(a.jobs[1].fastest->second, "");
  // B ran out of memory at batch 1000: the cloud GPU study's OOM cell.
  EXPECT_EQ(a.jobs[2].on[1].state, "oom");
  EXPECT_FALSE(a.jobs[2].on[1].time_vs_base);

  // Training: each machine at its most threads (A: 60 and 62 s at 8, the
  // 4-thread run left out), priced per run.
  const MachineJob& t = a.jobs[3];
  EXPECT_TRUE(t.training);
  EXPECT_NEAR(t.on[0].seconds, 61, 1e-12);
  EXPECT_EQ(t.on[0].threads, 8);
  EXPECT_NEAR(*t.on[0].usd, 61 * 0.08 / 3600, 1e-12);
  EXPECT_NEAR(*t.on[1].usd, 10 * 3.6 / 3600, 1e-12);
  // One or two runs a side: the statistics cannot decide, a tie said so.
  EXPECT_TRUE(t.fastest->tie);

  ASSERT_EQ(a.verdicts.size(), 2u);
  EXPECT_EQ(a.verdicts[0].first, "m");
  // The headline: measured on both machines, the train b100 job (the
  // b1000 one has no valid time on B).
  EXPECT_NE(a.verdicts[0].second.find("gpu-box is 4.0"), std::string::npos)
      << a.verdicts[0].second;
  EXPECT_NE(a.verdicts[0].second.find("cheapest: cpu-box"), std::string::npos)
      << a.verdicts[0].second;
  EXPECT_NE(a.verdicts[0].second.find("train b100"), std::string::npos);
}

TEST(Machines, AlikeMachinesAreToldApartByHostAndUnpricedOnesSaySo) {
  std::vector<results::RunResult> a_runs = {run("train", 10, 0.01, 1e-5)};
  std::vector<results::RunResult> b_runs = {run("train", 10, 0.01, 1e-5)};
  const MachineAnswer a =
      fastest_machines({{environment("sha256:aaaa111111111111", "CPU", json()),
                         &a_runs, nullptr},
                        {environment("sha256:bbbb222222222222", "CPU", json()),
                         &b_runs, nullptr},
                        {environment("sha256:aaaa111111111111", "CPU", json()),
                         &b_runs, nullptr}});
  ASSERT_EQ(a.machines.size(), 2u);  // the third source is the first machine
  EXPECT_EQ(a.machines[0].label, "CPU (Zen 2), 8 CPUs #aaaa");
  EXPECT_EQ(a.machines[1].label, "CPU (Zen 2), 8 CPUs #bbbb");
  EXPECT_FALSE(a.jobs[0].on[0].usd);
  EXPECT_FALSE(a.jobs[0].cheapest);
  // Same samples: a tie, never a winner by noise.
  EXPECT_TRUE(a.jobs[0].fastest->tie);
  EXPECT_NE(a.verdicts[0].second.find("no machine has a price"),
            std::string::npos)
      << a.verdicts[0].second;
  // Anonymous runs of alike machines are one machine.
  json anon = environment("", "CPU", json());
  anon.erase("host");
  EXPECT_EQ(
      fastest_machines({{anon, &a_runs, nullptr}, {anon, &b_runs, nullptr}})
          .machines.size(),
      1u);
}

}  // namespace
}  // namespace nnbench::compare
