#pragma once
// One layer of a description, run forward or backward on host tensors.
// The network (network.h) owns the tensors and hands each layer views.
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "engines/reference/ops/lstm_stack.h"
#include "engines/reference/ops/norm.h"
#include "engines/reference/ops/transformer.h"
#include "engines/reference/tensor.h"
#include "model/layer.h"

namespace nnbench::engines::reference {

// What a layer keeps between its forward and backward (and across steps:
// batch-norm running statistics).
template <typename T>
struct LayerState {
  std::vector<T> saved;         // LRN scales, dropout mask
  std::vector<int64_t> argmax;  // max pooling
  ops::BatchNormState<T> norm;
  ops::LstmStackState<T> lstm;
  ops::LayerNormState<T> layer_norm;
  ops::AttentionState<T> attention;
};

// An attention layer's projections from its parameters (canonical order:
// in weight, in bias, out weight, out bias; no biases without `bias`).
template <typename T>
ops::AttentionParams<T> attention_params(const model::Layer& l,
                                         std::span<Tensor<T>> p) {
  if (l.bias) return {p[0], &p[1], p[2], &p[3]};
  return {p[0], nullptr, p[1], nullptr};
}

template <typename T>
struct LayerArgs {
  const model::Layer* layer = nullptr;
  Shape out_shape;                       // per sample, from shape inference
  std::vector<const Tensor<T>*> in;      // float inputs
  const Tensor<int64_t>* ids = nullptr;  // token inputs (embedding, one_hot)
  Tensor<T>* out = nullptr;
  std::span<Tensor<T>> params, grads;  // the layer's, canonical order
  LayerState<T>* state = nullptr;
  bool train = false;
  std::mt19937_64* rng = nullptr;  // dropout masks
  // Backward only: the output's gradient, and where to add the inputs'
  // gradients (null entries need none, e.g. the model input).
  const Tensor<T>* d_out = nullptr;
  std::vector<Tensor<T>*> d_in;
};

// Sets *a.out (and the state backward needs).
template <typename T>
void forward_layer(LayerArgs<T>& a);

// Adds into a.grads and the non-null a.d_in, after forward_layer in train
// mode on the same inputs.
template <typename T>
void backward_layer(LayerArgs<T>& a);

// Batch-norm buffers start at mean 0 and variance 1, as in torch.
template <typename T>
void init_state(const model::Layer& l, const Shape& in_shape,
                LayerState<T>& st) {
  if (l.op != model::Op::kBatchNorm) return;
  st.norm.running_mean.assign(in_shape[0], T(0));
  st.norm.running_var.assign(in_shape[0], T(1));
}

}  // namespace nnbench::engines::reference
