// The ring all-reduce cost model on hand-computed cases.
#include "scaling/ring_model.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace nnbench::scaling {
namespace {

const Link kLink{1e-5, 1e-9};  // 10 us a step, 1 GB/s

TEST(RingModel, FitRecoversTheLinkFromTwoRankTimes) {
  // T = 2 alpha + n beta = 2e-5 + n * 1e-9.
  const Link l = fit_two_rank({{1e3, 2.1e-5}, {1e6, 1.02e-3}, {1e7, 1.002e-2}});
  EXPECT_NEAR(l.alpha, 1e-5, 1e-12);
  EXPECT_NEAR(l.beta, 1e-9, 1e-15);
  EXPECT_THROW(fit_two_rank({{1e3, 1e-5}, {1e3, 2e-5}}), Error);
}

TEST(RingModel, AllreduceCost) {
  // 2 (4 - 1) 1e-5 + 2 (3 / 4) 1e8 1e-9 = 6e-5 + 0.15.
  EXPECT_NEAR(allreduce_seconds(kLink, 4, 1e8), 0.15006, 1e-12);
  EXPECT_NEAR(allreduce_seconds(kLink, 2, 1e8), 2e-5 + 0.1, 1e-12);
  EXPECT_EQ(allreduce_seconds(kLink, 1, 1e8), 0);
}

TEST(RingModel, StrongAndWeakScaling) {
  Workload w{0.8, 1e8, 256, false};
  // Strong, 4 ranks: 0.8 / 4 + 0.15006 = 0.35006 s a step.
  auto p = predict(w, kLink, Scaling::kStrong, 4);
  EXPECT_NEAR(p.step_seconds, 0.35006, 1e-12);
  EXPECT_NEAR(p.samples_per_second, 256 / 0.35006, 1e-9);
  EXPECT_NEAR(p.speedup, 0.8 / 0.35006, 1e-12);
  EXPECT_NEAR(p.efficiency, 0.8 / 0.35006 / 4, 1e-12);
  // Weak, 4 ranks of 256: 0.8 + 0.15006 s for 1024 samples.
  p = predict(w, kLink, Scaling::kWeak, 4);
  EXPECT_NEAR(p.samples_per_second, 1024 / 0.95006, 1e-9);
  EXPECT_NEAR(p.efficiency, 0.8 / 0.95006, 1e-12);
  // Overlapped, strong: the step is the larger of 0.2 and 0.15006.
  w.overlap = true;
  p = predict(w, kLink, Scaling::kStrong, 4);
  EXPECT_NEAR(p.step_seconds, 0.2, 1e-12);
  EXPECT_NEAR(p.efficiency, 1.0, 1e-12);
  // One rank is the reference itself.
  EXPECT_DOUBLE_EQ(predict(w, kLink, Scaling::kWeak, 1).speedup, 1.0);
  EXPECT_THROW(predict(w, kLink, Scaling::kWeak, 0), Error);
}

TEST(RingModel, ErrorPercent) {
  EXPECT_DOUBLE_EQ(error_percent(110, 100), 10);
  EXPECT_DOUBLE_EQ(error_percent(90, 100), -10);
}

}  // namespace
}  // namespace nnbench::scaling
