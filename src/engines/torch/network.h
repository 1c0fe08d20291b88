#pragma once
// A torch::nn::Module built from a model description. Every layer with
// parameters is a registered submodule, so parameters(), train()/eval() and
// the optimizer behave as in the official LibTorch examples.
#include <torch/torch.h>

#include <vector>

#include "backend/backend.h"
#include "model/model.h"

namespace nnbench::engines::torch_backend {

// Generation's keys and values, per attention layer (by layer index;
// undefined elsewhere and until first used), for `capacity` positions.
struct KvCache {
  std::vector<torch::Tensor> k, v;
  int64_t length = 0, capacity = 0;
};

class NetworkImpl : public torch::nn::Module {
 public:
  explicit NetworkImpl(const model::Model& m);
  torch::Tensor forward(const torch::Tensor& input);
  // The model on token ids [N, t] that follow the cache's `length` tokens
  // (model::generation_problem(m) is ""): the last position's logits
  // [N, 1, vocab], the cache then holding all length + t.
  torch::Tensor forward_cached(const torch::Tensor& ids, KvCache& cache);
  // Parameters that the optimizer updates (excludes the frozen second LSTM
  // bias under the one-bias convention).
  std::vector<torch::Tensor> trainable_parameters();
  // Parameters under their canonical names (model/params.h), in
  // param_specs order.
  const std::vector<std::pair<std::string, torch::Tensor>>& canonical() const {
    return canonical_;
  }
  // Copies model::init_params values into the parameters.
  void load_initial(uint64_t seed, const std::string& weights = "");
  // Batch norm's running statistics by layer index (on the host).
  std::map<int, backend::RunningStats> running_stats();
  // The floating type of what the network makes itself (one_hot's
  // output): bf16 after the module is converted for bf16 inference.
  void set_float_type(torch::ScalarType t) { float_type_ = t; }

 private:
  torch::ScalarType float_type_ = torch::kFloat32;
  torch::Tensor run_layer(size_t i, const std::vector<torch::Tensor>& in);
  torch::Tensor lstm_forward(size_t i, const torch::Tensor& x);
  void map_canonical();

  model::Model model_;
  std::vector<std::vector<int>> inputs_;
  std::vector<torch::nn::AnyModule> modules_;  // empty for stateless layers
  std::vector<torch::nn::LSTM> lstms_;         // indexed like layers
  std::vector<std::pair<std::string, torch::Tensor>> canonical_;
};
TORCH_MODULE(Network);

}  // namespace nnbench::engines::torch_backend
