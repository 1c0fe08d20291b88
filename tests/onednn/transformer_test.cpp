// The oneDNN engine's transformer layers against the oracle (inference
// builds, a training step) and what is particular to its generation (the
// rest: tests/conformance/generation_test.cpp).
#include <gtest/gtest.h>

#include <cmath>

#include "backend/generator.h"
#include "backend/registry.h"
#include "data/synthetic.h"
#include "expected_isa.h"
#include "model/zoo/builder.h"
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
    // The projections and feed-forward linears on oneDNN's brgemm matmul
    // where it has one (avx512_core), else on its inner product
    // (matmul_rows); the attention's own matmuls read strided views, which
    // its brgemm does not take. The kernels by kind: "matmul brg:...".
    const std::string& kernels = got.effective.extras.at("kernels");
    const size_t at = kernels.find("matmul ");
    ASSERT_NE(at, std::string::npos) << name << ": " << kernels;
    const std::string matmuls = kernels.substr(at, kernels.find(", ", at) - at);
    EXPECT_EQ(matmuls.find("brg:") != std::string::npos,
              onednn_test::expected_isa().avx512_core)
        << name << ": " << kernels;
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

TEST(OnednnGeneration, AShorterPromptAndASecondGenerationAgree) {
  // A prompt shorter than the generator was sized for gets its own build;
  // a second generation starts the cache over.
  auto onednn = backend::make_backend("onednn");
  const model::Model m = model::zoo::get("gpt2-tiny");
  backend::Options o;
  auto sized = onednn->generator(m, o, {1, 8, 4});
  auto exact = onednn->generator(m, o, {1, 5, 4});
  const std::vector<int64_t> p = {3, 1, 4, 1, 5};
  std::vector<std::vector<int64_t>> first;  // round 0's tokens
  for (int round = 0; round < 2; ++round) {
    auto x = sized->prefill({p});
    auto y = exact->prefill({p});
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ(x, y) << "round " << round << ", token " << k;
      // A second generation starts over: the same tokens as the first.
      if (round == 0)
        first.push_back(x);
      else
        EXPECT_EQ(x, first.at(k)) << "token " << k;
      if (k < 3) {
        x = sized->decode(x);
        y = exact->decode(y);
      }
    }
  }
}

TEST(OnednnGeneration, RecordsTheIsaLevelOfItsMatrixVectorLoop) {
  // oneDNN's effective ISA picks it, so that ONEDNN_MAX_CPU_ISA=AVX2 runs
  // the AVX2 build on an AVX-512 machine.
  auto g = backend::make_backend("onednn")->generator(
      model::zoo::get("gpt2-tiny"), backend::Options{}, {1, 4, 4});
  EXPECT_EQ(g->effective().extras.at("gemv_level"),
            onednn_test::expected_isa().gemv_level);
}

TEST(OnednnGeneration, Bf16WhereTheCpuHasIt) {
  // /proc/cpuinfo and the cap say whether bf16 runs (expected_isa.h);
  // the logits against the oracle: tests/conformance/generation_test.cpp.
  backend::Options bf16;
  bf16.precision = "bf16";
  bf16.threads = 2;
  auto b = backend::make_backend("onednn");
  const model::Model m = model::zoo::get("gpt2-tiny");
  if (!onednn_test::expected_isa().bf16) {
    try {
      b->generator(m, bf16, {1, 4, 4});
      FAIL() << "bf16 generation without AVX512-BF16";
    } catch (const backend::Unimplemented& e) {
      EXPECT_NE(std::string(e.what()).find("AVX512-BF16"), std::string::npos)
          << e.what();
    }
  } else {
    auto g = b->generator(m, bf16, {1, 4, 4});
    const auto first = g->prefill({{1, 2, 3, 4}});
    ASSERT_EQ(first.size(), 1u);
    EXPECT_GE(first[0], 0);
    EXPECT_LT(first[0], m.input.vocab);
    EXPECT_EQ(g->last_logits().value().size(),
              static_cast<size_t>(m.input.vocab));
    const backend::Effective e = g->effective();
    EXPECT_EQ(e.precision, "bf16");
    EXPECT_EQ(e.extras.at("weights"), "bf16");
  }
}

TEST(OnednnGeneration, Int8LogitsWithinAFewPerCent) {
  // The token's build reads s8 weights (one scale per output row): each
  // weight within half a step of 1/127 of its row's largest, and with VNNI
  // each input too, so the logits move by about a per cent; more than 3 %
  // is a wrong scale, row or offset, less than 1e-4 is a step that did not
  // quantize (fp32's error is 4e-7). Natively and capped (AVX2: the
  // weight-only loop) alike.
  auto b = backend::make_backend("onednn");
  auto oracle = backend::make_backend("reference");
  const model::Model m = model::zoo::get("gpt2-tiny");
  backend::Options int8;
  int8.precision = "int8";
  int8.threads = 2;
  for (uint64_t seed : {1, 2}) {
    int8.seed = seed;
    const auto r = verify::check_generation(*oracle, *b, m, int8);
    ASSERT_EQ(r.checks.size(), 1u);
    EXPECT_LT(r.checks[0].error, 3e-2) << "seed " << seed;
    EXPECT_GT(r.checks[0].error, 1e-4) << "seed " << seed;
    EXPECT_EQ(r.checks[0].tolerance, 5e-2);  // int8 generation's
    ASSERT_TRUE(r.agreement.has_value());
    EXPECT_EQ(r.agreement->rows, 16);
  }
  auto g = b->generator(m, int8, {1, 4, 4});
  EXPECT_EQ(g->effective().precision, "int8");
  // VNNI's loop where oneDNN's ISA has VNNI and the loop runs AVX-512.
  const auto isa = onednn_test::expected_isa();
  const bool vnni = isa.vnni && isa.gemv_level == "x86-64-v4";
  const std::string weights = g->effective().extras.at("weights");
  EXPECT_EQ(weights.find("weight-only") == std::string::npos, vnni) << weights;
  EXPECT_EQ(weights.find("AVX512-VNNI") != std::string::npos, vnni) << weights;
}

// A one-block GPT-2 of width f (4 heads) and a vocabulary of 99. At 96
// each of the int8 loop's dot products but the MLP's second has a tail of
// 32 after the 64 it sums a vector at a time, and the head's 99 outputs
// leave 3 after the loop's blocks of four (its rows: a batch's tokens, or
// the prompt's last positions).
model::Model decoder_of_width(int f) {
  model::Model m;
  m.name = "gpt2-width-" + std::to_string(f);
  m.input = {{16}, model::DType::kInt64, 99};
  model::zoo::Builder b(m);
  const int tokens = b.embedding(-1, 99, f, "wte");
  int x = b.positions(tokens, 32, "wpe");
  x = b.add_(x, b.attention(b.layer_norm(x, 1e-5, "ln_1"), 4, true, "attn"));
  const int up = b.linear(b.layer_norm(x, 1e-5, "ln_2"), 4 * f, "c_fc");
  x = b.add_(x, b.linear(b.gelu(up, true), f, "c_proj"));
  b.tied_linear(b.layer_norm(x, 1e-5, "ln_f"), tokens, "lm_head");
  m.loss = model::Loss::kSoftmaxCrossEntropy;
  return m;
}

// int8 generation of decoder_of_width(width) against the oracle's fp32:
// within 3 %, and not exact (the weights were quantized).
void expect_int8_near_the_oracle(int width) {
  auto b = backend::make_backend("onednn");
  auto oracle = backend::make_backend("reference");
  backend::Options int8;
  int8.precision = "int8";
  int8.threads = 2;
  const auto r =
      verify::check_generation(*oracle, *b, decoder_of_width(width), int8);
  ASSERT_EQ(r.checks.size(), 1u);
  EXPECT_LT(r.checks[0].error, 3e-2);
  EXPECT_GT(r.checks[0].error, 1e-4);
}

TEST(OnednnGeneration, Int8RowsNotAMultipleOf64) {
  // The tails summed too: a loop that dropped them would lose a third of
  // each product, far more than 3 %. The s8 matrices sit one after another
  // in the build's arena (ParamStore::int8_pages), the head's 99 x 96
  // bytes not a multiple of its 64-byte alignment.
  expect_int8_near_the_oracle(96);
}

TEST(OnednnGeneration, Int8WiderMatricesInTheArenaToo) {
  // Width 512: s8 matrices of about 50 KiB to 1 MiB in the arena.
  expect_int8_near_the_oracle(512);
}

TEST(OnednnGeneration, TheLoopSumsEveryTailAtEveryPrecision) {
  // Width 92: the matrix-vector loop sums 64 inputs at a time at
  // x86-64-v4 (then 16, then one by one: 64 + 16 + 12) and 32 at
  // x86-64-v3 (then 8, then one: 64 + 24 + 4); a tail left out would lose
  // from 4/92 to 24/92 of each product, beyond each bound. Which loops run
  // depends on the ISA (expected_isa.h): with AVX-512 the v4 loop's fp32
  // and bf16 forms (int8 takes the VNNI loop where the CPU has VNNI, the
  // v4 s8 form under ONEDNN_MAX_CPU_ISA=AVX512_CORE); capped to AVX2 the
  // v3 loop's fp32 and s8 forms. Its bf16 form never runs (bf16 needs
  // AVX512-BF16, so the v4 level).
  auto b = backend::make_backend("onednn");
  auto oracle = backend::make_backend("reference");
  std::vector<std::pair<std::string, double>> bounds = {{"fp32", 1e-4},
                                                        {"int8", 3e-2}};
  if (onednn_test::expected_isa().bf16) bounds.push_back({"bf16", 3e-2});
  for (const auto& [precision, bound] : bounds) {
    backend::Options o;
    o.precision = precision;
    o.threads = 2;
    const auto r =
        verify::check_generation(*oracle, *b, decoder_of_width(92), o);
    // fp32 checks the greedy tokens too (equal), then the logits.
    ASSERT_EQ(r.checks.size(), precision == "fp32" ? 2u : 1u) << precision;
    EXPECT_TRUE(r.checks.front().pass)
        << precision << ": " << r.checks.front().what;
    ASSERT_EQ(r.checks.back().what.rfind("generation (logits", 0), 0u);
    EXPECT_LT(r.checks.back().error, bound) << precision;
  }
}

}  // namespace
}  // namespace nnbench
