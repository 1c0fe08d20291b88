// KV-cache generation on every engine that generates (in-process and
// framework workers), against the oracle, which recomputes the whole
// sequence for every token: greedy decoding gives the same tokens on all,
// and the same logits on every engine that gives them.
#include <gtest/gtest.h>

#include <algorithm>

#include "backend/generator.h"
#include "backend/registry.h"
#include "model/zoo/zoo.h"
#include "util/error.h"
#include "verify/greedy.h"

namespace nnbench {
namespace {

std::vector<std::string> generating() {
  std::vector<std::string> out;
  const auto names = backend::backend_names();
  // A framework engine whose environment is not set up has nothing to run
  // (the conformance suite gives it no cases either).
  for (const char* b : {"torch", "onednn", "pytorch", "tensorflow", "jax",
                        "mxnet", "onnxruntime", "openvino"})
    if (std::find(names.begin(), names.end(), b) != names.end() &&
        backend::make_backend(b)->describe().unavailable.empty())
      out.push_back(b);
  return out;
}

class Generation : public ::testing::TestWithParam<std::string> {};

// The Keras engines' compiled step yields the token only (the argmax on
// the device, as KerasHub's sampler): tokens, no logits, from them.
bool gives_logits(const std::string& engine) {
  return engine != "tensorflow" && engine != "jax";
}

TEST_P(Generation, GreedyTokensAndLogitsAreTheOraclesOnGpt2Tiny) {
  auto engine = backend::make_backend(GetParam());
  auto oracle = backend::make_backend("reference");
  const model::Model m = model::zoo::get("gpt2-tiny");
  for (uint64_t seed : {1, 2, 3}) {
    backend::Options o;
    o.seed = seed;
    o.threads = 2;
    const auto checks = verify::check_generation(*oracle, *engine, m, o);
    ASSERT_EQ(checks.size(), gives_logits(GetParam()) ? 2u : 1u);
    for (const auto& c : checks)
      EXPECT_TRUE(c.pass) << "seed " << seed << ": " << c.what << ": error "
                          << c.error << " > " << c.tolerance;
  }
}

TEST_P(Generation, RowsOfABatchAreDecodedApart) {
  // The same prompt alone and as the second row beside another gives the
  // same tokens: rows share no cache entries.
  auto engine = backend::make_backend(GetParam());
  const model::Model m = model::zoo::get("gpt2-tiny");
  backend::Options o;
  o.threads = 2;
  const std::vector<int64_t> a = {5, 9, 1, 300, 44}, b = {17, 2, 2, 8, 511};
  auto alone = engine->generator(m, o, {1, 5, 6});
  auto pair = engine->generator(m, o, {2, 5, 6});
  std::vector<int64_t> x = alone->prefill({b});
  std::vector<int64_t> y = pair->prefill({a, b});
  for (int k = 0; k < 5; ++k) {
    ASSERT_EQ(y.size(), 2u);
    EXPECT_EQ(x.at(0), y[1]) << "token " << k;
    x = alone->decode(x);
    y = pair->decode(y);
  }
}

TEST_P(Generation, RefusesWhatItCannotRun) {
  auto engine = backend::make_backend(GetParam());
  backend::Options o;
  // An encoder: its attention is not causal.
  EXPECT_THROW(engine->generator(model::zoo::get("bert-tiny"), o, {1, 4, 4}),
               backend::Unimplemented);
  // More tokens than gpt2-tiny's 64 learned positions.
  EXPECT_THROW(engine->generator(model::zoo::get("gpt2-tiny"), o, {1, 60, 8}),
               Error);
  auto g = engine->generator(model::zoo::get("gpt2-tiny"), o, {1, 4, 2});
  EXPECT_THROW(g->prefill({{1, 2, 3, 4, 5}}), Error);  // longer than sized
  EXPECT_THROW(g->prefill({{1, 2}, {3, 4}}), Error);   // two rows, sized 1
  // Past the cache it was sized for.
  auto next = g->decode(g->prefill({{1, 2, 3, 4}}));  // 5 of 6 positions
  EXPECT_THROW(g->decode({1, 2}), Error);             // two tokens, one row
  next = g->decode(next);                             // 6 of 6
  EXPECT_THROW(g->decode(next), Error);
}

// The oracle with its logits scaled by 1 + 1e-3 after every step: the same
// argmax, so the same tokens, and logits 1e-3 off (relative), ten times
// fp32's output tolerance: what a cache slightly wrong gives (a mutant
// whose cached keys were scaled by 1.01 gave every token right).
class Skewed : public backend::Generator {
 public:
  explicit Skewed(std::unique_ptr<backend::Generator> g) : g_(std::move(g)) {}
  std::vector<int64_t> prefill(
      const std::vector<std::vector<int64_t>>& p) override {
    return g_->prefill(p);
  }
  std::vector<int64_t> decode(const std::vector<int64_t>& t) override {
    return g_->decode(t);
  }
  std::optional<std::vector<float>> last_logits() override {
    auto l = g_->last_logits();
    for (float& x : l.value()) x *= 1.001f;
    return l;
  }
  backend::Effective effective() const override { return g_->effective(); }

 private:
  std::unique_ptr<backend::Generator> g_;
};

class SkewedBackend : public backend::Backend {
 public:
  std::string name() const override { return "skewed"; }
  std::string version() const override { return "test"; }
  backend::Description describe() const override { return r_->describe(); }
  backend::Support supports(const model::Layer& l,
                            const backend::Options& o) const override {
    return r_->supports(l, o);
  }
  std::unique_ptr<backend::Executable> compile(
      const model::Model& m, const backend::Options& o,
      const backend::Shapes& s) override {
    return r_->compile(m, o, s);
  }
  std::unique_ptr<backend::Generator> generator(
      const model::Model& m, const backend::Options& o,
      const backend::GenerationShape& s) override {
    return std::make_unique<Skewed>(r_->generator(m, o, s));
  }

 private:
  std::unique_ptr<backend::Backend> r_ = backend::make_backend("reference");
};

TEST(GenerationCheck, LogitsOffByATenthOfAPerCentFailWhereTokensPass) {
  SkewedBackend skewed;
  auto oracle = backend::make_backend("reference");
  backend::Options o;
  o.threads = 2;
  const auto checks = verify::check_generation(*oracle, skewed,
                                               model::zoo::get("gpt2-tiny"), o);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_TRUE(checks[0].pass) << checks[0].what;
  EXPECT_EQ(checks[0].error, 0);
  EXPECT_FALSE(checks[1].pass) << checks[1].what;
  // ||1.001 z - z|| / ||z|| = 1e-3, up to float rounding.
  EXPECT_NEAR(checks[1].error, 1e-3, 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Engines, Generation, ::testing::ValuesIn(generating()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nnbench
