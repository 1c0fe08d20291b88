// Backward dispatch: gradients of one layer, added into the network's
// gradient tensors (a layer output read by several layers sums theirs).
#include "engines/reference/layers.h"
#include "engines/reference/ops/activation.h"
#include "engines/reference/ops/conv.h"
#include "engines/reference/ops/dense.h"
#include "engines/reference/ops/pool.h"
#include "engines/reference/ops/shape_ops.h"
#include "engines/reference/ops/transformer.h"
#include "util/error.h"

namespace nnbench::engines::reference {
namespace {

using model::Op;

template <typename T>
Tensor<T>* bias_grad(const model::Layer& l, std::span<Tensor<T>> g) {
  return l.bias ? &g[1] : nullptr;
}

// Ops with parameters: their weight gradients are needed even when the
// input's is not.
template <typename T>
void backward_with_params(LayerArgs<T>& a) {
  const model::Layer& l = *a.layer;
  const Tensor<T>& dy = *a.d_out;
  Tensor<T>* dx = a.d_in.empty() ? nullptr : a.d_in[0];
  switch (l.op) {
    case Op::kLinear:
      return ops::linear_backward(*a.in[0], a.params[0], dy, dx, a.grads[0],
                                  bias_grad(l, a.grads));
    case Op::kConv2d:
      return ops::conv_backward(
          ops::conv_geometry(l, a.in[0]->shape, a.out_shape), *a.in[0],
          a.params[0], dy, dx, a.grads[0], bias_grad(l, a.grads));
    case Op::kBatchNorm:
      return ops::batch_norm_backward(a.params[0], a.state->norm, dy, dx,
                                      a.grads[0], a.grads[1]);
    case Op::kEmbedding:
      return ops::embedding_backward(*a.ids, dy, a.grads[0]);
    case Op::kLstm:
      return ops::lstm_stack_backward<T>(l, *a.in[0], a.params, a.grads,
                                         a.state->lstm, dy, dx);
    case Op::kLayerNorm:
      return ops::layer_norm_backward(a.params[0], a.state->layer_norm, dy, dx,
                                      a.grads[0], a.grads[1]);
    case Op::kPositions:
      return ops::positions_backward(dy, dx, a.grads[0]);
    case Op::kAttention: {
      const bool b = l.bias;
      return ops::attention_backward(
          *a.in[0], attention_params(l, a.params), l.heads, a.state->attention,
          dy, dx, a.grads[0], b ? &a.grads[1] : nullptr, a.grads[b ? 2 : 1],
          b ? &a.grads[3] : nullptr);
    }
    case Op::kTiedLinear:  // adds into the embedding's gradient
      return ops::linear_backward(*a.in[0], a.params[0], dy, dx, a.grads[0],
                                  static_cast<Tensor<T>*>(nullptr));
    default:
      throw Error("reference backend: no backward for op " +
                  std::string(model::op_name(l.op)));
  }
}

ops::Activation activation_of(Op op) {
  if (op == Op::kRelu) return ops::Activation::kRelu;
  if (op == Op::kSigmoid) return ops::Activation::kSigmoid;
  return ops::Activation::kTanh;
}

// Parameter-free ops that read only their own output's gradient.
template <typename T>
void backward_stateless(LayerArgs<T>& a, Tensor<T>& dx) {
  const model::Layer& l = *a.layer;
  const Tensor<T>& dy = *a.d_out;
  const Tensor<T>& x = *a.in[0];
  switch (l.op) {
    case Op::kMaxPool2d:
      return ops::max_pool_backward(ops::pool_geometry(l, x.shape, a.out_shape),
                                    a.state->argmax, dy, dx);
    case Op::kAvgPool2d:
      return ops::avg_pool_backward(ops::pool_geometry(l, x.shape, a.out_shape),
                                    dy, dx);
    case Op::kGlobalAvgPool:
      return ops::global_avg_pool_backward(dy, dx);
    case Op::kSeqMean:
      return ops::seq_mean_backward(dy, dx);
    case Op::kRelu:
    case Op::kSigmoid:
    case Op::kTanh:
      return ops::activation_backward(activation_of(l.op), *a.out, dy, dx);
    case Op::kSoftmax:
      return ops::softmax_backward(*a.out, dy, dx);
    case Op::kLrn:
      return ops::lrn_backward(x, *a.out, l.size, l.alpha, l.beta,
                               a.state->saved, dy, dx);
    case Op::kDropout:
      return ops::dropout_backward(a.state->saved, dy, dx);
    case Op::kFlatten:
      return ops::accumulate(dy, dx);
    case Op::kZeroPadShortcut:
      return ops::zero_pad_shortcut_backward(dy, l.stride[0], l.stride[1], dx);
    case Op::kGelu:
      return ops::gelu_backward(x, l.approximate, dy, dx);
    case Op::kSeqFirst:
      return ops::seq_first_backward(dy, x.dim(1), dx);
    default:
      throw Error("reference backend: no backward for op " +
                  std::string(model::op_name(l.op)));
  }
}

bool has_params(Op op) {
  return op == Op::kLinear || op == Op::kConv2d || op == Op::kBatchNorm ||
         op == Op::kEmbedding || op == Op::kLstm || op == Op::kLayerNorm ||
         op == Op::kPositions || op == Op::kAttention || op == Op::kTiedLinear;
}

}  // namespace

template <typename T>
void backward_layer(LayerArgs<T>& a) {
  const Op op = a.layer->op;
  if (has_params(op)) return backward_with_params(a);
  if (op == Op::kOneHot) return;  // token ids have no gradient
  if (op == Op::kAdd) {
    for (Tensor<T>* dx : a.d_in)
      if (dx != nullptr) ops::accumulate(*a.d_out, *dx);
    return;
  }
  if (op == Op::kConcat) {
    // Inputs that need no gradient still take their share of dy: use a
    // scratch tensor for them.
    std::vector<Tensor<T>> scratch(a.in.size());
    std::vector<Tensor<T>*> targets;
    for (size_t i = 0; i < a.in.size(); ++i) {
      if (a.d_in[i] == nullptr) scratch[i].reset(a.in[i]->shape);
      targets.push_back(a.d_in[i] != nullptr ? a.d_in[i] : &scratch[i]);
    }
    return ops::concat_backward(*a.d_out, targets);
  }
  if (a.d_in[0] != nullptr) backward_stateless(a, *a.d_in[0]);
}

template void backward_layer<float>(LayerArgs<float>&);
template void backward_layer<double>(LayerArgs<double>&);

}  // namespace nnbench::engines::reference
