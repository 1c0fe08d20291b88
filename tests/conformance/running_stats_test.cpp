// Batch norm's running statistics travel with trained weights: an engine
// that trains saves them (Executable::running_stats, under PyTorch's
// state_dict names) and every engine that loads the file infers what the
// trained one inferred: the C++ backends, the frameworks through their
// workers, ONNX Runtime and OpenVINO through their graphs.
#include <gtest/gtest.h>

#include <cmath>

#include "backend/registry.h"
#include "data/synthetic.h"
#include "host/tensor_file.h"
#include "model/zoo/builder.h"
#include "util/error.h"
#include "util/temp_dir.h"

namespace nnbench {
namespace {

using Tensors = std::map<std::string, host::Tensor>;

model::Model small_cnn() {
  model::Model m;
  m.name = "bn-cnn";
  m.input.shape = {3, 8, 8};
  model::zoo::Builder b(m);
  int x = b.relu(b.batch_norm(b.no_bias().conv(-1, 4, 3, 1, 1, "c")));
  b.linear(b.flatten(b.max_pool(x, 2, 2)), 5, "fc");
  return m;
}

double relative_error(const host::Tensor& got, const host::Tensor& want) {
  double diff = 0, norm = 0;
  for (size_t k = 0; k < want.f.size(); ++k) {
    diff += std::pow(double(got.f.at(k)) - want.f[k], 2);
    norm += std::pow(double(want.f[k]), 2);
  }
  return std::sqrt(diff / norm);
}

host::Tensor infer_with(const std::string& backend, const model::Model& m,
                        const std::string& weights, const host::Batch& b) {
  backend::Options o;
  o.threads = 2;
  o.weights = weights;
  auto exe =
      backend::make_backend(backend)->compile(m, o, backend::Shapes::infer(4));
  exe->load_batches({b});
  exe->infer(0);
  return exe->output();
}

// The engines that run here and carry running statistics; `trainers`:
// only those that train (and so can save them).
std::vector<std::string> engines(bool trainers) {
  std::vector<std::string> out;
  for (const auto& name : backend::backend_names()) {
    const auto d = backend::make_backend(name)->describe();
    if (d.unavailable.empty() && d.can.running_stats &&
        (d.can.training || !trainers))
      out.push_back(name);
  }
  return out;
}

class RunningStats : public ::testing::TestWithParam<std::string> {};

// Trains 8 steps on the saving backend (the statistics move away from
// their start), saves as the trainer does, and loads the file everywhere.
TEST_P(RunningStats, SavedByOneBackendInferTheSameEverywhere) {
  const model::Model m = small_cnn();
  const host::Batch batch = data::synthetic_batch(m, 4, 3);
  util::TempDir dir("nnbench-stats-test");
  backend::Options o;
  o.threads = 2;
  auto trained = backend::make_backend(GetParam())
                     ->compile(m, o, backend::Shapes::train(4));
  trained->load_batches({batch});
  for (int s = 0; s < 8; ++s) trained->train_step(0);
  trained->infer(0);
  const host::Tensor want = trained->output();
  Tensors saved = trained->parameters();
  const Tensors stats = trained->running_stats();
  const std::string bn = m.layers[1].name;
  ASSERT_EQ(stats.size(), 2u);
  ASSERT_EQ(stats.count(bn + ".running_mean"), 1u);
  ASSERT_EQ(stats.at(bn + ".running_var").shape, (model::Shape{4}));
  for (const auto& [name, t] : stats) saved[name] = t;
  host::write_tensors(dir.file("trained"), saved);

  // The check below could fail: the same parameters with the starting
  // statistics infer something else.
  Tensors fresh = saved;
  std::fill(fresh.at(bn + ".running_mean").f.begin(),
            fresh.at(bn + ".running_mean").f.end(), 0.f);
  std::fill(fresh.at(bn + ".running_var").f.begin(),
            fresh.at(bn + ".running_var").f.end(), 1.f);
  host::write_tensors(dir.file("fresh"), fresh);
  EXPECT_GT(relative_error(infer_with("reference", m, dir.file("fresh"), batch),
                           want),
            1e-2);

  // Every engine loads what the oracle saved; every other saver is loaded
  // by the oracle and by itself (worker start-ups keep the full matrix
  // out of the suite's time).
  std::vector<std::string> loaders = {"reference", GetParam()};
  if (GetParam() == "reference") loaders = engines(false);
  for (const auto& loader : loaders)
    EXPECT_LT(
        relative_error(infer_with(loader, m, dir.file("trained"), batch), want),
        1e-4)
        << GetParam() << " saved, " << loader << " loaded";
}

INSTANTIATE_TEST_SUITE_P(Savers, RunningStats,
                         ::testing::ValuesIn(engines(true)),
                         [](const auto& info) { return info.param; });

TEST(RunningStatsFile, WeightsWithoutThemAreRefusedNamingTheTensor) {
  const model::Model m = small_cnn();
  util::TempDir dir("nnbench-stats-test");
  Tensors params;
  for (auto& p : model::init_params(m, 1))
    params[p.spec.name] = {p.spec.shape, model::DType::kFloat32, p.data, {}};
  host::write_tensors(dir.file("w"), params);
  for (const char* b : {"reference", "onednn", "torch"}) {
    try {
      infer_with(b, m, dir.file("w"), data::synthetic_batch(m, 4, 3));
      ADD_FAILURE() << b << " loaded weights without running statistics";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(m.layers[1].name + ".running_mean"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace nnbench
