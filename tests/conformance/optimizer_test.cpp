// Every backend runs the optimizer it is given exactly, or refuses it: the
// parameter updates of three training steps (so that momentum and moment
// estimates matter) match the reference's for every optimizer and setting.
// The reference applies backend::HostOptimizer; LibTorch runs torch::optim,
// an independent implementation, so the reference's rules are checked too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "backend/registry.h"
#include "data/synthetic.h"
#include "model/zoo/zoo.h"

namespace nnbench::conformance {
namespace {

struct Setting {
  std::string name;
  backend::Options options;
};

std::vector<Setting> settings() {
  std::vector<Setting> out;
  backend::Options o;
  o.threads = 2;
  o.learning_rate = 0.05;
  o.momentum = 0.9;
  out.push_back({"sgd_momentum", o});
  o.nesterov = true;
  o.weight_decay = 0.05;  // large, so that a dropped decay shows
  out.push_back({"sgd_nesterov_weight_decay", o});
  o = {};
  o.threads = 2;
  o.optimizer = "adam";
  o.learning_rate = 0.01;
  o.weight_decay = 0.01;
  out.push_back({"adam_weight_decay", o});
  o.optimizer = "rmsprop";
  o.momentum = 0.5;
  o.weight_decay = 0;
  out.push_back({"rmsprop_momentum", o});
  o.optimizer = "adadelta";
  o.learning_rate = 1.0;
  out.push_back({"adadelta", o});
  return out;
}

using Tensors = std::map<std::string, host::Tensor>;

// Parameters after `steps` training steps on one fixed batch; with `rates`,
// step i runs at rates[i] (set_learning_rate before it).
Tensors trained(const std::string& name, const model::Model& m,
                const backend::Options& o, const host::Batch& batch, int steps,
                const std::vector<double>& rates = {}) {
  auto exe = backend::make_backend(name)->compile(
      m, o, backend::Shapes::train(batch.input.shape.at(0)));
  exe->load_batches({batch});
  for (int i = 0; i < steps; ++i) {
    if (i < static_cast<int>(rates.size())) exe->set_learning_rate(rates[i]);
    exe->train_step(0);
  }
  exe->synchronize();
  return exe->parameters();
}

// ||(got - init) - (want - init)|| / ||want - init||, over all parameters:
// the error of the update, not of the (much larger) weights.
double update_error(const Tensors& init, const Tensors& got,
                    const Tensors& want) {
  double diff = 0, scale = 0;
  for (const auto& [name, w] : want) {
    const auto& g = got.at(name).f;
    const auto& i = init.at(name).f;
    for (size_t k = 0; k < w.f.size(); ++k) {
      diff += std::pow(double(g[k]) - w.f[k], 2);
      scale += std::pow(double(w.f[k]) - i[k], 2);
    }
  }
  return std::sqrt(diff / scale);
}

model::Model small_cnn() {
  model::Model m = model::zoo::get("mnist-cnn");
  for (auto& l : m.layers) l.p = 0;  // dropout masks differ per backend
  return m;
}

// The backends that run `m` at all (the layer conformance suite reports the
// others' gaps); each is then held to the optimizers it states.
std::vector<std::string> backends_running(const model::Model& m) {
  std::vector<std::string> out;
  for (const auto& b : backend::backend_names()) {
    // Engines that cannot be installed here (caffe, cntk) run nothing; the
    // coverage test holds the others to being ready.
    if (!backend::make_backend(b)->describe().unavailable.empty()) continue;
    try {
      backend::make_backend(b)->compile(m, {}, backend::Shapes::train(2));
      out.push_back(b);
    } catch (const backend::Unimplemented& e) {
      std::cout << b << " does not run " << m.name << ": " << e.what() << "\n";
    }
  }
  return out;
}

bool states(const std::string& backend, const std::string& optimizer) {
  const auto all = backend::make_backend(backend)->describe().optimizers;
  return std::find(all.begin(), all.end(), optimizer) != all.end();
}

// A backend applies every optimizer it states exactly (three steps against
// the oracle's) and refuses, naming it, every one it does not.
TEST(OptimizerConformance, EveryBackendAppliesEveryOptimizerExactly) {
  const model::Model m = small_cnn();
  const host::Batch batch = data::synthetic_batch(m, 4, 7);
  const auto backends = backends_running(m);
  ASSERT_GE(backends.size(), 1u);
  for (const auto& s : settings()) {
    SCOPED_TRACE(s.name);
    const Tensors init = trained(backend::kOracle, m, s.options, batch, 0);
    const Tensors want = trained(backend::kOracle, m, s.options, batch, 3);
    for (const auto& b : backends) {
      if (b == backend::kOracle) continue;
      SCOPED_TRACE(b);
      if (states(b, s.options.optimizer)) {
        const Tensors got = trained(b, m, s.options, batch, 3);
        EXPECT_LT(update_error(init, got, want), 2e-3);
      } else {
        EXPECT_THROW(trained(b, m, s.options, batch, 0),
                     backend::Unimplemented);
      }
    }
  }
}

// A learning-rate schedule (set_learning_rate between steps) changes the
// rate PyTorch's way, outside the momentum buffer: w -= lr_t * buf_t. An
// optimizer that keeps the rate inside its velocity (Keras's, MXNet's sgd)
// must rescale it when the rate changes. Every backend that claims
// schedules is held to the oracle over three steps at three rates.
TEST(OptimizerConformance, ScheduledRatesApplyAsTheOraclesDo) {
  const model::Model m = small_cnn();
  const host::Batch batch = data::synthetic_batch(m, 4, 7);
  const std::vector<double> rates = {0.05, 0.01, 0.08};
  const auto all = settings();
  for (const auto& s : {all[0], all[1]}) {
    SCOPED_TRACE(s.name);
    const Tensors init = trained(backend::kOracle, m, s.options, batch, 0);
    const Tensors want =
        trained(backend::kOracle, m, s.options, batch, 3, rates);
    // The schedule matters: the constant rate's update is far off.
    EXPECT_GT(
        update_error(init, trained(backend::kOracle, m, s.options, batch, 3),
                     want),
        0.1);
    for (const auto& b : backends_running(m)) {
      if (b == backend::kOracle ||
          !backend::make_backend(b)->describe().can.lr_schedules ||
          !states(b, s.options.optimizer))
        continue;
      SCOPED_TRACE(b);
      EXPECT_LT(
          update_error(init, trained(b, m, s.options, batch, 3, rates), want),
          2e-3);
    }
  }
}

// The comparison above can fail: Nesterov's first step is (1 + momentum)
// times plain SGD's, and decay adds wd * p, so a backend that dropped
// either would be far off.
TEST(OptimizerConformance, DroppedSettingsWouldBeCaught) {
  const model::Model m = small_cnn();
  const host::Batch batch = data::synthetic_batch(m, 4, 7);
  const auto all = settings();
  const Tensors init = trained(backend::kOracle, m, all[0].options, batch, 0);
  const Tensors plain = trained(backend::kOracle, m, all[0].options, batch, 3);
  const Tensors nesterov =
      trained(backend::kOracle, m, all[1].options, batch, 3);
  EXPECT_GT(update_error(init, plain, nesterov), 0.1);
}

TEST(OptimizerConformance, UnknownOptimizersAreRefusedByName) {
  const model::Model m = small_cnn();
  backend::Options o;
  o.optimizer = "lamb";
  for (const auto& b : backends_running(m)) {
    SCOPED_TRACE(b);
    try {
      backend::make_backend(b)->compile(m, o, backend::Shapes::train(2));
      ADD_FAILURE() << "compiled with optimizer lamb";
    } catch (const backend::Unimplemented& e) {
      EXPECT_NE(std::string(e.what()).find("lamb"), std::string::npos);
    }
  }
}

TEST(OptimizerConformance, EffectiveNamesTheSettingsApplied) {
  const model::Model m = small_cnn();
  const auto s = settings()[1].options;  // nesterov, weight decay 0.05
  for (const auto& b : backends_running(m)) {
    SCOPED_TRACE(b);
    const auto eff = backend::make_backend(b)
                         ->compile(m, s, backend::Shapes::train(2))
                         ->effective();
    const std::string opt = eff.optimizer;
    EXPECT_NE(opt.find("nesterov"), std::string::npos) << opt;
    EXPECT_NE(opt.find("weight_decay 0.05"), std::string::npos) << opt;
  }
}

}  // namespace
}  // namespace nnbench::conformance
