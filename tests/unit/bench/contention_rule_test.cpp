// The contention rule on hand-made figures: limits worked out by hand,
// with Linux's USER_HZ of 100 (one /proc/stat tick = 10 ms).
#include <gtest/gtest.h>
#include <unistd.h>

#include "bench/cpu_usage.h"

namespace nnbench::bench {
namespace {

results::CpuUsage usage(double wall, int cpus, int threads, double other_cpu,
                        double steal = 0) {
  results::CpuUsage u;
  u.wall_seconds = wall;
  u.cpus = cpus;
  u.threads = threads;
  u.process_cpu_seconds = wall * threads;
  u.other_cpu_seconds = other_cpu;
  u.steal_seconds = steal;
  return u;
}

bool contended(const results::CpuUsage& u) {
  results::Validity v;
  const bool ok = judge_contention(u, results::ContentionRule{}, v);
  EXPECT_EQ(ok, v.valid());
  return !ok;
}

TEST(ContentionRule, TicksAreTenMilliseconds) {
  ASSERT_EQ(sysconf(_SC_CLK_TCK), 100);
}

// 2 CPUs, 2 threads, 10 s: resolution 2 x 2 x 0.01 / 10 = 0.004 CPU, so
// the limit is 0.054 CPU, i.e. 0.54 CPU-seconds of others' work.
TEST(ContentionRule, OthersBeyondTheLimitOnBusyCpusAreContention) {
  EXPECT_NEAR(load_resolution(usage(10, 2, 2, 0)), 0.004, 1e-12);
  EXPECT_FALSE(contended(usage(10, 2, 2, 0.1)));  // 0.01 CPU: idle noise
  EXPECT_FALSE(contended(usage(10, 2, 2, 0.5)));  // 0.05 CPU
  EXPECT_TRUE(contended(usage(10, 2, 2, 0.6)));   // 0.06 CPU
  EXPECT_TRUE(contended(usage(10, 2, 2, 10)));    // one busy co-runner
}

// One thread on 2 CPUs leaves one spare: others may use up to 1.054 CPUs.
TEST(ContentionRule, SpareCpusMayBeUsedByOthers) {
  EXPECT_FALSE(contended(usage(10, 2, 1, 10)));  // 1.0 CPU
  EXPECT_TRUE(contended(usage(10, 2, 1, 11)));   // 1.1 CPU
}

// Short intervals are coarse: 0.5 s on 2 CPUs, resolution 0.08 CPU; 0.05
// CPU-s of others (0.1 CPU) is within 0.05 + 0.08 and not judged contended.
// Below min_wall_seconds (0.25 s) nothing is judged.
TEST(ContentionRule, ShortIntervalsAllowForTickResolution) {
  EXPECT_NEAR(load_resolution(usage(0.5, 2, 2, 0)), 0.08, 1e-12);
  EXPECT_FALSE(contended(usage(0.5, 2, 2, 0.05)));
  EXPECT_TRUE(contended(usage(0.5, 2, 2, 0.1)));   // 0.2 CPU
  EXPECT_FALSE(contended(usage(0.2, 2, 2, 0.2)));  // 1 CPU, but too short
}

// Summed intervals carry each one's tick error: 3 epochs of 10 s on 2 CPUs,
// 3 x 0.04 CPU-s over 30 s = 0.004 CPU.
TEST(ContentionRule, SummedIntervalsAddTheirTickErrors) {
  results::CpuUsage total;
  for (int i = 0; i < 3; ++i) total.add(usage(10, 2, 2, 0.1));
  EXPECT_EQ(total.intervals, 3);
  EXPECT_DOUBLE_EQ(total.wall_seconds, 30);
  EXPECT_NEAR(load_resolution(total), 0.004, 1e-12);
  EXPECT_NEAR(total.other_load(), 0.01, 1e-12);
}

// Steal: more than 5 % of the mask's CPU time.
TEST(ContentionRule, HypervisorStealBeyondFivePercent) {
  EXPECT_FALSE(contended(usage(10, 2, 2, 0, 0.9)));  // 4.5 %
  EXPECT_TRUE(contended(usage(10, 2, 2, 0, 1.2)));   // 6 %
}

TEST(ContentionRule, TheReasonNamesTheFigures) {
  results::Validity v;
  judge_contention(usage(10, 2, 2, 10), results::ContentionRule{}, v);
  ASSERT_EQ(v.reasons.size(), 1u);
  EXPECT_EQ(v.reasons[0].reason, "contended");
  EXPECT_NE(v.reasons[0].detail.find("1.000 CPUs busy"), std::string::npos)
      << v.reasons[0].detail;
  EXPECT_NE(v.reasons[0].detail.find("limit 0.054"), std::string::npos)
      << v.reasons[0].detail;
}

}  // namespace
}  // namespace nnbench::bench
