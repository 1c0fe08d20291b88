#include "model/analysis.h"

#include <string>

#include "util/error.h"

namespace nnbench::model {
namespace {

[[noreturn]] void fail(const Layer& l, const std::string& what) {
  throw Error("layer '" + l.name + "' (" + std::string(op_name(l.op)) +
              "): " + what);
}

void require(bool ok, const Layer& l, const std::string& what) {
  if (!ok) fail(l, what);
}

void require_rank(const Layer& l, const Shape& s, size_t rank,
                  const char* what) {
  require(s.size() == rank, l,
          std::string("expects ") + what + ", got shape " + shape_str(s));
}

// Output length along one spatial dim, PyTorch's rule (also Caffe's for the
// ceil case): a last window that starts inside the padding is dropped.
int64_t window_out(const Layer& l, int64_t in, int d) {
  const int64_t k = l.kernel[d], s = l.stride[d], p = l.pad[d];
  // Each field named with its value: a message naming the wrong one sends
  // the reader to a field that is fine.
  const auto check = [&](bool ok, const char* field, int64_t v,
                         const char* rule) {
    require(ok, l,
            "field '" + std::string(field) + "': " + std::to_string(v) +
                " (dimension " + std::to_string(d) + ") " + rule);
  };
  check(k > 0, "kernel", k, "must be > 0");
  check(s > 0, "stride", s, "must be > 0");
  check(p >= 0, "pad", p, "must be >= 0");
  const int64_t span = in + 2 * p - k;
  require(span >= 0, l,
          "kernel " + std::to_string(k) + " larger than padded input " +
              std::to_string(in + 2 * p));
  int64_t out = (l.ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (l.ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

Shape spatial_shape(const Layer& l, const Shape& in, int64_t channels) {
  require_rank(l, in, 3, "[C,H,W]");
  return {channels, window_out(l, in[1], 0), window_out(l, in[2], 1)};
}

Shape conv_shape(const Layer& l, const Shape& in) {
  require_rank(l, in, 3, "[C,H,W]");
  require(l.out > 0 && l.groups > 0, l, "out and groups must be > 0");
  require(in[0] % l.groups == 0 && l.out % l.groups == 0, l,
          "groups " + std::to_string(l.groups) +
              " must divide input channels " + std::to_string(in[0]) +
              " and out " + std::to_string(l.out));
  return spatial_shape(l, in, l.out);
}

Shape pool_shape(const Layer& l, const Shape& in) {
  for (int d = 0; d < 2; ++d)
    require(l.pad[d] * 2 <= l.kernel[d], l,
            "padding must be at most half the kernel");
  return spatial_shape(l, in, in.at(0));
}

Shape lstm_shape(const Layer& l, const Shape& in) {
  require_rank(l, in, 2, "[T,F]");
  require(l.out > 0 && l.num_layers > 0, l, "out and num_layers must be > 0");
  require(l.lstm_biases == 1 || l.lstm_biases == 2, l,
          "lstm_biases must be 1 or 2");
  const int64_t width = (l.bidirectional ? 2 : 1) * l.out;
  if (l.sequences) return {in[0], width};
  return {width};
}

Shape concat_shape(const Layer& l, const std::vector<Shape>& in) {
  require(in.size() >= 2, l, "needs at least two inputs");
  Shape out = in[0];
  for (size_t i = 1; i < in.size(); ++i) {
    require(in[i].size() == out.size() &&
                std::equal(in[i].begin() + 1, in[i].end(), out.begin() + 1),
            l,
            "inputs " + shape_str(in[0]) + " and " + shape_str(in[i]) +
                " differ outside the channel dim");
    out[0] += in[i][0];
  }
  return out;
}

// Token ids [T] to rows: an embedding's [T, out], a one-hot's [T, vocab].
Shape token_shape(const Layer& l, const Shape& x) {
  switch (l.op) {
    case Op::kEmbedding:
      require_rank(l, x, 1, "token ids [T]");
      require(l.vocab > 0 && l.out > 0, l, "vocab and out must be > 0");
      return {x[0], l.out};
    case Op::kOneHot:
      require_rank(l, x, 1, "token ids [T]");
      require(l.vocab > 0, l, "vocab must be > 0");
      return {x[0], l.vocab};
    default:
      fail(l, "not a token op");
  }
}

// The transformer's ops on [T, F] (layer norm and GELU on any shape).
Shape transformer_shape(const Layer& l, const Shape& x) {
  switch (l.op) {
    case Op::kLayerNorm:
      require(!x.empty(), l, "needs a non-scalar input");
      require(l.eps > 0, l, "eps must be > 0");
      return x;
    case Op::kGelu:
      return x;
    case Op::kPositions:
      require_rank(l, x, 2, "[T,F]");
      require(l.vocab >= x[0], l,
              "vocab (the positions learned) " + std::to_string(l.vocab) +
                  " is less than the sequence length " + std::to_string(x[0]));
      return x;
    case Op::kAttention:
      require_rank(l, x, 2, "[T,F]");
      require(l.heads > 0 && x[1] % l.heads == 0, l,
              "heads " + std::to_string(l.heads) + " must divide the width " +
                  std::to_string(x[1]));
      return x;
    case Op::kSeqFirst:
      require_rank(l, x, 2, "[T,F]");
      return {x[1]};
    default:
      fail(l, "not a transformer op");
  }
}

Shape infer_one(const Layer& l, const std::vector<Shape>& in) {
  const bool many = l.op == Op::kAdd || l.op == Op::kConcat;
  require(many || in.size() == 1, l, "takes exactly one input");
  const Shape& x = in[0];
  switch (l.op) {
    case Op::kLinear: {
      require(!x.empty() && l.out > 0, l,
              "needs out > 0 and a non-scalar input");
      Shape y = x;
      y.back() = l.out;
      return y;
    }
    case Op::kConv2d:
      return conv_shape(l, x);
    case Op::kMaxPool2d:
    case Op::kAvgPool2d:
      return pool_shape(l, x);
    case Op::kGlobalAvgPool:
      require_rank(l, x, 3, "[C,H,W]");
      return {x[0]};
    case Op::kSeqMean:
      require_rank(l, x, 2, "[T,F]");
      return {x[1]};
    case Op::kBatchNorm:
      require(x.size() == 1 || x.size() == 3, l, "expects [C] or [C,H,W]");
      return x;
    case Op::kLrn:
      require_rank(l, x, 3, "[C,H,W]");
      require(l.size > 0, l, "size must be > 0");
      return x;
    case Op::kDropout:
      require(l.p >= 0 && l.p < 1, l, "p must be in [0, 1)");
      return x;
    case Op::kRelu:
    case Op::kSigmoid:
    case Op::kTanh:
    case Op::kSoftmax:
      return x;
    case Op::kFlatten:
      return {numel(x)};
    case Op::kAdd:
      require(in.size() == 2, l, "takes exactly two inputs");
      require(in[0] == in[1], l,
              "input shapes " + shape_str(in[0]) + " and " + shape_str(in[1]) +
                  " differ");
      return x;
    case Op::kConcat:
      return concat_shape(l, in);
    case Op::kZeroPadShortcut:
      require_rank(l, x, 3, "[C,H,W]");
      require(l.out >= x[0] && l.stride[0] > 0 && l.stride[1] > 0, l,
              "out must be >= input channels, stride > 0");
      return {l.out, (x[1] + l.stride[0] - 1) / l.stride[0],
              (x[2] + l.stride[1] - 1) / l.stride[1]};
    case Op::kEmbedding:
    case Op::kOneHot:
      return token_shape(l, x);
    case Op::kLstm:
      return lstm_shape(l, x);
    case Op::kLayerNorm:
    case Op::kGelu:
    case Op::kPositions:
    case Op::kAttention:
    case Op::kSeqFirst:
      return transformer_shape(l, x);
    case Op::kTiedLinear:
      fail(l, "needs its model (infer_shapes)");
  }
  fail(l, "unhandled op");
}

// The layer `tied` names must be an earlier embedding whose width is the
// input's: its [vocab, width] table is the weight.
Shape tied_shape(const Model& m, int i, const std::vector<Shape>& in) {
  const Layer& l = m.layers[i];
  require(in.size() == 1 && !in[0].empty(), l,
          "takes exactly one non-scalar input");
  require(l.tied >= 0 && l.tied < i, l,
          "tied " + std::to_string(l.tied) + " must be an earlier layer");
  const Layer& e = m.layers[l.tied];
  require(e.op == Op::kEmbedding, l,
          "tied layer '" + e.name + "' is not an embedding");
  require(e.out == in[0].back(), l,
          "input width " + std::to_string(in[0].back()) +
              " differs from embedding '" + e.name + "' width " +
              std::to_string(e.out));
  Shape y = in[0];
  y.back() = e.vocab;
  return y;
}

bool takes_tokens(Op op) { return op == Op::kEmbedding || op == Op::kOneHot; }

double layer_flops(const Layer& l, const std::vector<Shape>& in,
                   const Shape& out) {
  const double n_out = static_cast<double>(numel(out));
  switch (l.op) {
    case Op::kLinear: {
      const double rows = n_out / static_cast<double>(l.out);
      return rows * l.out * (2.0 * in[0].back() + (l.bias ? 1 : 0));
    }
    case Op::kConv2d: {
      const double per_out =
          2.0 * (in[0][0] / l.groups) * l.kernel[0] * l.kernel[1];
      return n_out * (per_out + (l.bias ? 1 : 0));
    }
    case Op::kMaxPool2d:
    case Op::kAvgPool2d:
      return n_out * static_cast<double>(l.kernel[0] * l.kernel[1]);
    case Op::kGlobalAvgPool:
    case Op::kSeqMean:
      return static_cast<double>(numel(in[0]));
    case Op::kSoftmax:
      return 3 * n_out;
    case Op::kBatchNorm:
      return 2 * n_out;
    case Op::kLrn:
      return (l.size + 3.0) * n_out;
    case Op::kLstm: {
      // Gate matmuls plus about 10 FLOPs per hidden unit for the gate
      // nonlinearities and the cell update, per step and direction.
      const double steps = static_cast<double>(in[0][0]);
      const double dirs = l.bidirectional ? 2 : 1;
      double f = 0, width = static_cast<double>(in[0][1]);
      for (int64_t i = 0; i < l.num_layers; ++i) {
        f += dirs * steps * (8.0 * l.out * (width + l.out) + 10.0 * l.out);
        width = dirs * l.out;
      }
      return f;
    }
    case Op::kTiedLinear:
      return n_out * 2.0 * in[0].back();
    case Op::kLayerNorm:
      return 5 * n_out;  // mean, variance, normalise, scale, shift
    case Op::kAttention: {
      // Projections in and out, scores and the weighted sum (2 T^2 F
      // each), the softmax over every score (masked ones included, as
      // engines compute them).
      const double t = static_cast<double>(in[0][0]);
      const double f = static_cast<double>(in[0][1]);
      const double bias = l.bias ? 1 : 0;
      return t * 3 * f * (2 * f + bias) + 4 * t * t * f + 3 * l.heads * t * t +
             t * f * (2 * f + bias);
    }
    case Op::kFlatten:
    case Op::kConcat:
    case Op::kEmbedding:
    case Op::kOneHot:
    case Op::kZeroPadShortcut:
    case Op::kSeqFirst:
      return 0;
    default:
      return n_out;  // elementwise
  }
}

}  // namespace

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

int64_t layer_params(const Layer& l, const std::vector<Shape>& in) {
  switch (l.op) {
    case Op::kLinear:
      return in[0].back() * l.out + (l.bias ? l.out : 0);
    case Op::kConv2d:
      return in[0][0] / l.groups * l.kernel[0] * l.kernel[1] * l.out +
             (l.bias ? l.out : 0);
    case Op::kBatchNorm:
      return 2 * in[0][0];  // scale and shift; running stats are buffers
    case Op::kEmbedding:
      return l.vocab * l.out;
    case Op::kLayerNorm:
      return 2 * in[0].back();
    case Op::kPositions:
      return l.vocab * in[0][1];
    case Op::kAttention: {
      const int64_t f = in[0][1];
      return 4 * f * f + (l.bias ? 4 * f : 0);
    }
    case Op::kLstm: {
      const int64_t dirs = l.bidirectional ? 2 : 1, h = l.out;
      int64_t n = 0, width = in[0][1];
      for (int64_t i = 0; i < l.num_layers; ++i) {
        n += dirs * (4 * h * (width + h) + l.lstm_biases * 4 * h);
        width = dirs * h;
      }
      return n;
    }
    default:
      return 0;
  }
}

std::vector<Shape> infer_shapes(const Model& m) {
  if (m.layers.empty()) throw Error("model '" + m.name + "' has no layers");
  if (m.input.shape.empty() || numel(m.input.shape) <= 0)
    throw Error("model '" + m.name + "': input shape " +
                shape_str(m.input.shape) + " must be non-empty and positive");
  std::vector<Shape> shapes;
  for (int i = 0; i < static_cast<int>(m.layers.size()); ++i) {
    const Layer& l = m.layers[i];
    std::vector<Shape> in;
    for (int j : layer_inputs(m, i)) {
      require(j >= -1 && j < i, l,
              "input index " + std::to_string(j) +
                  " must refer to an earlier layer (or -1, the model input)");
      in.push_back(j < 0 ? m.input.shape : shapes[j]);
    }
    const bool from_tokens = layer_inputs(m, i) == std::vector<int>{-1} &&
                             m.input.dtype == DType::kInt64;
    require(takes_tokens(l.op) == from_tokens, l,
            takes_tokens(l.op) ? "must read the model's int64 token input"
                               : "cannot read int64 token ids; add embedding "
                                 "or one_hot first");
    if (takes_tokens(l.op))
      require(l.vocab == m.input.vocab, l,
              "vocab " + std::to_string(l.vocab) +
                  " differs from input vocab " + std::to_string(m.input.vocab));
    shapes.push_back(l.op == Op::kTiedLinear ? tied_shape(m, i, in)
                                             : infer_one(l, in));
  }
  return shapes;
}

Cost analyze(const Model& m) {
  const auto shapes = infer_shapes(m);
  Cost c;
  // needs_grad[i]: a parameter lies upstream of layer i's output, so the
  // backward pass computes its gradient. The model input needs none.
  std::vector<bool> needs_grad(m.layers.size(), false);
  for (int i = 0; i < static_cast<int>(m.layers.size()); ++i) {
    std::vector<Shape> in;
    bool input_needs_grad = false;
    for (int j : layer_inputs(m, i)) {
      in.push_back(j < 0 ? m.input.shape : shapes[j]);
      input_needs_grad = input_needs_grad || (j >= 0 && needs_grad[j]);
    }
    const int64_t params = layer_params(m.layers[i], in);
    const double flops = layer_flops(m.layers[i], in, shapes[i]);
    c.params += params;
    c.forward_flops += flops;
    // Backward: a weight gradient where there are weights (a tied layer's
    // are its embedding's), an input gradient where something upstream
    // needs it; each about a forward.
    const bool weights = params > 0 || m.layers[i].op == Op::kTiedLinear;
    c.train_flops +=
        flops * (1 + (weights ? 1 : 0) + (input_needs_grad ? 1 : 0));
    needs_grad[i] = weights || input_needs_grad;
    c.activation_floats += static_cast<double>(numel(shapes[i]));
  }
  return c;
}

}  // namespace nnbench::model
