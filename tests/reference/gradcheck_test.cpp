// Layer-by-layer gradient checks: every op the description supports, in
// double precision against central differences.
#include "gradcheck.h"

#include <gtest/gtest.h>

#include <set>

#include "engines/reference/ops/activation.h"
#include "probe_models.h"

namespace nnbench::engines::reference::testing {

void PrintTo(const Probe& p, std::ostream* os) { *os << p.name; }

namespace {

class GradientCheck : public ::testing::TestWithParam<Probe> {};

TEST_P(GradientCheck, MatchesCentralDifferences) {
  check_gradients(GetParam().model, GetParam().batch);
}

INSTANTIATE_TEST_SUITE_P(Ops, GradientCheck, ::testing::ValuesIn(probes()),
                         [](const ::testing::TestParamInfo<Probe>& info) {
                           return info.param.name;
                         });
INSTANTIATE_TEST_SUITE_P(Transformer, GradientCheck,
                         ::testing::ValuesIn(transformer_probes()),
                         [](const ::testing::TestParamInfo<Probe>& info) {
                           return info.param.name;
                         });

TEST(GradientCheck, ProbesCoverEveryOpButDropout) {
  std::set<model::Op> seen;
  for (const auto& p : probes())
    for (const auto& l : p.model.layers) seen.insert(l.op);
  for (const auto& p : transformer_probes())
    for (const auto& l : p.model.layers) seen.insert(l.op);
  for (model::Op op : model::all_ops()) {
    if (op == model::Op::kDropout) continue;
    EXPECT_TRUE(seen.count(op)) << model::op_name(op);
  }
}

// Dropout's mask is random, so it is checked directly: inverted scaling in
// training, the identity in evaluation, and a backward through the mask.
TEST(Dropout, ScalesKeptValuesAndMasksTheGradient) {
  Tensor<double> x({4, 2500}, 1.0), y, dx({4, 2500});
  std::mt19937_64 rng(3);
  std::vector<double> mask;
  ops::dropout_forward(x, 0.25, /*train=*/true, rng, mask, y);
  int kept = 0;
  for (int64_t i = 0; i < y.numel(); ++i) {
    ASSERT_TRUE(y[i] == 0.0 || std::abs(y[i] - 1 / 0.75) < 1e-12) << y[i];
    kept += y[i] != 0.0;
  }
  EXPECT_NEAR(kept / 10000.0, 0.75, 0.02);
  ops::dropout_backward(mask, x, dx);
  EXPECT_EQ(dx.data, y.data);  // dy = 1 everywhere, so dx is the mask
  ops::dropout_forward(x, 0.25, /*train=*/false, rng, mask, y);
  EXPECT_EQ(y.data, x.data);
}

}  // namespace
}  // namespace nnbench::engines::reference::testing
