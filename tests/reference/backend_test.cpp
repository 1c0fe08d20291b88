// The reference backend through the Backend interface: every small zoo
// model compiles from the canonical initial values and steps, training
// lowers the loss, SGD with momentum matches a hand computation, options
// are reported, and the harness runs it.
#include <gtest/gtest.h>

#include <cmath>

#include "../common/zoo_counts.h"
#include "backend/registry.h"
#include "bench/step_loop.h"
#include "data/synthetic.h"
#include "model/analysis.h"
#include "model/params.h"
#include "model/zoo/builder.h"
#include "model/zoo/zoo.h"
#include "util/error.h"

namespace nnbench {
namespace {

// One thread unless threading is the subject: on a shared machine each
// parallel region can wait milliseconds for a core, and the results do not
// depend on the thread count (checked below).
backend::Options small_options(int threads = 1) {
  backend::Options o;
  o.threads = threads;
  return o;
}

// Over a GFLOP per sample forward, or over 50M parameters, a step takes
// seconds on two cores: alexnet, googlenet, resnet-50, inception-v3, fcn-s.
bool too_large(const model::Model& m) {
  const model::Cost c = model::analyze(m);
  return c.forward_flops > 1e9 || c.params > 50'000'000;
}

TEST(ReferenceBackend, ZooModelsStartFromCanonicalParamsAndStep) {
  auto b = backend::make_backend("reference");
  int ran = 0;
  for (const auto& name : model::zoo::names()) {
    const model::Model m = model::zoo::get(name);
    if (too_large(m)) continue;
    SCOPED_TRACE(name);
    const backend::Options o = small_options();
    auto exe = b->compile(m, o, {});
    // Counted from the backend's own tensors; the count by hand.
    EXPECT_EQ(exe->effective().extras.at("parameters"),
              std::to_string(test::zoo_expected().at(name).params));
    const auto start = exe->parameters();
    const auto want = model::init_params(m, o.seed);
    ASSERT_EQ(start.size(), want.size());
    for (const auto& p : want) {
      ASSERT_TRUE(start.count(p.spec.name)) << p.spec.name;
      EXPECT_EQ(start.at(p.spec.name).shape, p.spec.shape) << p.spec.name;
      EXPECT_EQ(start.at(p.spec.name).f, p.data) << p.spec.name;
    }
    EXPECT_TRUE(exe->gradients().empty());
    exe->load_batches({data::synthetic_batch(m, 2, 7)});
    exe->train_step(0);
    EXPECT_TRUE(std::isfinite(exe->last_loss()));
    const auto grads = exe->gradients();
    ASSERT_EQ(grads.size(), want.size());
    for (const auto& p : want) {
      ASSERT_TRUE(grads.count(p.spec.name)) << p.spec.name;
      EXPECT_EQ(grads.at(p.spec.name).shape, p.spec.shape) << p.spec.name;
    }
    exe->infer(0);
    exe->synchronize();
    const auto out_shape = model::infer_shapes(m).back();
    model::Shape want_out{2};
    want_out.insert(want_out.end(), out_shape.begin(), out_shape.end());
    EXPECT_EQ(exe->output().shape, want_out);
    ++ran;
  }
  EXPECT_GE(ran, 10);
}

TEST(ReferenceBackend, TrainingOnAFixedBatchLowersTheLoss) {
  auto b = backend::make_backend("reference");
  const model::Model m = model::zoo::get("mnist-mlp");
  auto exe = b->compile(m, small_options(), {});
  exe->load_batches({data::synthetic_batch(m, 64, 3)});
  exe->train_step(0);
  const double first = exe->last_loss();
  for (int i = 0; i < 40; ++i) exe->train_step(0);
  // Random labels for 10 classes start near ln(10); memorising 64 samples
  // must bring the loss well below that.
  EXPECT_NEAR(first, std::log(10.0), 0.5);
  EXPECT_LT(exe->last_loss(), 0.5 * first);
}

// One linear layer, one sample: the gradient of softmax cross-entropy is
// (softmax(z) - onehot) x^T, and torch.optim.SGD's momentum buffer starts
// as the first gradient.
TEST(ReferenceBackend, SgdMomentumMatchesAHandComputation) {
  model::Model m;
  m.name = "tiny";
  m.input.shape = {3};
  model::zoo::Builder(m).linear(-1, 2, "fc");
  backend::Options o = small_options();
  o.learning_rate = 0.5;
  o.momentum = 0.9;
  auto exe = backend::make_backend("reference")->compile(m, o, {});
  const host::Batch batch = data::synthetic_batch(m, 1, 4);
  exe->load_batches({batch});
  auto p = exe->parameters();
  std::vector<float> w = p["fc.weight"].f, bias = p["fc.bias"].f, buf_w, buf_b;
  for (int step = 0; step < 3; ++step) {
    const auto& x = batch.input.f;
    double z[2], e[2];
    for (int r = 0; r < 2; ++r)
      z[r] =
          bias[r] + w[r * 3] * x[0] + w[r * 3 + 1] * x[1] + w[r * 3 + 2] * x[2];
    const double top = std::max(z[0], z[1]);
    const double sum = std::exp(z[0] - top) + std::exp(z[1] - top);
    for (int r = 0; r < 2; ++r)
      e[r] = std::exp(z[r] - top) / sum - (batch.labels.i[0] == r);
    std::vector<float> gw(6), gb(2);
    for (int r = 0; r < 2; ++r) {
      gb[r] = static_cast<float>(e[r]);
      for (int c = 0; c < 3; ++c)
        gw[r * 3 + c] = static_cast<float>(e[r] * x[c]);
    }
    exe->train_step(0);
    const auto g = exe->gradients();
    for (int k = 0; k < 6; ++k)
      EXPECT_NEAR(g.at("fc.weight").f[k], gw[k], 1e-6);
    for (int k = 0; k < 2; ++k) EXPECT_NEAR(g.at("fc.bias").f[k], gb[k], 1e-6);
    auto update = [&](std::vector<float>& v, std::vector<float>& buf,
                      const std::vector<float>& grad) {
      if (buf.empty())
        buf = grad;
      else
        for (size_t k = 0; k < v.size(); ++k) buf[k] = 0.9f * buf[k] + grad[k];
      for (size_t k = 0; k < v.size(); ++k) v[k] -= 0.5f * buf[k];
    };
    update(w, buf_w, gw);
    update(bias, buf_b, gb);
    p = exe->parameters();
    for (int k = 0; k < 6; ++k) EXPECT_NEAR(p["fc.weight"].f[k], w[k], 1e-5);
    for (int k = 0; k < 2; ++k) EXPECT_NEAR(p["fc.bias"].f[k], bias[k], 1e-5);
  }
}

TEST(ReferenceBackend, LearningRateCanChangeBetweenSteps) {
  const model::Model m = model::zoo::get("mnist-mlp");
  auto exe =
      backend::make_backend("reference")->compile(m, small_options(), {});
  exe->load_batches({data::synthetic_batch(m, 4, 2)});
  exe->train_step(0);
  const auto before = exe->parameters();
  exe->set_learning_rate(0);
  exe->train_step(0);
  for (const auto& [name, t] : exe->parameters())
    EXPECT_EQ(t.f, before.at(name).f) << name;
}

// Every value is computed by one thread in a fixed order, so one and two
// threads give bit-identical results (this also runs the parallel paths of
// conv, linear, pooling and the LSTM).
TEST(ReferenceBackend, ThreadCountDoesNotChangeTheResult) {
  auto b = backend::make_backend("reference");
  for (const char* name : {"mnist-cnn", "lstm-text-gen"}) {
    SCOPED_TRACE(name);
    const model::Model m = model::zoo::get(name);
    std::map<std::string, host::Tensor> params[2];
    for (int threads : {1, 2}) {
      auto exe = b->compile(m, small_options(threads), {});
      EXPECT_EQ(exe->effective().threads, threads);
      exe->load_batches({data::synthetic_batch(m, 4, 5)});
      exe->train_step(0);
      exe->train_step(0);
      params[threads - 1] = exe->parameters();
    }
    for (const auto& [name, t] : params[0])
      EXPECT_EQ(t.f, params[1].at(name).f) << name;
  }
}

TEST(ReferenceBackend, UnsupportedSettingsAreReported) {
  auto b = backend::make_backend("reference");
  const model::Model m = model::zoo::get("mnist-mlp");
  backend::Options o = small_options();
  o.precision = "bf16";
  EXPECT_THROW(b->compile(m, o, {}), backend::Unimplemented);
  o = small_options();
  o.device = "cuda";
  EXPECT_THROW(b->compile(m, o, {}), backend::Unimplemented);
  o.device = "tpu";
  EXPECT_THROW(b->compile(m, o, {}), Error);
  o = small_options();
  o.optimizer = "lamb";
  EXPECT_THROW(b->compile(m, o, {}), backend::Unimplemented);
  const auto eff = b->compile(m, small_options(), {})->effective();
  EXPECT_EQ(eff.device, "cpu");
  EXPECT_EQ(eff.precision, "fp32");
  EXPECT_EQ(b->name(), "reference");
}

TEST(ReferenceBackend, TheHarnessMeasuresIt) {
  auto b = backend::make_backend("reference");
  for (auto mode : {backend::Mode::kTrain, backend::Mode::kInfer}) {
    results::RunRequest r;
    r.mode = mode;
    r.batch = 8;
    r.options = small_options(2);
    r.warmup = {1, 0.0, 5.0};
    r.stop.min_iterations = 3;
    r.stop.min_seconds = 0;
    const auto res = bench::run(*b, model::zoo::get("mnist-mlp"), r, {});
    ASSERT_EQ(res.state, results::State::kOk) << res.message;
    EXPECT_EQ(res.samples.size(), 3u);
    EXPECT_EQ(std::isfinite(res.last_loss), mode == backend::Mode::kTrain);
  }
}

}  // namespace
}  // namespace nnbench
