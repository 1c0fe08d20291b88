// The comparison arithmetic of verification, on hand-made tensors.
#include "verify/verify.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/zoo/zoo.h"
#include "util/error.h"

namespace nnbench::verify {
namespace {

host::Tensor t(std::vector<float> v) {
  host::Tensor x;
  x.shape = {static_cast<int64_t>(v.size())};
  x.f = std::move(v);
  return x;
}

TEST(Verify, AgreementIsArgmaxAndKlOfTheSoftmaxes) {
  // Two rows of two classes. Row 0: fp32 logits (0, ln 3) give p = (1/4,
  // 3/4); the low precision's (ln 3, 0) give q = (3/4, 1/4): argmax differs,
  // KL = 1/4 ln(1/3) + 3/4 ln 3 = ln 3 / 2. Row 1: equal logits, KL 0.
  host::Tensor fp32, low;
  fp32.shape = low.shape = {2, 2};
  const float l3 = static_cast<float>(std::log(3.0));
  fp32.f = {0, l3, 1, 2};
  low.f = {l3, 0, 1, 2};
  const auto a = agreement_of(low, fp32);
  EXPECT_EQ(a.rows, 2);
  EXPECT_DOUBLE_EQ(a.top1, 0.5);
  EXPECT_NEAR(a.kl, std::log(3.0) / 2 / 2, 1e-7);  // mean over 2 rows
  host::Tensor other;
  other.shape = {2, 3};
  other.f.assign(6, 0.f);
  EXPECT_THROW(agreement_of(other, fp32), Error);
}

TEST(Verify, ErrorIsNormwiseRelative) {
  // ||(0, 0.1)|| / ||(3, 4)|| = 0.1 / 5.
  EXPECT_NEAR(max_relative_error(t({3.0f, 4.1f}), t({3.0f, 4.0f})),
              double(4.1f - 4.0f) / 5.0, 1e-12);
  // Tiny elements do not blow it up the way an elementwise ratio would.
  EXPECT_LT(max_relative_error(t({1e-9f, 2.0f}), t({2e-9f, 2.0f})), 1e-8);
  EXPECT_EQ(max_relative_error(t({1, 2}), t({1, 2})), 0.0);
}

TEST(Verify, NanAndSizeMismatchAreInfinite) {
  EXPECT_TRUE(std::isinf(max_relative_error(t({NAN}), t({1}))));
  EXPECT_TRUE(std::isinf(max_relative_error(t({1}), t({1, 2}))));
}

TEST(Verify, Bf16IsLooserThanFp32) {
  const auto f = tolerances_for("fp32"), b = tolerances_for("bf16");
  EXPECT_LT(f.output, b.output);
  EXPECT_LT(f.gradient, b.gradient);
  EXPECT_LE(f.output, 1e-4);
}

// A parameter that starts at zero is its update after one step: it gets
// the gradient's tolerance on top of the parameter's; one that barely
// moved keeps the parameter's. A wrong update still fails either way.
TEST(Verify, ParameterToleranceAddsTheGradientsForTheUpdatesShare) {
  const Tolerances f = tolerances_for("fp32");
  // From zero to (0.3, 0.4): the update is the whole tensor.
  EXPECT_NEAR(parameter_tolerance(f, t({0.3f, 0.4f}), t({0, 0}), 1e-6),
              f.parameter + f.gradient, 1e-9);
  // (3, 4) moved by (0, 0.001): share 0.001 / 5 (to float rounding).
  const double share = double(4.001f - 4.0f) / std::hypot(3.0, 4.001f);
  EXPECT_NEAR(parameter_tolerance(f, t({3.0f, 4.001f}), t({3.0f, 4.0f}), 1e-6),
              f.parameter + f.gradient * share, 1e-9);
  // The floor keeps a tensor that is zero in exact arithmetic from
  // dividing by its rounding noise.
  EXPECT_NEAR(parameter_tolerance(f, t({1e-9f, 0}), t({0, 0}), 1e-3),
              f.parameter + f.gradient * 1e-6, 1e-9);
  // A bias updated twice as far as the oracle's: 100 % off, fails.
  EXPECT_GT(max_relative_error(t({0.6f, 0.8f}), t({0.3f, 0.4f})),
            parameter_tolerance(f, t({0.3f, 0.4f}), t({0, 0}), 1e-6));
}

TEST(Verify, WithoutDropoutZeroesEveryDropoutOnly) {
  const model::Model m = model::zoo::get("mnist-cnn");
  const model::Model plain = without_dropout(m);
  int dropouts = 0;
  for (size_t i = 0; i < m.layers.size(); ++i) {
    if (m.layers[i].op == model::Op::kDropout) {
      ++dropouts;
      EXPECT_GT(m.layers[i].p, 0);
      EXPECT_EQ(plain.layers[i].p, 0);
    } else {
      EXPECT_EQ(plain.layers[i].p, m.layers[i].p);
    }
  }
  EXPECT_EQ(dropouts, 2);
}

}  // namespace
}  // namespace nnbench::verify
