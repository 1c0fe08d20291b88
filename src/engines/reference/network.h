#pragma once
// A model description run on host tensors: forward, loss, backward. It
// keeps every layer's output for backward and sums the gradients of
// outputs that feed several layers (residuals, Inception branches).
// Instantiated for float (the backend) and double (gradient checks).
#include <cstdint>
#include <random>
#include <vector>

#include "engines/reference/layers.h"
#include "engines/reference/tensor.h"
#include "model/model.h"
#include "model/params.h"

namespace nnbench::engines::reference {

template <typename T>
struct Batch {
  Tensor<T> x;          // float inputs [N, ...], empty for token models
  Tensor<int64_t> ids;  // token inputs [N, T], empty for float models
  Tensor<int64_t> labels;
};

template <typename T>
class Network {
 public:
  // Parameters start at model::init_params(m, seed); dropout masks are
  // drawn from a generator seeded with the same seed.
  // `weights`: a tensor file of trained parameters; "" for the seeded ones.
  Network(const model::Model& m, uint64_t seed,
          const std::string& weights = "");

  // The batch must stay alive until the following backward().
  const Tensor<T>& forward(const Batch<T>& b, bool train);
  // Loss of the last forward against its batch's labels; keeps the
  // gradient with respect to the output for backward().
  double loss();
  // Gradients of the last loss() for every parameter and, if input_grad,
  // for the (float) model input.
  void backward(bool input_grad = false);

  // Token models: the sequences forward() takes from now on are `tokens`
  // long (generation grows them). Throws nnbench::Error naming a layer
  // that cannot take that many.
  void set_sequence_length(int64_t tokens);

  const Tensor<T>& output() const { return outs_.back(); }
  std::vector<Tensor<T>>& params() { return params_; }
  const std::vector<Tensor<T>>& params() const { return params_; }
  const std::vector<Tensor<T>>& grads() const { return grads_; }
  std::vector<Tensor<T>>& grads() { return grads_; }
  const std::vector<model::ParamSpec>& specs() const { return specs_; }
  const Tensor<T>& input_grad() const { return d_input_; }
  const LayerState<T>& state(int layer) const { return states_[layer]; }
  const model::Model& model() const { return model_; }

 private:
  LayerArgs<T> args(int i, bool train);
  void check_input(const Batch<T>& b) const;

  model::Model model_;
  std::vector<Shape> shapes_;             // per-sample output of each layer
  std::vector<std::vector<int>> inputs_;  // resolved input indices
  std::vector<model::ParamSpec> specs_;
  std::vector<size_t> first_param_, param_count_;  // per layer
  std::vector<Tensor<T>> params_, grads_;
  std::vector<Tensor<T>> outs_, d_outs_;
  std::vector<LayerState<T>> states_;
  Tensor<T> d_input_;
  const Batch<T>* batch_ = nullptr;
  std::mt19937_64 rng_;
};

}  // namespace nnbench::engines::reference
