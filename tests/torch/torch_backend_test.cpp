// The LibTorch backend against the description: every zoo model compiles
// with the description's parameter count and runs a train and infer step;
// training on a fixed synthetic batch lowers the loss; the harness measures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "../common/eventually.h"
#include "../common/process_threads.h"
#include "../common/zoo_counts.h"
#include "backend/registry.h"
#include "bench/step_loop.h"
#include "data/synthetic.h"
#include "model/analysis.h"
#include "model/params.h"
#include "model/zoo/zoo.h"
#include "util/error.h"

namespace nnbench {
namespace {

backend::Options small_options() {
  backend::Options o;
  o.threads = 2;
  return o;
}

// Its bf16 probes (made when its precisions are listed, on the main
// thread) run on a thread of their own: an OpenMP pool they left on the
// main thread would make every other pool's idle threads sleep between
// regions (util/own_thread.h). The probes run once a process: this holds
// where the test has its own process (ctest runs each test so); in a run
// of the whole binary an earlier test may have made them already.
TEST(TorchBackend, ListingItsPrecisionsLeavesNoThreadBehind) {
  auto b = backend::make_backend("torch");
  const int before = nnbench_test::process_threads();
  EXPECT_FALSE(b->describe().precisions.empty());
  // The probe's pool threads leave right after its thread is joined.
  EXPECT_TRUE(nnbench_test::eventually(
      5, [&] { return nnbench_test::process_threads() == before; }))
      << nnbench_test::process_threads() << " threads, " << before << " before";
}

TEST(TorchBackend, EveryZooModelMatchesItsDescriptionAndSteps) {
  auto b = backend::make_backend("torch");
  for (const auto& name : model::zoo::names()) {
    SCOPED_TRACE(name);
    const model::Model m = model::zoo::get(name);
    auto exe = b->compile(m, small_options(), {});
    // Counted from the backend's own tensors; the count by hand.
    EXPECT_EQ(exe->effective().extras.at("parameters"),
              std::to_string(test::zoo_expected().at(name).params));
    exe->load_batches({data::synthetic_batch(m, 2, 7)});
    exe->train_step(0);
    EXPECT_TRUE(std::isfinite(exe->last_loss()));
    exe->infer(0);
    exe->synchronize();
  }
}

TEST(TorchBackend, StartsFromTheDescriptionsInitialWeights) {
  auto b = backend::make_backend("torch");
  for (const char* name : {"resnet-56", "imdb-bilstm", "lstm-ptb"}) {
    SCOPED_TRACE(name);
    const model::Model m = model::zoo::get(name);
    backend::Options o = small_options();
    o.seed = 11;
    auto params = b->compile(m, o, {})->parameters();
    const auto want = model::init_params(m, 11);
    ASSERT_EQ(params.size(), want.size());
    for (const auto& p : want) {
      ASSERT_TRUE(params.count(p.spec.name)) << p.spec.name;
      EXPECT_EQ(params[p.spec.name].shape, p.spec.shape) << p.spec.name;
      EXPECT_EQ(params[p.spec.name].f, p.data) << p.spec.name;
    }
  }
}

TEST(TorchBackend, GradientsCoverEveryParameter) {
  auto b = backend::make_backend("torch");
  const model::Model m = model::zoo::get("imdb-bilstm");
  auto exe = b->compile(m, small_options(), {});
  exe->load_batches({data::synthetic_batch(m, 3, 1)});
  exe->train_step(0);
  const auto grads = exe->gradients();
  EXPECT_EQ(grads.size(), model::param_specs(m).size());
  EXPECT_EQ(exe->output().shape, (std::vector<int64_t>{3, 1}));
}

TEST(TorchBackend, TrainingOnAFixedBatchLowersTheLoss) {
  auto b = backend::make_backend("torch");
  const model::Model m = model::zoo::get("mnist-mlp");
  auto exe = b->compile(m, small_options(), {});
  exe->load_batches({data::synthetic_batch(m, 64, 3)});
  exe->train_step(0);
  const double first = exe->last_loss();
  for (int i = 0; i < 40; ++i) exe->train_step(0);
  const double last = exe->last_loss();
  // Random labels for 10 classes start near ln(10) = 2.30; memorising 64
  // samples must bring the loss well below that.
  EXPECT_NEAR(first, std::log(10.0), 0.5);
  EXPECT_LT(last, 0.5 * first);
}

TEST(TorchBackend, SameSeedSameLoss) {
  auto b = backend::make_backend("torch");
  const model::Model m = model::zoo::get("mnist-cnn");
  double loss[2];
  for (double& l : loss) {
    auto exe = b->compile(m, small_options(), {});
    exe->load_batches({data::synthetic_batch(m, 8, 5)});
    exe->train_step(0);
    exe->train_step(0);
    l = exe->last_loss();
  }
  EXPECT_DOUBLE_EQ(loss[0], loss[1]);
}

// Unimplemented naming the device, as pytorch's worker says (it was
// invalid_args here).
TEST(TorchBackend, CudaWithoutCudaIsUnimplemented) {
  auto b = backend::make_backend("torch");
  backend::Options o = small_options();
  o.device = "cuda";
  try {
    b->compile(model::zoo::get("mnist-mlp"), o, {});
    GTEST_SKIP() << "this LibTorch has CUDA and a GPU";
  } catch (const backend::Unimplemented& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos);
  }
}

// bf16 is inference only (the module converted, as PyTorch's
// model.to(torch.bfloat16)): a training compile is unimplemented, not a
// crash; where LibTorch's bf16 products run, an inference compile runs
// bf16 and says so. int8 is unimplemented (no quantization in LibTorch's
// C++ frontend).
TEST(TorchBackend, Bf16IsInferenceOnlyAndInt8Unimplemented) {
  auto b = backend::make_backend("torch");
  backend::Options o = small_options();
  o.precision = "bf16";
  const model::Model m = model::zoo::get("mnist-mlp");
  EXPECT_THROW(b->compile(m, o, backend::Shapes::train(4)),
               backend::Unimplemented);
  const auto d = b->describe();
  EXPECT_FALSE(d.trains_at("bf16"));
  if (std::find(d.precisions.begin(), d.precisions.end(), "bf16") !=
      d.precisions.end()) {
    auto e = b->compile(m, o, backend::Shapes::infer(4));
    EXPECT_EQ(e->effective().precision, "bf16");
    EXPECT_EQ(e->effective().extras.at("weights").rfind("bf16", 0), 0u);
  } else {
    EXPECT_THROW(b->compile(m, o, backend::Shapes::infer(4)),
                 backend::Unimplemented);
  }
  o.precision = "int8";
  EXPECT_THROW(b->compile(m, o, backend::Shapes::infer(4)),
               backend::Unimplemented);
}

results::RunRequest tiny_request(backend::Mode mode, int64_t batch) {
  results::RunRequest r;
  r.mode = mode;
  r.batch = batch;
  r.options = small_options();
  r.warmup = {2, 0.0, 5.0};
  r.stop.min_iterations = 5;
  r.stop.min_seconds = 0;
  return r;
}

TEST(Runner, MeasuresTrainingAndInference) {
  auto b = backend::make_backend("torch");
  const model::Model m = model::zoo::get("mnist-mlp");
  machine::Peak peak;
  peak.gflops = 100;
  for (auto mode : {backend::Mode::kTrain, backend::Mode::kInfer}) {
    const auto r = bench::run(*b, m, tiny_request(mode, 16), peak);
    ASSERT_EQ(r.state, results::State::kOk) << r.message;
    EXPECT_EQ(r.samples.size(), 5u);
    EXPECT_GE(r.warmup_iterations, 2);
    EXPECT_GT(r.stats.median, 0);
    EXPECT_LE(r.stats.median_ci.lo, r.stats.median);
    EXPECT_NEAR(r.samples_per_second, 16 / r.stats.median, 1e-6);
    EXPECT_NEAR(r.peak_fraction, r.gflops / 100, 1e-12);
    EXPECT_EQ(r.effective.threads, 2);
    EXPECT_EQ(std::isfinite(r.last_loss), mode == backend::Mode::kTrain);
  }
}

TEST(Runner, BatchTooLargeForMemoryIsAnOomResult) {
  auto b = backend::make_backend("torch");
  const auto r = bench::run(*b, model::zoo::get("fcn-s"),
                            tiny_request(backend::Mode::kTrain, 50000000),
                            machine::Peak{});
  EXPECT_EQ(r.state, results::State::kOom);
  EXPECT_NE(r.message.find("GiB"), std::string::npos);
}

TEST(Runner, AllocationFailureIsAnOomResult) {
  // With the estimate disabled the allocator itself fails: still a result.
  auto b = backend::make_backend("torch");
  auto req = tiny_request(backend::Mode::kInfer, 1LL << 40);
  req.memory_check = false;
  req.distinct_batches = 1;
  const auto r =
      bench::run(*b, model::zoo::get("mnist-mlp"), req, machine::Peak{});
  EXPECT_EQ(r.state, results::State::kOom) << r.message;
}

TEST(Runner, DivergingTrainingIsAFailedResultNamingTheStep) {
  auto b = backend::make_backend("torch");
  auto req = tiny_request(backend::Mode::kTrain, 32);
  req.options.learning_rate = 1e30;
  req.options.momentum = 0;
  req.warmup = {5, 0, 5};
  const auto r =
      bench::run(*b, model::zoo::get("mnist-mlp"), req, machine::Peak{});
  EXPECT_EQ(r.state, results::State::kFailed);
  EXPECT_NE(r.message.find("after step"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace nnbench
