// Forward dispatch: one description op, one kernel call.
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
const Tensor<T>* bias_of(const model::Layer& l, std::span<Tensor<T>> p) {
  return l.bias ? &p[1] : nullptr;
}

template <typename T>
void forward_tokens(LayerArgs<T>& a) {
  const model::Layer& l = *a.layer;
  if (l.op == Op::kEmbedding)
    ops::embedding_forward(*a.ids, a.params[0], *a.out);
  else
    ops::one_hot_forward(*a.ids, l.vocab, *a.out);
}

template <typename T>
void forward_spatial(LayerArgs<T>& a, const Shape& y_shape) {
  const model::Layer& l = *a.layer;
  const Tensor<T>& x = *a.in[0];
  switch (l.op) {
    case Op::kConv2d:
      ops::conv_forward(ops::conv_geometry(l, x.shape, a.out_shape), x,
                        a.params[0], bias_of(l, a.params), *a.out);
      return;
    case Op::kMaxPool2d:
      ops::max_pool_forward(ops::pool_geometry(l, x.shape, a.out_shape), x,
                            *a.out, a.state->argmax, y_shape);
      return;
    case Op::kAvgPool2d:
      ops::avg_pool_forward(ops::pool_geometry(l, x.shape, a.out_shape), x,
                            *a.out, y_shape);
      return;
    case Op::kLrn:
      ops::lrn_forward(x, l.size, l.alpha, l.beta, l.k, a.state->saved, *a.out);
      return;
    case Op::kBatchNorm:
      if (a.train)
        ops::batch_norm_train(x, a.params[0], a.params[1], l.eps, l.momentum,
                              a.state->norm, *a.out);
      else
        ops::batch_norm_eval(x, a.params[0], a.params[1], l.eps, a.state->norm,
                             *a.out);
      return;
    default:
      throw Error("reference backend: unhandled op " +
                  std::string(model::op_name(l.op)));
  }
}

}  // namespace

template <typename T>
void forward_layer(LayerArgs<T>& a) {
  const model::Layer& l = *a.layer;
  if (l.op == Op::kEmbedding || l.op == Op::kOneHot) return forward_tokens(a);
  const Tensor<T>& x = *a.in[0];
  Tensor<T>& y = *a.out;
  switch (l.op) {
    case Op::kLinear:
      return ops::linear_forward(x, a.params[0], bias_of(l, a.params), y);
    case Op::kGlobalAvgPool:
      return ops::global_avg_pool_forward(x, y);
    case Op::kSeqMean:
      return ops::seq_mean_forward(x, y);
    case Op::kRelu:
      return ops::activation_forward(ops::Activation::kRelu, x, y);
    case Op::kSigmoid:
      return ops::activation_forward(ops::Activation::kSigmoid, x, y);
    case Op::kTanh:
      return ops::activation_forward(ops::Activation::kTanh, x, y);
    case Op::kSoftmax:
      return ops::softmax_forward(x, y);
    case Op::kDropout:
      return ops::dropout_forward(x, l.p, a.train, *a.rng, a.state->saved, y);
    case Op::kFlatten:
      return ops::flatten_forward(x, y);
    case Op::kAdd:
      return ops::add_forward(x, *a.in[1], y);
    case Op::kConcat:
      return ops::concat_forward(a.in, y);
    case Op::kZeroPadShortcut:
      return ops::zero_pad_shortcut_forward(x, l.out, l.stride[0], l.stride[1],
                                            y);
    case Op::kLstm:
      return ops::lstm_stack_forward<T>(l, x, a.params, a.state->lstm, y);
    case Op::kLayerNorm:
      return ops::layer_norm_forward(x, a.params[0], a.params[1], l.eps,
                                     a.state->layer_norm, y);
    case Op::kGelu:
      return ops::gelu_forward(x, l.approximate, y);
    case Op::kPositions:
      return ops::positions_forward(x, a.params[0], y);
    case Op::kAttention:
      return ops::attention_forward(x, attention_params(l, a.params), l.heads,
                                    l.causal, a.state->attention, y);
    case Op::kTiedLinear:  // the embedding's table (Network::args)
      return ops::linear_forward(x, a.params[0],
                                 static_cast<const Tensor<T>*>(nullptr), y);
    case Op::kSeqFirst:
      return ops::seq_first_forward(x, y);
    default:
      return forward_spatial(a, batched(x.dim(0), a.out_shape));
  }
}

template void forward_layer<float>(LayerArgs<float>&);
template void forward_layer<double>(LayerArgs<double>&);

}  // namespace nnbench::engines::reference
