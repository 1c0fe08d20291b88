#include "engines/torch/torch_backend.h"

#include <torch/torch.h>
#include <torch/version.h>

#include "backend/optimizer.h"
#include "engines/torch/errors.h"
#include "engines/torch/generator.h"
#include "engines/torch/network.h"
#include "engines/torch/optimizer.h"
#include "util/error.h"

namespace nnbench::engines::torch_backend {
namespace {

using backend::Options;
using host::Batch;

torch::Tensor to_tensor(const host::Tensor& t, torch::Device device) {
  if (t.dtype == model::DType::kFloat32)
    return torch::from_blob(const_cast<float*>(t.f.data()), t.shape,
                            torch::kFloat32)
        .to(device, /*non_blocking=*/false, /*copy=*/true);
  return torch::from_blob(const_cast<int64_t*>(t.i.data()), t.shape,
                          torch::kInt64)
      .to(device, false, true);
}

host::Tensor to_host(const torch::Tensor& t) {
  const auto c = t.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  host::Tensor out;
  out.shape.assign(c.sizes().begin(), c.sizes().end());
  out.f.assign(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  return out;
}

class TorchExecutable : public backend::Executable {
 public:
  TorchExecutable(const model::Model& m, const Options& o, bool trains)
      : model_(m),
        options_(o),
        device_(parse_device(o.device)),
        bf16_(o.precision == "bf16") {
    if (o.precision != "fp32" && !bf16_)
      throw backend::Unimplemented("precision " + o.precision +
                                   " (the LibTorch backend runs fp32, and "
                                   "bf16 inference)");
    if (bf16_ && trains)
      throw backend::Unimplemented(
          "precision bf16 on the LibTorch backend is inference only (its "
          "training runs fp32)");
    if (bf16_ && !bf16_problem().empty())
      throw backend::Unimplemented("bf16: " + bf16_problem());
    torch::manual_seed(o.seed);  // dropout masks
    net_ = Network(m);
    net_->load_initial(o.seed, o.weights);
    net_->to(device_);
    if (bf16_) {
      // As PyTorch's model.to(torch.bfloat16): weights and activations.
      net_->to(torch::kBFloat16);
      net_->set_float_type(torch::kBFloat16);
    }
    optimizer_ = make_optimizer(net_->trainable_parameters(), o);
  }

  void load_batches(const std::vector<Batch>& batches) override {
    translate_errors([&] {
      inputs_.clear();
      labels_.clear();
      for (const auto& b : batches) {
        auto x = to_tensor(b.input, device_);
        // bf16: float inputs cast, as a user feeds a converted model.
        if (bf16_ && x.is_floating_point()) x = x.to(torch::kBFloat16);
        inputs_.push_back(x);
        auto y = to_tensor(b.labels, device_);
        if (model_.loss == model::Loss::kSigmoidBinaryCrossEntropy)
          y = y.to(torch::kFloat32);
        labels_.push_back(y);
      }
      return 0;
    });
  }

  void infer(int batch) override {
    translate_errors([&] {
      set_training(false);
      torch::InferenceMode guard;
      output_ = net_->forward(inputs_.at(batch));
      return 0;
    });
  }

  void train_step(int batch) override {
    translate_errors([&] {
      set_training(true);
      optimizer_->zero_grad();
      output_ = net_->forward(inputs_.at(batch));
      loss_ = compute_loss(output_, labels_[batch]);
      const bool overlap = reducer_ && reducer_->wants_overlap();
      if (overlap) reducer_->begin(gradient_counts_);
      overlapping_ = overlap;
      loss_.backward();  // with overlap, the hooks feed the reducer
      overlapping_ = false;
      if (reducer_) reduce_gradients(overlap);
      optimizer_->step();
      return 0;
    });
  }

  double last_loss() override {
    return loss_.defined() ? loss_.item<double>() : std::nan("");
  }

  void set_gradient_reducer(backend::GradientReducer* r) override {
    if (r && !device_.is_cpu())
      throw backend::Unimplemented(
          "data-parallel training on " + options_.device +
          " (gradients are all-reduced from host memory)");
    reducer_ = r;
    if (r && r->wants_overlap() && gradient_counts_.empty()) add_hooks();
  }

  void set_learning_rate(double lr) override {
    for (auto& group : optimizer_->param_groups()) group.options().set_lr(lr);
    options_.learning_rate = lr;  // effective() reports the rate in use
  }

  void synchronize() override {
    if (device_.is_cuda()) torch::cuda::synchronize();
  }

  host::Tensor output() override { return to_host(output_); }

  std::map<std::string, host::Tensor> parameters() override {
    std::map<std::string, host::Tensor> out;
    for (const auto& [name, t] : net_->canonical()) out[name] = to_host(t);
    return out;
  }

  std::map<std::string, host::Tensor> running_stats() override {
    return backend::running_stats_tensors(model_, net_->running_stats());
  }

  std::map<std::string, host::Tensor> gradients() override {
    std::map<std::string, host::Tensor> out;
    for (const auto& [name, t] : net_->canonical())
      if (t.grad().defined()) out[name] = to_host(t.grad());
    return out;
  }

  backend::Effective effective() const override {
    backend::Effective e{
        torch::get_num_threads(),
        device_.str(),
        options_.precision,
        backend::describe_optimizer(options_),
        {{"interop_threads", std::to_string(torch::get_num_interop_threads())},
         {"layout", "NCHW (LibTorch default)"},
         {"parameters", std::to_string(count_parameters())}}};
    if (bf16_)
      e.extras["weights"] =
          "bf16 (the module converted, as PyTorch's model.to(torch.bfloat16): "
          "weights and activations; float inputs cast)";
    return e;
  }

 private:
  void set_training(bool on) {
    if (training_ == on) return;
    net_->train(on);
    training_ = on;
  }

  torch::Tensor compute_loss(const torch::Tensor& out, const torch::Tensor& y) {
    if (model_.loss == model::Loss::kSigmoidBinaryCrossEntropy)
      return torch::binary_cross_entropy_with_logits(out, y);
    return torch::cross_entropy_loss(out.reshape({-1, out.size(-1)}),
                                     y.reshape({-1}));
  }

  int64_t count_parameters() const {
    int64_t n = 0;
    for (const auto& p : net_->parameters())
      if (p.requires_grad()) n += p.numel();
    return n;
  }

  // Overlap as PyTorch DDP does it: a hook on each parameter hands its
  // gradient to the reducer the moment backward has computed it, so
  // buckets all-reduce while backward goes on with earlier layers.
  void add_hooks() {
    const auto params = net_->trainable_parameters();
    for (size_t i = 0; i < params.size(); ++i) {
      gradient_counts_.push_back(params[i].numel());
      params[i].register_hook([this, i](torch::Tensor g) {
        if (!overlapping_) return;
        const auto c = g.to(torch::kFloat32).contiguous();
        reducer_->ready(static_cast<int>(i), c.data_ptr<float>());
      });
    }
  }

  // The gradients as buffers, in parameter order; unused parameters (no
  // gradient yet) get zeros so every rank sends the same message.
  void reduce_gradients(bool overlapped) {
    std::vector<backend::GradientBuffer> buffers;
    for (auto& p : net_->trainable_parameters()) {
      if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
      auto g = p.grad();
      if (!g.is_contiguous() || g.scalar_type() != torch::kFloat32)
        throw backend::Unimplemented(
            "data-parallel training on non-contiguous or non-fp32 gradients");
      buffers.push_back({g.data_ptr<float>(), g.numel()});
    }
    if (overlapped)
      reducer_->finish(buffers);
    else
      reducer_->reduce(buffers);
  }

  model::Model model_;
  Options options_;
  torch::Device device_;
  backend::GradientReducer* reducer_ = nullptr;
  std::vector<int64_t> gradient_counts_;  // per parameter, once hooked
  bool overlapping_ = false;              // inside an overlapped backward
  Network net_{nullptr};
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::vector<torch::Tensor> inputs_, labels_;
  torch::Tensor output_, loss_;
  bool training_ = true;
  bool bf16_ = false;  // inference only: the module converted
};

class TorchBackend : public backend::Backend {
 public:
  std::string name() const override { return "torch"; }
  std::string version() const override {
    return std::string("LibTorch ") + TORCH_VERSION;
  }
  backend::Description describe() const override {
    std::vector<std::string> devices = {"cpu"};
    for (int i = 0; i < static_cast<int>(torch::cuda::device_count()); ++i)
      devices.push_back("cuda:" + std::to_string(i));
    return {name(),
            {.data_parallel = true,
             .overlap = true,
             .lr_schedules = true,
             .running_stats = true},
            {{"LibTorch", TORCH_VERSION}},
            devices,
            // bf16 for inference where LibTorch's bf16 products run here.
            bf16_problem().empty() ? std::vector<std::string>{"fp32", "bf16"}
                                   : std::vector<std::string>{"fp32"},
            backend::known_optimizers(),
            "",
            {"bf16"}};
  }
  // Every op of the description (network.cpp maps each to torch), at bf16
  // those whose bf16 CPU kernel this LibTorch has.
  backend::Support supports(const model::Layer& layer,
                            const Options& o) const override {
    if (o.precision == "bf16" && layer.op == model::Op::kLrn &&
        !bf16_lrn_problem().empty())
      return backend::Support::no("layer '" + layer.name +
                                  "' (lrn): " + bf16_lrn_problem());
    return backend::supports_options(describe(), o);
  }
  // Dynamic shapes: any batch size runs, so `shapes` needs no preparation.
  std::unique_ptr<backend::Executable> compile(
      const model::Model& m, const Options& o,
      const backend::Shapes& shapes) override {
    // A device it does not have is a gap, unimplemented naming it, as on
    // every backend (docs/backends.md; pytorch's worker says the same).
    if (const auto s = backend::supports_options(describe(), o);
        !s && s.why.rfind("device ", 0) == 0)
      throw backend::Unimplemented(
          s.why + (o.device.rfind("cuda", 0) == 0
                       ? ": this LibTorch has no CUDA support or sees no GPU"
                       : ""));
    for (const auto& l : m.layers)
      if (const auto s = supports(l, o); !s)
        throw backend::Unimplemented(s.why);
    // LibTorch defaults to one intra-op thread on some VMs: always set it.
    if (o.threads > 0) torch::set_num_threads(o.threads);
    return translate_errors([&] {
      return std::make_unique<TorchExecutable>(m, o, shapes.train_batch > 0);
    });
  }
  std::unique_ptr<backend::Generator> generator(
      const model::Model& m, const Options& o,
      const backend::GenerationShape& shape) override {
    return make_generator(m, o, shape);
  }
};

}  // namespace

}  // namespace nnbench::engines::torch_backend

extern "C" nnbench::backend::Backend* nnbench_torch_make_backend() {
  return new nnbench::engines::torch_backend::TorchBackend();
}
