// The oneDNN backend's inference-only builds: int8 quantization, exact where
// the values sit on the quantization grid, and batch norms folded into the
// layer before them.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backend/registry.h"
#include "compare.h"
#include "data/synthetic.h"
#include "engines/onednn/graph.h"
#include "expected_isa.h"
#include "host/tensor_file.h"
#include "model/params.h"
#include "model/zoo/builder.h"
#include "model/zoo/zoo.h"
#include "util/error.h"
#include "util/temp_dir.h"

namespace nnbench {
namespace {

using Tensors = std::map<std::string, host::Tensor>;

host::Tensor tensor(model::Shape shape, std::vector<float> values) {
  host::Tensor t;
  t.shape = std::move(shape);
  t.f = std::move(values);
  return t;
}

// Every parameter of m at its seeded value, with `over` replacing some.
Tensors weights(const model::Model& m, const Tensors& over) {
  Tensors out;
  for (auto& p : model::init_params(m, 1))
    out[p.spec.name] = tensor(p.spec.shape, std::move(p.data));
  for (const auto& [name, t] : over) out.at(name) = t;
  return out;
}

struct Ran {
  host::Tensor output;
  backend::Effective effective;
};

Ran infer(const std::string& backend, const model::Model& m,
          const std::string& precision, const Tensors& params,
          const host::Tensor& input, const host::Tensor& calibration) {
  util::TempDir dir("nnbench-int8-test");
  backend::Options o;
  o.threads = 2;
  o.precision = precision;
  o.weights = dir.file("weights");
  host::write_tensors(o.weights, params);
  o.calibration = dir.file("calibration");
  host::write_tensors(o.calibration, {{"input", calibration}});
  const int64_t n = input.shape.at(0);
  auto exe =
      backend::make_backend(backend)->compile(m, o, backend::Shapes::infer(n));
  host::Batch b;
  b.input = input;
  b.labels.shape = {n};
  b.labels.dtype = model::DType::kInt64;
  b.labels.i.assign(n, 0);
  exe->load_batches({b});
  exe->infer(0);
  return {exe->output(), exe->effective()};
}

// The weight levels each side the engine must use on this machine: 127
// with VNNI, 63 without (oneDNN's u8 x s8 pairs saturate 16-bit sums).
float levels() { return onednn_test::expected_isa().vnni ? 127.f : 63.f; }

// Inputs that are multiples of 0.5 reaching 127.5 (u8, scale 2) or of 0.5
// within +-63.5 (s8, scale 2); weights multiples of 0.25 whose row maximum
// is levels / 4 (31.75 or 15.75: s8, scale 4): every product is then exact
// in int8, and the output must be the float one exactly; a bias applied
// after the output scale instead of before it (oneDNN 2.x's order) would
// be off by 7/8 of itself.
TEST(OnednnInt8, ExactOnTheQuantizationGrid) {
  model::Model m;
  m.name = "grid-linear";
  m.input.shape = {4};
  model::zoo::Builder(m).linear(-1, 2, "fc");
  const float top = levels() / 4;
  const std::vector<float> w = {top,  -2.5f, 0.25f, 7.f,  //
                                -1.f, 3.25f, -top,  0.5f};
  const std::vector<float> bias = {1000.5f, -3.25f};
  const host::Tensor x = tensor({2, 4}, {127.5f, 0.5f, 3.f, 10.f,  //
                                         0.f, 64.5f, 12.5f, 99.f});
  const auto params = weights(
      m, {{"fc.weight", tensor({2, 4}, w)}, {"fc.bias", tensor({2}, bias)}});
  const Ran r = infer("onednn", m, "int8", params, x, x);
  ASSERT_EQ(r.output.shape, (model::Shape{2, 2}));
  for (int n = 0; n < 2; ++n)
    for (int o = 0; o < 2; ++o) {
      double want = bias[o];
      for (int k = 0; k < 4; ++k) want += double(x.f[n * 4 + k]) * w[o * 4 + k];
      EXPECT_DOUBLE_EQ(r.output.f[n * 2 + o], want) << n << "," << o;
    }
  EXPECT_NE(r.effective.extras.at("int8").find("u8/s8 inputs"),
            std::string::npos);
  EXPECT_NE(r.effective.extras.at("int8").find("1 quantized here"),
            std::string::npos)
      << r.effective.extras.at("int8");
  EXPECT_NE(r.effective.extras.at("int8").find(
                std::to_string(static_cast<int>(levels())) + " levels each"),
            std::string::npos)
      << r.effective.extras.at("int8");
  EXPECT_EQ(r.effective.precision, "int8");
}

// A conv on signed inputs (s8: oneDNN adds a compensation for the u8
// instructions it runs them on), also exact on the grid.
TEST(OnednnInt8, SignedConvExactOnTheQuantizationGrid) {
  model::Model m;
  m.name = "grid-conv";
  m.input.shape = {1, 3, 3};
  model::zoo::Builder b(m);
  b.flatten(b.conv(-1, 2, 2, 1, 0, "c"));
  const float top = levels() / 4;
  const std::vector<float> w = {top, -0.25f, 1.5f,  -8.f,  //
                                2.f, -top,   0.75f, 4.25f};
  const std::vector<float> bias = {-100.25f, 50.5f};
  const host::Tensor x = tensor(
      {1, 1, 3, 3}, {-63.5f, 2.f, 0.5f, 10.f, -7.5f, 63.f, 1.f, -1.f, 0.f});
  const auto params = weights(m, {{"c.weight", tensor({2, 1, 2, 2}, w)},
                                  {"c.bias", tensor({2}, bias)}});
  const Ran r = infer("onednn", m, "int8", params, x, x);
  ASSERT_EQ(r.output.shape, (model::Shape{1, 8}));
  for (int o = 0; o < 2; ++o)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        double want = bias[o];
        for (int a = 0; a < 2; ++a)
          for (int b = 0; b < 2; ++b)
            want += double(x.f[(i + a) * 3 + j + b]) * w[o * 4 + a * 2 + b];
        EXPECT_DOUBLE_EQ(r.output.f[o * 4 + i * 2 + j], want) << o << i << j;
      }
}

// The residual path in int8: an add fused into the linear before it, whose
// output (after the ReLU) only a quantized layer reads, is written as int8
// even where the addend is negative and on another scale than the output:
// the addend is held in the output's buffer as s8 at its own level (4:
// range +-31.75) and the sum post-op scales it to the output's (2: range
// 0..127.5). Every value sits on its grid, so the output is exact. Before,
// the add's output stayed fp32 whenever the addend's range did not lie
// within the output's (a negative addend, every projection shortcut).
// With `conv` false the same on linear layers, which hold the addend at
// the output's level (oneDNN 2.6's int8 inner product takes no typed sum):
// the negative addend keeps that output fp32, still exact.
void check_residual_grid(bool conv) {
  model::Model m;
  m.name = "grid-residual";
  m.input.shape = conv ? model::Shape{4, 1, 1} : model::Shape{4};
  model::zoo::Builder b(m);
  // 1x1 convs on one pixel, as in a ResNet's blocks, or linear layers.
  auto dense = [&](int x, const char* name) {
    return conv ? b.conv(x, 2, 1, 1, 0, name) : b.linear(x, 2, name);
  };
  const int shortcut = dense(-1, "l1");
  const int h = dense(-1, "l2");
  const int y = dense(b.relu(b.add_(h, shortcut)), "l3");
  if (conv) b.flatten(y);
  auto shape = [&](model::Shape s) {
    if (conv) s.insert(s.end(), {1, 1});
    return s;
  };
  const float top = levels() / 4;
  const std::vector<float> w1 = {top,  -2.5f, 0.25f, 7.f,  //
                                 -1.f, 3.25f, -top,  0.5f};
  const std::vector<float> w2 = {0.5f, -top, 0.75f,  4.25f,  //
                                 top,  2.f,  -0.25f, -3.f};
  const std::vector<float> w3 = {top, -1.5f,  //
                                 0.75f, -top};
  const std::vector<float> x = {127.5f, 0.5f, 3.f, 10.f};
  auto dot = [&](const std::vector<float>& w, int row) {
    double sum = 0;
    for (int k = 0; k < 4; ++k) sum += double(w[row * 4 + k]) * x[k];
    return sum;
  };
  // Biases (multiples of 1/8, exact in the accumulator's units) chosen so
  // that the shortcut is (-31.75, 20.5) and the sum before the ReLU is
  // (127.5, -5.5): the shortcut's level 127 / 31.75 = 4, the output's
  // 255 / 127.5 = 2.
  const double a[2] = {-31.75, 20.5}, sum[2] = {127.5, -5.5};
  const std::vector<float> b1 = {float(a[0] - dot(w1, 0)),
                                 float(a[1] - dot(w1, 1))};
  const std::vector<float> b2 = {float(sum[0] - a[0] - dot(w2, 0)),
                                 float(sum[1] - a[1] - dot(w2, 1))};
  const std::vector<float> b3 = {1000.5f, -3.25f};
  const auto params = weights(m, {{"l1.weight", tensor(shape({2, 4}), w1)},
                                  {"l1.bias", tensor({2}, b1)},
                                  {"l2.weight", tensor(shape({2, 4}), w2)},
                                  {"l2.bias", tensor({2}, b2)},
                                  {"l3.weight", tensor(shape({2, 2}), w3)},
                                  {"l3.bias", tensor({2}, b3)}});
  const host::Tensor input = tensor(shape({1, 4}), x);
  const Ran r = infer("onednn", m, "int8", params, input, input);
  ASSERT_EQ(r.output.shape, (model::Shape{1, 2}));
  const double relu[2] = {std::max(sum[0], 0.0), std::max(sum[1], 0.0)};
  for (int o = 0; o < 2; ++o)
    EXPECT_DOUBLE_EQ(r.output.f[o],
                     b3[o] + w3[o * 2] * relu[0] + w3[o * 2 + 1] * relu[1])
        << o;
  // The fused add's output is the one int8 value between layers (a conv).
  EXPECT_NE(r.effective.extras.at("int8").find(conv ? "int8 (1 values)"
                                                    : "int8 (0 values)"),
            std::string::npos)
      << r.effective.extras.at("int8");
  EXPECT_NE(r.effective.extras.at("inference_only").find("1 adds fused"),
            std::string::npos)
      << r.effective.extras.at("inference_only");
}

TEST(OnednnInt8, ResidualAddStaysInt8ExactOnTheGrid) {
  check_residual_grid(true);
}

TEST(OnednnInt8, ResidualAddOnLinearLayersExactOnTheGrid) {
  check_residual_grid(false);
}

// A linear on every position of a sequence ([T, F] -> [T, O], a
// transformer's MLP) is quantized like a linear: exact on the grid of
// ExactOnTheQuantizationGrid, each position a row of its own.
TEST(OnednnInt8, LinearOnASequenceExactOnTheQuantizationGrid) {
  model::Model m;
  m.name = "grid-seq-linear";
  m.input.shape = {2, 4};
  model::zoo::Builder(m).linear(-1, 2, "fc");
  const float top = levels() / 4;
  const std::vector<float> w = {top,  -2.5f, 0.25f, 7.f,  //
                                -1.f, 3.25f, -top,  0.5f};
  const std::vector<float> bias = {1000.5f, -3.25f};
  const host::Tensor x = tensor({2, 2, 4}, {127.5f, 0.5f, 3.f, 10.f,  //
                                            0.f, 64.5f, 12.5f, 99.f,  //
                                            1.f, 2.f, 3.f, 4.f,       //
                                            100.5f, 0.f, 50.f, 25.5f});
  const auto params = weights(
      m, {{"fc.weight", tensor({2, 4}, w)}, {"fc.bias", tensor({2}, bias)}});
  const Ran r = infer("onednn", m, "int8", params, x, x);
  ASSERT_EQ(r.output.shape, (model::Shape{2, 2, 2}));
  for (int row = 0; row < 4; ++row)
    for (int o = 0; o < 2; ++o) {
      double want = bias[o];
      for (int k = 0; k < 4; ++k)
        want += double(x.f[row * 4 + k]) * w[o * 4 + k];
      EXPECT_DOUBLE_EQ(r.output.f[row * 2 + o], want) << row << "," << o;
    }
  // Quantized (the grid is exact in fp32 too): one int8 product, nothing
  // left in fp32.
  EXPECT_NE(r.effective.extras.at("int8").find("1 quantized here"),
            std::string::npos)
      << r.effective.extras.at("int8");
  EXPECT_EQ(r.effective.extras.at("int8").find("not quantized"),
            std::string::npos)
      << r.effective.extras.at("int8");
}

// A transformer in int8: the MLP's linears, each attention's projections
// and the tied output head run quantized; the record names what stays
// fp32 (the attention between its projections) and the logits stay near
// fp32's on seeded weights and tokens.
TEST(OnednnInt8, TransformerQuantizesItsLinearsAndNamesTheRest) {
  const model::Model m = model::zoo::get("gpt2-tiny");
  const host::Batch batch = data::synthetic_batch(m, 2, 5);
  const Tensors params = weights(m, {});
  const Ran q = infer("onednn", m, "int8", params, batch.input, batch.input);
  const Ran f = infer("onednn", m, "fp32", params, batch.input, batch.input);
  const std::string& record = q.effective.extras.at("int8");
  EXPECT_NE(record.find("h0.attn (attention's scores, softmax and weighted "
                        "sum)"),
            std::string::npos)
      << record;
  // Two blocks of four products (the attention's two projections, the
  // MLP's two linears) and the tied head.
  EXPECT_NE(record.find("; 9 quantized here"), std::string::npos) << record;
  ASSERT_EQ(q.output.f.size(), f.output.f.size());
  // int8's rounding keeps the logits within 5 % of fp32's (in norm); a
  // wrong scale or a misread layout would not, and identical logits would
  // mean nothing was quantized.
  const double error = onednn_test::relative_l2(q.output, f.output);
  EXPECT_LE(error, 0.05);
  EXPECT_GT(error, 0.0) << "int8 gave fp32's logits exactly";
}

// Runs a graph built for batch 4 of `in` forward (plan null: a build that
// trains, its inference program) and returns its output; the graph is
// kept in *kept for its counts.
host::Tensor run_graph(const model::Model& m,
                       engines::onednn::ParamStates* params,
                       engines::onednn::RunState* state, const host::Tensor& in,
                       const engines::onednn::InferPlan* plan,
                       engines::onednn::Graph* kept) {
  using namespace engines::onednn;
  const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  Graph g = build_graph(m, 4, Dt::f32, eng, params, state, 0, plan);
  Net& net = *g.net;
  std::vector<float> host = in.f;
  const memory plain(net.plain(-1, Dt::f32), eng, host.data());
  memory bound(net.value(-1).md, eng);
  make_reorder(plain, bound)
      .execute(net.stream(), {{DNNL_ARG_FROM, plain}, {DNNL_ARG_TO, bound}});
  net.value(-1).mem.set_data_handle(bound.get_data_handle());
  net.run_forward(false);
  net.stream().wait();
  g.loss->read_logits();
  host::Tensor out = g.loss->output();
  *kept = std::move(g);
  return out;
}

// got equals want within 1e-5 of want's largest magnitude (float sums in
// another order), which must not be near zero.
void expect_same_output(const host::Tensor& got, const host::Tensor& want) {
  ASSERT_EQ(got.f.size(), want.f.size());
  double largest = 0;
  for (float w : want.f) largest = std::max(largest, double(std::abs(w)));
  ASSERT_GT(largest, 0.1);
  for (size_t k = 0; k < want.f.size(); ++k)
    EXPECT_NEAR(got.f[k], want.f[k], 1e-5 * largest) << k;
}

// Folding and fusing: conv -> batch norm -> ReLU and conv -> batch norm ->
// add (a residual from the input) -> ReLU run as two convs in an
// inference-only build must give what the training build's inference
// program gives with every layer as its own primitive, for statistics,
// gammas and betas far from their initial (0, 1, 1, 0). Built through the
// graph API, so that one set of statistics feeds both programs.
TEST(OnednnInference, FoldedAndFusedMatchTheUnfused) {
  using namespace engines::onednn;
  model::Model m;
  m.name = "fold";
  m.input.shape = {4, 8, 8};
  model::zoo::Builder b(m);
  int x = b.relu(b.batch_norm(b.no_bias().conv(-1, 4, 3, 1, 1, "c1")));
  x = b.batch_norm(b.no_bias().conv(x, 4, 3, 1, 1, "c2"));
  x = b.relu(b.add_(x, -1));
  b.linear(b.flatten(x), 5, "fc");
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> pos(0.5f, 2.f), any(-1.f, 1.f);
  auto draw = [&](auto& dist) {
    std::vector<float> v(4);
    for (auto& e : v) e = dist(rng);
    return v;
  };
  ParamStates params;
  for (auto& p : model::init_params(m, 1))
    params[p.spec.name] = {p.spec.shape, std::move(p.data), {}};
  RunState state;
  for (int norm : {1, 4}) {
    const std::string& name = m.layers[norm].name;
    params.at(name + ".weight").value = draw(pos);
    params.at(name + ".bias").value = draw(any);
    state.running[norm] = {draw(any), draw(pos)};
  }
  const host::Tensor in = data::synthetic_batch(m, 4, 3).input;
  const engines::onednn::InferPlan plan;
  Graph folded, unfolded;
  const host::Tensor got = run_graph(m, &params, &state, in, &plan, &folded);
  const host::Tensor want =
      run_graph(m, &params, &state, in, nullptr, &unfolded);
  EXPECT_EQ(folded.folded_norms, 2);
  EXPECT_EQ(folded.fused_adds, 1);
  EXPECT_EQ(unfolded.folded_norms + unfolded.fused_adds, 0);
  expect_same_output(got, want);
}

// Inference-only builds fuse a GELU into the linear before it (a
// transformer's feed-forward) and keep an add that reads a fused ReLU or
// GELU apart: the layer's post-ops would add before the activation
// (before, such an add was fused and the activation dropped). Both must
// give the training build's output, where every layer runs apart.
TEST(OnednnInference, FusedActivationsMatchTheUnfused) {
  using namespace engines::onednn;
  model::Model m;
  m.name = "acts";
  m.input.shape = {6, 8};  // [T, F]: the linears run on every position
  model::zoo::Builder b(m);
  const int a = b.linear(-1, 8, "a");
  const int down = b.linear(b.gelu(b.linear(a, 16, "up")), 8, "down");
  const int r = b.relu(b.linear(a, 8, "r"));
  const int sum = b.add_(r, down);
  const int g = b.gelu(b.linear(a, 8, "g"));
  b.linear(b.seq_mean(b.add_(g, sum)), 5, "head");
  ParamStates params;
  for (auto& p : model::init_params(m, 3))
    params[p.spec.name] = {p.spec.shape, std::move(p.data), {}};
  RunState state;
  const host::Tensor in = data::synthetic_batch(m, 4, 3).input;
  const InferPlan plan;
  Graph fused, apart;
  const host::Tensor got = run_graph(m, &params, &state, in, &plan, &fused);
  const host::Tensor want = run_graph(m, &params, &state, in, nullptr, &apart);
  EXPECT_EQ(fused.fused_gelus, 2);
  EXPECT_EQ(fused.fused_adds, 0);
  EXPECT_EQ(apart.fused_gelus, 0);
  expect_same_output(got, want);
}

// Every zoo model the backend runs: an inference-only build (folded,
// fused) gives the training build's inference output, which the
// conformance suite checks against the reference.
TEST(OnednnInference, ZooInferenceOnlyBuildsMatchTrainingBuilds) {
  auto backend = backend::make_backend("onednn");
  for (const char* name :
       {"mnist-cnn", "resnet-56", "alexnet-r", "fcn-r", "mnist-mlp",
        "cifar10-cnn", "bert-tiny", "gpt2-tiny"}) {
    const model::Model m = model::zoo::get(name);
    backend::Options o;
    o.threads = 2;
    const host::Batch batch = data::synthetic_batch(m, 2, 5);
    auto output = [&](const backend::Shapes& shapes) {
      auto exe = backend->compile(m, o, shapes);
      exe->load_batches({batch});
      exe->infer(0);
      return exe->output();
    };
    const host::Tensor got = output(backend::Shapes::infer(2));
    const host::Tensor want = output(backend::Shapes::train(2));
    ASSERT_EQ(got.f.size(), want.f.size()) << name;
    double diff = 0, norm = 0;
    for (size_t k = 0; k < want.f.size(); ++k) {
      diff += std::pow(double(got.f[k]) - want.f[k], 2);
      norm += std::pow(double(want.f[k]), 2);
    }
    EXPECT_LE(std::sqrt(diff), 1e-4 * std::sqrt(norm)) << name;
  }
}

TEST(OnednnInt8, TrainingIsRefusedAndCalibrationRequired) {
  model::Model m;
  m.name = "mlp";
  m.input.shape = {4};
  model::zoo::Builder(m).linear(-1, 2, "fc");
  backend::Options o;
  o.precision = "int8";
  auto b = backend::make_backend("onednn");
  try {
    b->compile(m, o, backend::Shapes::train(2));
    ADD_FAILURE() << "int8 training compiled";
  } catch (const backend::Unimplemented& e) {
    EXPECT_NE(std::string(e.what()).find("inference only"), std::string::npos)
        << e.what();
  }
  try {
    b->compile(m, o, backend::Shapes::infer(2));
    ADD_FAILURE() << "int8 without calibration compiled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("calibration"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace nnbench
