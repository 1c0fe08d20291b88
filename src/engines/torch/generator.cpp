#include "engines/torch/generator.h"

#include <torch/torch.h>

#include "engines/torch/errors.h"
#include "engines/torch/network.h"
#include "util/own_thread.h"

namespace nnbench::engines::torch_backend {
namespace {

// LibTorch hands its bf16 matrix products on the CPU to oneDNN, which can
// refuse them (it does under ONEDNN_MAX_CPU_ISA=AVX2; an AVX2-only CPU was
// not tried): tried on a few values before anything is built, so that a
// refusal is unimplemented naming why, not a failure inside a generation.
void check_bf16_runs() {
  if (const auto& why = bf16_problem(); !why.empty())
    throw backend::Unimplemented("generation at precision bf16: " + why);
}

// The first line of an exception's message (LibTorch's carry a backtrace).
std::string first_line(const std::exception& e) {
  const std::string what = e.what();
  return what.substr(0, what.find('\n'));
}

}  // namespace

// The probes run off the caller's thread: the main thread runs them when
// the backends' precisions are listed, and must not keep the OpenMP pool
// their products make (util/own_thread.h).
const std::string& bf16_problem() {
  static const std::string why = util::on_own_thread([] {
    try {
      torch::InferenceMode guard;
      // Large enough for LibTorch to hand them to oneDNN (a linear of 8
      // inputs stays in its own loop).
      const auto x = torch::ones({2, 8, 64}, torch::kBFloat16);
      const auto w = torch::ones({192, 64}, torch::kBFloat16);
      torch::nn::functional::linear(x, w, w[0].repeat(3));
      torch::matmul(x, x.transpose(-2, -1));
      return std::string();
    } catch (const std::exception& e) {
      // oneDNN's own error (ideep's), or LibTorch's with its backtrace.
      return "LibTorch's bf16 matrix products do not run on this CPU (" +
             first_line(e) + ")";
    }
  });
  return why;
}

const std::string& bf16_lrn_problem() {
  static const std::string why = util::on_own_thread([] {
    try {
      torch::InferenceMode guard;
      torch::nn::functional::local_response_norm(
          torch::ones({1, 4, 3, 3}, torch::kBFloat16),
          torch::nn::functional::LocalResponseNormFuncOptions(3));
      return std::string();
    } catch (const std::exception& e) {
      return "LibTorch's local_response_norm at bf16: " + first_line(e);
    }
  });
  return why;
}

namespace {

class TorchGenerator : public backend::Generator {
 public:
  TorchGenerator(const model::Model& m, const backend::Options& o,
                 const backend::GenerationShape& shape)
      : device_(parse_device(o.device)),
        shape_(shape),
        bf16_(o.precision == "bf16") {
    net_ = Network(m);
    net_->load_initial(o.seed, o.weights);
    // bf16: the whole module (weights, activations, the cache made from
    // them), as a PyTorch loop after model.to(torch.bfloat16) runs.
    if (bf16_)
      net_->to(device_, torch::kBFloat16);
    else
      net_->to(device_);
    net_->eval();
  }

  std::vector<int64_t> prefill(
      const std::vector<std::vector<int64_t>>& prompts) override {
    last_ = torch::Tensor();  // a call that fails leaves no logits
    const int64_t t = backend::check_prompts(prompts, shape_);
    const auto n = static_cast<int64_t>(prompts.size());
    return translate_errors([&] {
      torch::InferenceMode guard;
      // The cache's tensors, made by the first generation (a warm-up's),
      // are kept: a new one only starts over.
      cache_.length = 0;
      cache_.capacity = shape_.prompt + shape_.new_tokens;
      auto ids = torch::empty({n, t}, torch::kInt64);
      for (int64_t i = 0; i < n; ++i)
        std::copy(prompts[i].begin(), prompts[i].end(),
                  ids.data_ptr<int64_t>() + i * t);
      return next(net_->forward_cached(ids.to(device_), cache_));
    });
  }

  std::vector<int64_t> decode(const std::vector<int64_t>& tokens) override {
    last_ = torch::Tensor();  // a call that fails leaves no logits
    backend::check_decode(tokens, shape_);
    return translate_errors([&] {
      torch::InferenceMode guard;
      auto ids = torch::tensor(tokens, torch::kInt64)
                     .reshape({static_cast<int64_t>(tokens.size()), 1});
      return next(net_->forward_cached(ids.to(device_), cache_));
    });
  }

  std::optional<std::vector<float>> last_logits() override {
    if (!last_.defined()) return std::nullopt;
    const auto l = last_.to(torch::kCPU, torch::kFloat32).contiguous();
    return std::vector<float>(l.data_ptr<float>(),
                              l.data_ptr<float>() + l.numel());
  }

  backend::Effective effective() const override {
    const std::string dtype = bf16_ ? "bf16" : "fp32";
    return {
        torch::get_num_threads(),
        device_.str(),
        dtype,
        "",
        {{"interop_threads", std::to_string(torch::get_num_interop_threads())},
         {"weights", dtype},
         {"kv_cache", "[N, heads, " + std::to_string(cache_.capacity) +
                          ", head width] per attention layer, " + dtype}}};
  }

 private:
  // Each row's argmax at its last position, on the host; those logits kept
  // (a reference, no copy) for last_logits.
  std::vector<int64_t> next(const torch::Tensor& logits) {
    last_ = logits.select(1, -1);
    const auto ids = last_.argmax(-1).to(torch::kCPU);
    return {ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + ids.numel()};
  }

  torch::Device device_;
  backend::GenerationShape shape_;
  bool bf16_;
  Network net_{nullptr};
  KvCache cache_;
  torch::Tensor last_;
};

}  // namespace

std::unique_ptr<backend::Generator> make_generator(
    const model::Model& m, const backend::Options& o,
    const backend::GenerationShape& shape) {
  if (o.precision != "fp32" && o.precision != "bf16")
    throw backend::Unimplemented(
        "generation at precision " + o.precision +
        " (the LibTorch backend generates at fp32 and bf16: LibTorch's C++ "
        "frontend has no quantized modules and no quantize_dynamic, "
        "PyTorch's dynamic quantization is its Python API, which the "
        "pytorch worker runs)");
  backend::check_generates(m, shape);
  if (o.threads > 0) torch::set_num_threads(o.threads);
  if (o.precision == "bf16") check_bf16_runs();
  return translate_errors(
      [&] { return std::make_unique<TorchGenerator>(m, o, shape); });
}

}  // namespace nnbench::engines::torch_backend
