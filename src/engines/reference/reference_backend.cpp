#include "engines/reference/reference_backend.h"

#include <omp.h>

#include <cmath>
#include <string>

#include "backend/optimizer.h"
#include "engines/reference/generator.h"
#include "engines/reference/network.h"
#include "engines/reference/update.h"
#include "util/error.h"

namespace nnbench::engines::reference {
namespace {

using backend::Options;

void check_options(const Options& o) {
  if (o.device.rfind("cuda", 0) == 0)
    throw backend::Unimplemented("device " + o.device +
                                 " (the reference backend runs on the CPU)");
  if (o.device != "cpu")
    throw Error("unknown device '" + o.device +
                "'; the reference backend runs on cpu");
  if (o.precision != "fp32")
    throw backend::Unimplemented("precision " + o.precision +
                                 " (the reference backend runs fp32)");
  backend::HostOptimizer check(o);  // throws for what it cannot run
}

Batch<float> to_batch(const host::Batch& b) {
  Batch<float> out;
  if (b.input.dtype == model::DType::kFloat32) {
    out.x.shape = b.input.shape;
    out.x.data = b.input.f;
  } else {
    out.ids.shape = b.input.shape;
    out.ids.data = b.input.i;
  }
  out.labels.shape = b.labels.shape;
  out.labels.data = b.labels.i;
  return out;
}

host::Tensor to_host(const Tensor<float>& t) {
  host::Tensor out;
  out.shape = t.shape;
  out.f = t.data;
  return out;
}

class ReferenceExecutable : public backend::Executable {
 public:
  ReferenceExecutable(const model::Model& m, const Options& o)
      : net_(m, o.seed, o.weights), update_(o) {}

  void load_batches(const std::vector<host::Batch>& batches) override {
    batches_.clear();
    for (const auto& b : batches) batches_.push_back(to_batch(b));
  }

  void infer(int batch) override { net_.forward(batches_.at(batch), false); }

  void train_step(int batch) override {
    net_.forward(batches_.at(batch), true);
    loss_ = net_.loss();
    net_.backward();
    if (reducer_) {
      std::vector<backend::GradientBuffer> buffers;
      for (auto& g : net_.grads()) buffers.push_back({g.ptr(), g.numel()});
      reducer_->reduce(buffers);
    }
    update_.step(net_.params(), net_.grads());
    stepped_ = true;
  }

  double last_loss() override { return loss_; }
  void set_learning_rate(double lr) override { update_.set_learning_rate(lr); }
  void synchronize() override {}
  void set_gradient_reducer(backend::GradientReducer* r) override {
    reducer_ = r;
  }

  host::Tensor output() override { return to_host(net_.output()); }

  std::map<std::string, host::Tensor> parameters() override {
    return by_name(net_.params());
  }

  std::map<std::string, host::Tensor> running_stats() override {
    std::map<int, backend::RunningStats> stats;
    const model::Model& m = net_.model();
    for (int i = 0; i < static_cast<int>(m.layers.size()); ++i) {
      if (m.layers[i].op != model::Op::kBatchNorm) continue;
      const auto& norm = net_.state(i).norm;
      stats[i] = {{norm.running_mean.begin(), norm.running_mean.end()},
                  {norm.running_var.begin(), norm.running_var.end()}};
    }
    return backend::running_stats_tensors(m, stats);
  }

  // Like the LibTorch backend: none before the first train_step.
  std::map<std::string, host::Tensor> gradients() override {
    if (!stepped_) return {};
    return by_name(net_.grads());
  }

  backend::Effective effective() const override {
    int64_t count = 0;
    for (const auto& p : net_.params()) count += p.numel();
    return {omp_get_max_threads(),
            "cpu",
            "fp32",
            backend::describe_optimizer(update_.rule().options()),
            {{"layout", "NCHW"}, {"parameters", std::to_string(count)}}};
  }

 private:
  std::map<std::string, host::Tensor> by_name(
      const std::vector<Tensor<float>>& ts) const {
    std::map<std::string, host::Tensor> out;
    for (size_t i = 0; i < ts.size(); ++i)
      out[net_.specs()[i].name] = to_host(ts[i]);
    return out;
  }

  Network<float> net_;
  Update update_;
  backend::GradientReducer* reducer_ = nullptr;
  std::vector<Batch<float>> batches_;
  double loss_ = std::nan("");
  bool stepped_ = false;
};

class ReferenceBackend : public backend::Backend {
 public:
  std::string name() const override { return "reference"; }
  std::string version() const override { return "nnbench reference 1"; }
  backend::Description describe() const override {
    backend::Description d;
    d.name = name();
    d.can.data_parallel = true;
    d.can.overlap = false;
    d.can.lr_schedules = true;
    d.can.running_stats = true;
    d.devices = {"cpu"};
    d.precisions = {"fp32"};
    d.optimizers = backend::known_optimizers();
    return d;
  }
  // Every op of the description: it is the oracle.
  backend::Support supports(const model::Layer& /*layer*/,
                            const Options& o) const override {
    return backend::supports_options(describe(), o);
  }
  // Dynamic shapes: any batch size runs, so `shapes` needs no preparation.
  std::unique_ptr<backend::Executable> compile(
      const model::Model& m, const Options& o,
      const backend::Shapes& /*shapes*/) override {
    check_options(o);
    if (o.threads > 0) omp_set_num_threads(o.threads);
    return std::make_unique<ReferenceExecutable>(m, o);
  }
  std::unique_ptr<backend::Generator> generator(
      const model::Model& m, const Options& o,
      const backend::GenerationShape& shape) override {
    check_options(o);
    if (o.threads > 0) omp_set_num_threads(o.threads);
    return make_generator(m, o, shape);
  }
};

}  // namespace

std::unique_ptr<backend::Backend> make_backend() {
  return std::make_unique<ReferenceBackend>();
}

}  // namespace nnbench::engines::reference
