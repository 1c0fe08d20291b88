#include "engines/torch/network.h"

#include <cmath>
#include <limits>

#include "backend/backend.h"
#include "model/analysis.h"
#include "model/params.h"
#include "util/error.h"

namespace nnbench::engines::torch_backend {
namespace {

namespace F = torch::nn::functional;
using model::Layer;
using model::Op;

std::string module_name(const Layer& l, size_t i) {
  std::string n = l.name;
  for (char& c : n)
    if (c == '.') c = '_';  // torch reserves '.' for nesting
  return std::to_string(i) + "_" + n;
}

// Multi-head self-attention as the description defines it (oracle:
// engines/reference/ops/transformer.h), its parameters under their
// canonical names: q, k and v from one [3F, F] projection, heads side by
// side in column blocks.
struct AttentionImpl : torch::nn::Module {
  AttentionImpl(int64_t f, int64_t heads, bool causal, bool bias)
      : heads(heads), causal(causal) {
    in_weight = register_parameter("in_weight", torch::empty({3 * f, f}));
    if (bias) in_bias = register_parameter("in_bias", torch::empty({3 * f}));
    out_weight = register_parameter("out_weight", torch::empty({f, f}));
    if (bias) out_bias = register_parameter("out_bias", torch::empty({f}));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    const int64_t n = x.size(0), t = x.size(1), f = x.size(2), d = f / heads;
    const auto qkv = F::linear(x, in_weight, in_bias).chunk(3, -1);
    const auto split = [&](const torch::Tensor& y) {
      return y.reshape({n, t, heads, d}).transpose(1, 2);  // [N, H, T, D]
    };
    auto scores =
        torch::matmul(split(qkv[0]), split(qkv[1]).transpose(-2, -1)) /
        std::sqrt(static_cast<double>(d));
    if (causal)
      scores = scores.masked_fill(
          torch::ones({t, t}, torch::kBool).triu(1).to(x.device()),
          -std::numeric_limits<float>::infinity());
    const auto ctx = torch::matmul(torch::softmax(scores, -1), split(qkv[2]))
                         .transpose(1, 2)
                         .reshape({n, t, f});
    return F::linear(ctx, out_weight, out_bias);
  }
  // The same on new tokens x [N, t, F] at positions offset.. of a sequence
  // whose earlier keys and values `k` and `v` ([N, H, capacity, D],
  // allocated on first use) hold; this call's are written after them.
  torch::Tensor forward_cached(const torch::Tensor& x, torch::Tensor& k,
                               torch::Tensor& v, int64_t offset,
                               int64_t capacity) {
    const int64_t n = x.size(0), t = x.size(1), f = x.size(2), d = f / heads;
    const auto qkv = F::linear(x, in_weight, in_bias).chunk(3, -1);
    const auto split = [&](const torch::Tensor& y) {
      return y.reshape({n, t, heads, d}).transpose(1, 2);  // [N, H, t, D]
    };
    if (!k.defined() || k.size(0) != n || k.size(2) != capacity) {
      // Only positions [0, offset + t) are ever read: no need to zero.
      k = torch::empty({n, heads, capacity, d}, x.options());
      v = torch::empty({n, heads, capacity, d}, x.options());
    }
    k.narrow(2, offset, t).copy_(split(qkv[1]));
    v.narrow(2, offset, t).copy_(split(qkv[2]));
    const int64_t seen = offset + t;
    auto scores =
        torch::matmul(split(qkv[0]), k.narrow(2, 0, seen).transpose(-2, -1)) /
        std::sqrt(static_cast<double>(d));
    if (t > 1)  // a new token sees the cache and the new ones up to itself
      scores = scores.masked_fill(
          torch::ones({t, seen}, torch::kBool).triu(offset + 1).to(x.device()),
          -std::numeric_limits<float>::infinity());
    const auto ctx =
        torch::matmul(torch::softmax(scores, -1), v.narrow(2, 0, seen))
            .transpose(1, 2)
            .reshape({n, t, f});
    return F::linear(ctx, out_weight, out_bias);
  }
  int64_t heads;
  bool causal;
  torch::Tensor in_weight, in_bias, out_weight, out_bias;
};
TORCH_MODULE(Attention);

// A learned table of positions, its first T rows added to [N, T, F].
struct PositionsImpl : torch::nn::Module {
  PositionsImpl(int64_t positions, int64_t f) {
    weight = register_parameter("weight", torch::empty({positions, f}));
  }
  torch::Tensor forward(const torch::Tensor& x) { return forward_at(x, 0); }
  // Rows offset.. for tokens that follow `offset` earlier ones.
  torch::Tensor forward_at(const torch::Tensor& x, int64_t offset) {
    return x + weight.slice(0, offset, offset + x.size(1));
  }
  torch::Tensor weight;
};
TORCH_MODULE(Positions);

torch::nn::AnyModule make_module(const Layer& l, const model::Shape& in) {
  switch (l.op) {
    case Op::kLinear:
      return torch::nn::AnyModule(torch::nn::Linear(
          torch::nn::LinearOptions(in.back(), l.out).bias(l.bias)));
    case Op::kConv2d:
      return torch::nn::AnyModule(torch::nn::Conv2d(
          torch::nn::Conv2dOptions(in[0], l.out, {l.kernel[0], l.kernel[1]})
              .stride({l.stride[0], l.stride[1]})
              .padding({l.pad[0], l.pad[1]})
              .groups(l.groups)
              .bias(l.bias)));
    case Op::kBatchNorm: {
      auto o =
          torch::nn::BatchNormOptions(in[0]).eps(l.eps).momentum(l.momentum);
      if (in.size() == 3)
        return torch::nn::AnyModule(torch::nn::BatchNorm2d(o));
      return torch::nn::AnyModule(torch::nn::BatchNorm1d(o));
    }
    case Op::kDropout:
      return torch::nn::AnyModule(torch::nn::Dropout(l.p));
    case Op::kEmbedding:
      return torch::nn::AnyModule(torch::nn::Embedding(l.vocab, l.out));
    case Op::kLayerNorm:
      return torch::nn::AnyModule(torch::nn::LayerNorm(
          torch::nn::LayerNormOptions({in.back()}).eps(l.eps)));
    case Op::kPositions:
      return torch::nn::AnyModule(Positions(l.vocab, in[1]));
    case Op::kAttention:
      return torch::nn::AnyModule(Attention(in[1], l.heads, l.causal, l.bias));
    default:
      return {};
  }
}

torch::nn::LSTM make_lstm(const Layer& l, const model::Shape& in) {
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(in[1], l.out)
                           .num_layers(l.num_layers)
                           .bidirectional(l.bidirectional)
                           .batch_first(true));
  if (l.lstm_biases == 1) {
    // One bias per gate (Keras, TensorFlow): PyTorch's second bias is held
    // at zero and not trained, which computes the same function.
    torch::NoGradGuard no_grad;
    for (auto& p : lstm->named_parameters())
      if (p.key().find("bias_hh") != std::string::npos) {
        p.value().zero_();
        p.value().set_requires_grad(false);
      }
  }
  return lstm;
}

torch::Tensor zero_pad_shortcut(const Layer& l, const torch::Tensor& x) {
  auto y = x.slice(2, 0, c10::nullopt, l.stride[0])
               .slice(3, 0, c10::nullopt, l.stride[1]);
  const int64_t extra = l.out - x.size(1), lo = extra / 2;
  return F::pad(y, F::PadFuncOptions({0, 0, 0, 0, lo, extra - lo}));
}

}  // namespace

NetworkImpl::NetworkImpl(const model::Model& m) : model_(m) {
  const auto shapes = model::infer_shapes(m);
  for (size_t i = 0; i < m.layers.size(); ++i) {
    const Layer& l = m.layers[i];
    inputs_.push_back(model::layer_inputs(m, static_cast<int>(i)));
    const int first = inputs_.back()[0];
    const model::Shape& in = first < 0 ? m.input.shape : shapes[first];
    modules_.push_back(make_module(l, in));
    lstms_.push_back(l.op == Op::kLstm ? make_lstm(l, in) : nullptr);
    if (!modules_.back().is_empty())
      register_module(module_name(l, i), modules_.back().ptr());
    if (l.op == Op::kLstm) register_module(module_name(l, i), lstms_.back());
  }
  map_canonical();
}

namespace {

// PyTorch's name for a canonical parameter suffix of a layer.
std::string torch_name(const std::string& suffix) {
  // weight, bias, and attention's in_weight ... as they are.
  if (suffix.find('.') == std::string::npos) return suffix;
  // l<k>[_reverse].w_ih -> weight_ih_l<k>[_reverse]
  const auto dot = suffix.find('.');
  const std::string where = suffix.substr(1, dot - 1),
                    what = suffix.substr(dot + 1);
  const std::string kind = what[0] == 'w' ? "weight" : "bias";
  return kind + what.substr(1) + "_l" + where;
}

}  // namespace

void NetworkImpl::map_canonical() {
  for (const auto& spec : model::param_specs(model_)) {
    const Layer& l = model_.layers[spec.layer];
    const std::string suffix = spec.name.substr(l.name.size() + 1);
    auto& owner =
        l.op == Op::kLstm ? *lstms_[spec.layer] : *modules_[spec.layer].ptr();
    torch::Tensor* t = owner.named_parameters(false).find(torch_name(suffix));
    if (t == nullptr)
      throw Error("torch backend: no parameter for " + spec.name);
    canonical_.emplace_back(spec.name, *t);
  }
}

void NetworkImpl::load_initial(uint64_t seed, const std::string& weights) {
  torch::NoGradGuard no_grad;
  const auto values = backend::initial_params(model_, seed, weights);
  for (size_t i = 0; i < values.size(); ++i) {
    auto& dst = canonical_[i].second;
    const auto src = torch::from_blob(const_cast<float*>(values[i].data.data()),
                                      dst.sizes(), torch::kFloat32);
    dst.copy_(src);
  }
  for (auto& [i, st] : backend::initial_running_stats(model_, weights)) {
    auto buffers = modules_[i].ptr()->named_buffers(false);
    const std::vector<float>* values[] = {&st.mean, &st.var};
    const char* names[] = {"running_mean", "running_var"};
    for (int k = 0; k < 2; ++k) {
      torch::Tensor* t = buffers.find(names[k]);
      if (t == nullptr)
        throw Error("torch backend: no " + std::string(names[k]) + " in " +
                    model_.layers[i].name);
      t->copy_(torch::from_blob(const_cast<float*>(values[k]->data()),
                                t->sizes(), torch::kFloat32));
    }
  }
}

std::map<int, backend::RunningStats> NetworkImpl::running_stats() {
  std::map<int, backend::RunningStats> out;
  for (size_t i = 0; i < model_.layers.size(); ++i) {
    if (model_.layers[i].op != Op::kBatchNorm) continue;
    auto buffers = modules_[i].ptr()->named_buffers(false);
    auto host = [&](const char* name) {
      const torch::Tensor t =
          buffers.find(name)->to(torch::kCPU, torch::kFloat32).contiguous();
      return std::vector<float>(t.data_ptr<float>(),
                                t.data_ptr<float>() + t.numel());
    };
    out[i] = {host("running_mean"), host("running_var")};
  }
  return out;
}

std::vector<torch::Tensor> NetworkImpl::trainable_parameters() {
  std::vector<torch::Tensor> out;
  for (auto& p : parameters())
    if (p.requires_grad()) out.push_back(p);
  return out;
}

torch::Tensor NetworkImpl::forward(const torch::Tensor& input) {
  std::vector<torch::Tensor> outs(model_.layers.size());
  std::vector<torch::Tensor> in;
  for (size_t i = 0; i < model_.layers.size(); ++i) {
    in.clear();
    for (int j : inputs_[i]) in.push_back(j < 0 ? input : outs[j]);
    outs[i] = run_layer(i, in);
  }
  return outs.back();
}

torch::Tensor NetworkImpl::forward_cached(const torch::Tensor& ids,
                                          KvCache& cache) {
  const int64_t t = ids.size(1);
  if (cache.length + t > cache.capacity)
    throw Error("generation: " + std::to_string(cache.length + t) +
                " tokens exceed the cache's " + std::to_string(cache.capacity));
  cache.k.resize(model_.layers.size());
  cache.v.resize(model_.layers.size());
  std::vector<torch::Tensor> outs(model_.layers.size());
  std::vector<torch::Tensor> in;
  for (size_t i = 0; i < model_.layers.size(); ++i) {
    in.clear();
    for (int j : inputs_[i]) in.push_back(j < 0 ? ids : outs[j]);
    const Layer& l = model_.layers[i];
    // Only the last position's logits choose the next token, and the head
    // works on each position alone: a prompt's other rows skip it (for
    // GPT-2 small that is most of a 512-token prompt's 40 GFLOP of head).
    if (i + 1 == model_.layers.size() && l.op != Op::kAttention &&
        in[0].size(1) > 1)
      in[0] = in[0].narrow(1, in[0].size(1) - 1, 1);
    if (l.op == Op::kAttention)
      outs[i] = modules_[i].get<Attention>()->forward_cached(
          in[0], cache.k[i], cache.v[i], cache.length, cache.capacity);
    else if (l.op == Op::kPositions)
      outs[i] = modules_[i].get<Positions>()->forward_at(in[0], cache.length);
    else
      outs[i] = run_layer(i, in);
  }
  cache.length += t;
  return outs.back();
}

torch::Tensor NetworkImpl::lstm_forward(size_t i, const torch::Tensor& x) {
  const Layer& l = model_.layers[i];
  auto [seq, state] = lstms_[i]->forward(x);
  if (l.sequences) return seq;
  // Last step of each direction: the final hidden states of the top layer
  // (for the backward direction that is its output at t = 0, as Keras).
  const auto& h = std::get<0>(state);  // [layers * dirs, N, H]
  if (!l.bidirectional) return h[-1];
  return torch::cat({h[-2], h[-1]}, 1);
}

torch::Tensor NetworkImpl::run_layer(size_t i,
                                     const std::vector<torch::Tensor>& in) {
  const Layer& l = model_.layers[i];
  const torch::Tensor& x = in[0];
  switch (l.op) {
    case Op::kMaxPool2d:
      return F::max_pool2d(x,
                           F::MaxPool2dFuncOptions({l.kernel[0], l.kernel[1]})
                               .stride({l.stride[0], l.stride[1]})
                               .padding({l.pad[0], l.pad[1]})
                               .ceil_mode(l.ceil_mode));
    case Op::kAvgPool2d:
      return F::avg_pool2d(x,
                           F::AvgPool2dFuncOptions({l.kernel[0], l.kernel[1]})
                               .stride({l.stride[0], l.stride[1]})
                               .padding({l.pad[0], l.pad[1]})
                               .ceil_mode(l.ceil_mode)
                               .count_include_pad(true));
    case Op::kGlobalAvgPool:
      return x.mean({2, 3});
    case Op::kSeqMean:
      return x.mean(1);
    case Op::kRelu:
      return torch::relu(x);
    case Op::kSigmoid:
      return torch::sigmoid(x);
    case Op::kTanh:
      return torch::tanh(x);
    case Op::kSoftmax:
      return torch::softmax(x, -1);
    case Op::kLrn:
      return F::local_response_norm(
          x,
          F::LocalResponseNormFuncOptions(l.size).alpha(l.alpha).beta(l.beta).k(
              l.k));
    case Op::kFlatten:
      return x.flatten(1);
    case Op::kAdd:
      return in[0] + in[1];
    case Op::kConcat:
      return torch::cat(in, 1);
    case Op::kZeroPadShortcut:
      return zero_pad_shortcut(l, x);
    case Op::kOneHot:
      return torch::one_hot(x, l.vocab).to(float_type_);
    case Op::kLstm:
      return lstm_forward(i, x);
    case Op::kGelu:
      return torch::gelu(x, l.approximate ? "tanh" : "none");
    case Op::kTiedLinear:  // the embedding's table, shared
      return F::linear(x, modules_[l.tied].get<torch::nn::Embedding>()->weight);
    case Op::kSeqFirst:
      return x.select(1, 0);
    default:
      return modules_[i].forward(x);
  }
}

}  // namespace nnbench::engines::torch_backend
