// KV-cache generation on every engine that generates (in-process and
// framework workers), against the oracle, which recomputes the whole
// sequence for every token: greedy decoding gives the same tokens on all,
// and the same logits on every engine that gives them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

#include "backend/generator.h"
#include "backend/registry.h"
#include "model/zoo/zoo.h"
#include "util/error.h"
#include "verify/greedy.h"
#include "verify/verify.h"

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

TEST_P(Generation, GreedyTokensAndLogitsAreTheOraclesOnGpt2Tiny) {
  auto engine = backend::make_backend(GetParam());
  auto oracle = backend::make_backend("reference");
  const model::Model m = model::zoo::get("gpt2-tiny");
  for (uint64_t seed : {1, 2, 3}) {
    backend::Options o;
    o.seed = seed;
    o.threads = 2;
    const auto checks = verify::check_generation(*oracle, *engine, m, o).checks;
    // Tokens and logits: every engine gives its logits (the Keras ones
    // leave them on the device until asked).
    ASSERT_EQ(checks.size(), 2u);
    for (const auto& c : checks)
      EXPECT_TRUE(c.pass) << "seed " << seed << ": " << c.what << ": error "
                          << c.error << " > " << c.tolerance;
  }
}

// Where oneDNN's effective ISA has bf16 (nnbench's own engine lists it
// then).
bool onednn_has_bf16() {
  const auto names = backend::backend_names();
  if (std::find(names.begin(), names.end(), "onednn") == names.end())
    return false;
  const auto p = backend::make_backend("onednn")->describe().precisions;
  return std::find(p.begin(), p.end(), "bf16") != p.end();
}

// Whether oneDNN's ISA is capped (ONEDNN_MAX_CPU_ISA below ALL): the
// OpenVINO CPU plugin's kernels follow the cap, its list of what the CPU
// offers does not, so that capped it may refuse what it lists.
bool capped() {
  const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA");
  if (cap == nullptr) cap = std::getenv("DNNL_MAX_CPU_ISA");
  return cap && *cap && std::string(cap) != "ALL";
}

// The CPU's own bf16 instructions, read here from /proc/cpuinfo.
bool cpu_has_bf16() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("flags", 0) == 0)
      return line.find(" avx512_bf16") != std::string::npos ||
             line.find(" amx_bf16") != std::string::npos;
  return false;
}

// The CPU's AVX-512 (avx512f and avx512bw), read from /proc/cpuinfo.
bool cpu_has_avx512() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("flags", 0) == 0)
      return line.find(" avx512f") != std::string::npos &&
             line.find(" avx512bw") != std::string::npos;
  return false;
}

// Who must generate at bf16: nnbench's own engine, LibTorch and the
// PyTorch worker where oneDNN has bf16 (PyTorch's bf16 products are
// oneDNN's), OpenVINO where the CPU has bf16 and oneDNN is not capped,
// JAX everywhere (XLA's CPU backend computes bf16 on any x86),
// TensorFlow where the CPU has AVX-512 and oneDNN is not capped (its bf16
// kernels are oneDNN's; capped to AVX2 one crashed, so it refuses below
// AVX-512), MXNet (AMP: its FullyConnected layers bf16 on oneDNN) where
// the CPU has AVX-512 and oneDNN is not capped. LibTorch and PyTorch may
// also without oneDNN's bf16 (a path of their own), OpenVINO and
// TensorFlow under a cap, MXNet under a cap or below AVX-512; then they
// are checked like the others. ONNX Runtime (no bf16 MatMul on its CPU
// provider) refuses.
enum class Expect { kMust, kMay, kNever };
Expect bf16_generation(const std::string& engine) {
  if (engine == "onednn")
    return onednn_has_bf16() ? Expect::kMust : Expect::kNever;
  if (engine == "torch" || engine == "pytorch")
    return onednn_has_bf16() ? Expect::kMust : Expect::kMay;
  if (engine == "openvino")
    return !cpu_has_bf16() ? Expect::kNever
           : capped()      ? Expect::kMay
                           : Expect::kMust;
  if (engine == "jax") return Expect::kMust;
  if (engine == "tensorflow")
    return !cpu_has_avx512() ? Expect::kNever
           : capped()        ? Expect::kMay
                             : Expect::kMust;
  if (engine == "mxnet")
    return cpu_has_avx512() && !capped() ? Expect::kMust : Expect::kMay;
  return Expect::kNever;
}

// int8: nnbench's own engine (s8 weights), ONNX Runtime and PyTorch
// (their dynamic quantization), TensorFlow and JAX (Keras's
// model.quantize) and OpenVINO (NNCF's weight compression) on every CPU
// of the pool, all of which have AVX2 (PyTorch's, TensorFlow's and JAX's
// int8 checked under an AVX2 cap; OpenVINO may refuse under a cap:
// above); LibTorch and MXNet refuse.
Expect int8_generation(const std::string& engine) {
  if (engine == "onednn" || engine == "onnxruntime" || engine == "pytorch" ||
      engine == "tensorflow" || engine == "jax")
    return Expect::kMust;
  if (engine == "openvino") return capped() ? Expect::kMay : Expect::kMust;
  return Expect::kNever;
}

// Generation at `precision` below fp32: an engine that must generates and
// its logits are judged with that precision's 5e-2 and are more than 1e-4
// off (its rounding moves them: an engine that ran fp32 would be as close
// as fp32, 3e-7 in the test above), the tokens stated; one that may
// generates so or says unimplemented; the others say unimplemented.
void check_below_fp32(const std::string& name, const std::string& precision,
                      Expect expected) {
  auto engine = backend::make_backend(name);
  auto oracle = backend::make_backend("reference");
  const model::Model m = model::zoo::get("gpt2-tiny");
  backend::Options o;
  o.threads = 2;
  o.precision = precision;
  if (expected != Expect::kMust) {
    try {
      engine->generator(m, o, {1, 4, 4});
      if (expected == Expect::kNever) FAIL() << "generated at " << precision;
    } catch (const backend::Unimplemented&) {
      return;
    }
  }
  for (uint64_t seed : {1, 2}) {
    o.seed = seed;
    const auto r = verify::check_generation(*oracle, *engine, m, o);
    ASSERT_EQ(r.checks.size(), 1u);
    EXPECT_TRUE(r.checks[0].pass)
        << "seed " << seed << ": error " << r.checks[0].error;
    EXPECT_EQ(r.checks[0].tolerance, 5e-2);
    EXPECT_GT(r.checks[0].error, 1e-4);
    ASSERT_TRUE(r.agreement.has_value());
    EXPECT_EQ(r.agreement->rows, 16);
    EXPECT_GT(r.agreement->kl, 0);
  }
}

TEST_P(Generation, Bf16LogitsWithinItsToleranceOrUnimplemented) {
  check_below_fp32(GetParam(), "bf16", bf16_generation(GetParam()));
}

TEST_P(Generation, Int8LogitsWithinItsToleranceOrUnimplemented) {
  check_below_fp32(GetParam(), "int8", int8_generation(GetParam()));
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
  Skewed(std::unique_ptr<backend::Generator> g, float scale, bool flip)
      : g_(std::move(g)), scale_(scale), flip_(flip) {}
  std::vector<int64_t> prefill(
      const std::vector<std::vector<int64_t>>& p) override {
    return flipped(g_->prefill(p));
  }
  std::vector<int64_t> decode(const std::vector<int64_t>& t) override {
    return flipped(g_->decode(t));
  }
  std::optional<std::vector<float>> last_logits() override {
    auto l = g_->last_logits();
    for (float& x : l.value()) x *= scale_;
    return l;
  }
  backend::Effective effective() const override { return g_->effective(); }

 private:
  // Row 0's token another one when flipping (its logits unchanged).
  std::vector<int64_t> flipped(std::vector<int64_t> t) const {
    if (flip_) t.at(0) = t.at(0) == 0 ? 1 : 0;
    return t;
  }
  std::unique_ptr<backend::Generator> g_;
  float scale_;
  bool flip_;
};

// The oracle at fp32 whatever the precision asked, its logits scaled by
// `scale`, and with `flip`, row 0's token never the oracle's.
class SkewedBackend : public backend::Backend {
 public:
  explicit SkewedBackend(float scale = 1.001f, bool flip = false)
      : scale_(scale), flip_(flip) {}
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
    backend::Options fp32 = o;
    fp32.precision = "fp32";
    return std::make_unique<Skewed>(r_->generator(m, fp32, s), scale_, flip_);
  }

 private:
  std::unique_ptr<backend::Backend> r_ = backend::make_backend("reference");
  float scale_;
  bool flip_;
};

TEST(GenerationCheck, LogitsOffByATenthOfAPerCentFailWhereTokensPass) {
  SkewedBackend skewed;
  auto oracle = backend::make_backend("reference");
  backend::Options o;
  o.threads = 2;
  const auto checks =
      verify::check_generation(*oracle, skewed, model::zoo::get("gpt2-tiny"), o)
          .checks;
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_TRUE(checks[0].pass) << checks[0].what;
  EXPECT_EQ(checks[0].error, 0);
  EXPECT_FALSE(checks[1].pass) << checks[1].what;
  // ||1.001 z - z|| / ||z|| = 1e-3, up to float rounding.
  EXPECT_NEAR(checks[1].error, 1e-3, 1e-6);
}

TEST(GenerationCheck, BelowFp32TokensAreStatedAndLogitsJudgedAtItsTolerance) {
  auto oracle = backend::make_backend("reference");
  const model::Model m = model::zoo::get("gpt2-tiny");
  backend::Options o;
  o.threads = 2;
  o.precision = "bf16";
  // Logits 1 % off: within bf16's output tolerance (5e-2), every token the
  // oracle's but row 0's (of 2 rows, 8 steps): half the steps' rows agree.
  SkewedBackend near(1.01f, true);
  const auto a = verify::check_generation(*oracle, near, m, o);
  ASSERT_EQ(a.checks.size(), 1u);
  EXPECT_TRUE(a.checks[0].pass) << a.checks[0].what;
  EXPECT_NEAR(a.checks[0].error, 1e-2, 1e-5);
  EXPECT_EQ(a.checks[0].tolerance, 5e-2);
  ASSERT_TRUE(a.agreement.has_value());
  EXPECT_EQ(a.agreement->rows, 16);
  EXPECT_EQ(a.agreement->top1, 0.5);
  // softmax(1.01 z) against softmax(z): a small, positive divergence.
  EXPECT_GT(a.agreement->kl, 0);
  EXPECT_LT(a.agreement->kl, 1e-2);
  // Logits 10 % off fail it; the tokens, all the oracle's, agree.
  SkewedBackend far(1.1f, false);
  const auto b = verify::check_generation(*oracle, far, m, o);
  ASSERT_EQ(b.checks.size(), 1u);
  EXPECT_FALSE(b.checks[0].pass);
  EXPECT_NEAR(b.checks[0].error, 0.1, 1e-4);
  EXPECT_EQ(b.agreement->top1, 1.0);
  // Not a model's agreement at fp32: the tokens are judged there.
  o.precision = "fp32";
  const auto c = verify::check_generation(*oracle, far, m, o);
  EXPECT_FALSE(c.agreement.has_value());
  ASSERT_EQ(c.checks.size(), 2u);
  EXPECT_TRUE(c.checks[0].pass);
}

// Steps unimplemented at every precision, generation as SkewedBackend's.
class GeneratesOnly : public SkewedBackend {
 public:
  using SkewedBackend::SkewedBackend;
  std::unique_ptr<backend::Executable> compile(
      const model::Model&, const backend::Options&,
      const backend::Shapes&) override {
    throw backend::Unimplemented("steps of a test backend");
  }
};

TEST(GenerationCheck, GenerationAloneNeverMakesAPass) {
  // `run --verify` times only a PASS: an engine whose steps are
  // unimplemented stays unimplemented when its generation passes, and
  // fails when it fails.
  auto oracle = backend::make_backend("reference");
  verify::VerifyOptions vo;
  vo.precision = "bf16";
  vo.threads = 2;
  GeneratesOnly near(1.01f, false), far(1.1f, false);
  const auto m = model::zoo::get("gpt2-tiny");
  const auto a = verify::verify(*oracle, near, m, vo);
  EXPECT_EQ(a.verdict, results::Verdict::kUnimplemented) << a.message;
  ASSERT_EQ(a.checks.size(), 1u);
  EXPECT_TRUE(a.checks[0].pass);
  EXPECT_NE(a.message.find("steps of a test backend"), std::string::npos);
  EXPECT_TRUE(a.generation_agreement.has_value());
  const auto b = verify::verify(*oracle, far, m, vo);
  EXPECT_EQ(b.verdict, results::Verdict::kFail) << b.message;
}

INSTANTIATE_TEST_SUITE_P(Engines, Generation, ::testing::ValuesIn(generating()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nnbench
