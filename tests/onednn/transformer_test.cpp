// The oneDNN engine's transformer layers against the oracle (inference
// builds, a training step), and its KV-cache generation against the oracle's,
// which recomputes the whole sequence for every token.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/generator.h"
#include "backend/registry.h"
#include "data/synthetic.h"
#include "expected_isa.h"
#include "model/zoo/zoo.h"
#include "util/error.h"
#include "verify/greedy.h"
#include "verify/verify.h"

namespace nnbench {
namespace {

struct Ran {
  host::Tensor output;
  backend::Effective effective;
};

Ran infer(const std::string& backend, const model::Model& m,
          const std::string& precision, const host::Batch& batch) {
  backend::Options o;
  o.threads = 2;
  o.precision = precision;
  auto exe = backend::make_backend(backend)->compile(
      m, o, backend::Shapes::infer(batch.input.shape.at(0)));
  exe->load_batches({batch});
  exe->infer(0);
  exe->synchronize();
  return {exe->output(), exe->effective()};
}

// ||a - b|| / ||b|| over every element.
double relative_error(const host::Tensor& a, const host::Tensor& b) {
  EXPECT_EQ(a.shape, b.shape);
  double diff = 0, norm = 0;
  for (size_t i = 0; i < b.f.size(); ++i) {
    diff += (a.f[i] - b.f[i]) * (a.f[i] - b.f[i]);
    norm += b.f[i] * b.f[i];
  }
  return std::sqrt(diff / norm);
}

TEST(OnednnTransformer, InferenceMatchesTheOracle) {
  for (const char* name : {"gpt2-tiny", "bert-tiny"}) {
    const model::Model m = model::zoo::get(name);
    const host::Batch batch = data::synthetic_batch(m, 3, 7);
    const Ran got = infer("onednn", m, "fp32", batch);
    const Ran want = infer("reference", m, "fp32", batch);
    EXPECT_LT(relative_error(got.output, want.output), 1e-5) << name;
    // Attention's matmuls read q, k and v through strided views: a
    // reference kernel there would be correct and slow.
    EXPECT_EQ(got.effective.extras.at("reference_kernels"), "none")
        << name << ": " << got.effective.extras.at("kernels");
  }
}

TEST(OnednnTransformer, Bf16InferenceStaysNearTheOracle) {
  if (!onednn_test::expected_isa().bf16)
    GTEST_SKIP() << "no AVX512-BF16 here (or capped): the engine offers no "
                    "bf16";
  const model::Model m = model::zoo::get("bert-tiny");
  const host::Batch batch = data::synthetic_batch(m, 3, 7);
  const double e = relative_error(infer("onednn", m, "bf16", batch).output,
                                  infer("reference", m, "fp32", batch).output);
  // bf16 keeps 8 bits of mantissa (2^-8 = 0.004 per rounding).
  EXPECT_LT(e, 5e-2);
}

TEST(OnednnTransformer, TrainingStepMatchesTheOracle) {
  // Outputs, loss, every parameter's gradient (the tied table's summed
  // over both its uses) and the updated parameters, against the oracle's.
  for (const char* name : {"gpt2-tiny", "bert-tiny"}) {
    verify::VerifyOptions o;
    o.threads = 2;
    auto oracle = backend::make_backend("reference");
    auto onednn = backend::make_backend("onednn");
    const auto v = verify::verify(*oracle, *onednn, model::zoo::get(name), o);
    EXPECT_EQ(v.verdict, verify::Verdict::kPass) << name << ": " << v.message;
    EXPECT_GT(v.checks.size(), 3u) << name;
  }
}

TEST(OnednnGeneration, GreedyTokensAreTheOraclesOnGpt2Tiny) {
  auto onednn = backend::make_backend("onednn");
  auto oracle = backend::make_backend("reference");
  const model::Model m = model::zoo::get("gpt2-tiny");
  for (uint64_t seed : {1, 2, 3}) {
    backend::Options o;
    o.seed = seed;
    o.threads = 2;
    const auto c = verify::check_greedy_tokens(*oracle, *onednn, m, o);
    ASSERT_TRUE(c.has_value());
    EXPECT_TRUE(c->pass) << "seed " << seed << ": " << c->error
                         << " of the tokens differ";
  }
}

TEST(OnednnGeneration, RowsOfABatchAreDecodedApart) {
  auto onednn = backend::make_backend("onednn");
  const model::Model m = model::zoo::get("gpt2-tiny");
  backend::Options o;
  o.threads = 2;
  const std::vector<int64_t> a = {5, 9, 1, 300, 44}, b = {17, 2, 2, 8, 511};
  auto alone = onednn->generator(m, o, {1, 5, 6});
  auto pair = onednn->generator(m, o, {2, 5, 6});
  std::vector<int64_t> x = alone->prefill({b});
  std::vector<int64_t> y = pair->prefill({a, b});
  for (int k = 0; k < 5; ++k) {
    ASSERT_EQ(y.size(), 2u);
    EXPECT_EQ(x.at(0), y[1]) << "token " << k;
    x = alone->decode(x);
    y = pair->decode(y);
  }
}

TEST(OnednnGeneration, AShorterPromptAndASecondGenerationAgree) {
  // A prompt shorter than the generator was sized for gets its own build;
  // a second generation starts the cache over.
  auto onednn = backend::make_backend("onednn");
  const model::Model m = model::zoo::get("gpt2-tiny");
  backend::Options o;
  auto sized = onednn->generator(m, o, {1, 8, 4});
  auto exact = onednn->generator(m, o, {1, 5, 4});
  const std::vector<int64_t> p = {3, 1, 4, 1, 5};
  for (int round = 0; round < 2; ++round) {
    auto x = sized->prefill({p});
    auto y = exact->prefill({p});
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ(x, y) << "round " << round << ", token " << k;
      if (k < 3) {
        x = sized->decode(x);
        y = exact->decode(y);
      }
    }
  }
}

TEST(OnednnGeneration, RefusesWhatItCannotRun) {
  auto onednn = backend::make_backend("onednn");
  backend::Options o;
  EXPECT_THROW(onednn->generator(model::zoo::get("bert-tiny"), o, {1, 4, 4}),
               backend::Unimplemented);
  EXPECT_THROW(onednn->generator(model::zoo::get("gpt2-tiny"), o, {1, 60, 8}),
               Error);
  backend::Options bf16 = o;
  bf16.precision = "bf16";
  EXPECT_THROW(onednn->generator(model::zoo::get("gpt2-tiny"), bf16, {1, 4, 4}),
               backend::Unimplemented);
  auto g = onednn->generator(model::zoo::get("gpt2-tiny"), o, {1, 4, 2});
  EXPECT_THROW(g->decode({1}), Error);                // before a prefill
  auto next = g->decode(g->prefill({{1, 2, 3, 4}}));  // 5 of 6 positions
  next = g->decode(next);                             // 6 of 6
  EXPECT_THROW(g->decode(next), Error);
}

}  // namespace
}  // namespace nnbench
