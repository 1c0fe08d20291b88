#include "engines/onednn/graph.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <string>

#include "engines/onednn/infer_passes.h"
#include "model/analysis.h"

namespace nnbench::engines::onednn {
namespace {

using model::Op;

[[noreturn]] void unimplemented(const model::Layer& l, const std::string& why) {
  throw backend::Unimplemented("layer '" + l.name + "' (" +
                               std::string(model::op_name(l.op)) + "): " + why);
}

Dims with_batch(int64_t batch, const model::Shape& s) {
  Dims d{batch};
  d.insert(d.end(), s.begin(), s.end());
  return d;
}

bool has_params(Op op) {
  return op == Op::kConv2d || op == Op::kLinear || op == Op::kBatchNorm ||
         op == Op::kEmbedding || op == Op::kLstm || op == Op::kLayerNorm ||
         op == Op::kPositions || op == Op::kAttention ||
         op == Op::kTiedLinear;  // the embedding's table
}

void dispatch(LayerCtx& c) {
  switch (c.l.op) {
    case Op::kConv2d:
      return build_conv(c);
    case Op::kLinear:
      return c.src().dims.size() == 3 ? build_seq_linear(c) : build_linear(c);
    case Op::kMaxPool2d:
    case Op::kAvgPool2d:
      return build_pool(c);
    case Op::kGlobalAvgPool:
      return build_global_pool(c);
    case Op::kRelu:
    case Op::kSigmoid:
    case Op::kTanh:
      return build_eltwise(c);
    case Op::kSoftmax:
      return build_softmax(c);
    case Op::kBatchNorm:
      return build_batch_norm(c);
    case Op::kLrn:
      return build_lrn(c);
    case Op::kDropout:
      return build_dropout(c);
    case Op::kFlatten:
      return build_flatten(c);
    case Op::kAdd:
      return build_add(c);
    case Op::kConcat:
      return build_concat(c);
    case Op::kZeroPadShortcut:
      return build_zero_pad(c);
    case Op::kEmbedding:
      return build_embedding(c);
    case Op::kOneHot:
      return build_one_hot(c);
    case Op::kSeqMean:
      return build_seq_mean(c);
    case Op::kLstm:
      return build_lstm(c);
    case Op::kGelu:
      return build_eltwise(c);
    case Op::kLayerNorm:
      return build_layer_norm(c);
    case Op::kPositions:
      return build_positions(c);
    case Op::kSeqFirst:
      return build_seq_first(c);
    case Op::kAttention:
      return build_attention(c);
    case Op::kTiedLinear:
      return build_tied_linear(c);
    default:
      unimplemented(c.l, "not implemented by the oneDNN backend");
  }
}

// Runs one builder; oneDNN's errors become the layer's.
void build_layer(LayerCtx& c, Dt dt) {
  c.net.set_layer_name(c.l.name);
  try {
    dispatch(c);
  } catch (const dnnl::error& e) {
    const std::string what = std::string("oneDNN: ") + e.what();
    if (e.status == dnnl_unimplemented)
      unimplemented(c.l, "no oneDNN implementation at " +
                             std::string(dt == Dt::bf16 ? "bf16" : "fp32") +
                             " (" + what + ")");
    if (e.status == dnnl_out_of_memory)
      throw backend::OutOfMemory("layer '" + c.l.name + "': " + what);
    throw std::runtime_error("layer '" + c.l.name + "': " + what);
  }
}

// Gradient bookkeeping for every value: consumers, and whether any
// parameter lies upstream (the model input needs no gradient). An
// inference-only build takes no gradient at all: no backward primitive is
// created (some have only a reference kernel in its layouts) and no
// gradient buffer allocated.
void count_uses(const model::Model& m, Net& net,
                const std::vector<std::vector<int>>& inputs, bool train) {
  for (int i = 0; i < static_cast<int>(m.layers.size()); ++i) {
    bool needs = train && has_params(m.layers[i].op);
    for (int j : inputs[i]) {
      Value& v = net.value(j);
      ++v.consumers;
      if (v.last_consumer >= 0 && v.last_consumer != i)
        v.other_consumer = v.last_consumer;  // inputs come in layer order
      v.last_consumer = i;
      needs = needs || v.needs_grad;
    }
    net.value(i).needs_grad = needs;
  }
}

// out[i]: where layer i writes. A ReLU that alone reads a conv, linear or
// add is fused into it as a post-op, one after a batch norm with the
// fuse_norm_relu flag; in an inference-only build, a GELU that alone reads
// a linear too (a transformer's feed-forward; at int8 its output's level
// applied after it: scale_after_gelu). The activation is then skipped.
std::vector<int> fuse_activations(const model::Model& m, Net& net,
                                  const std::vector<std::vector<int>>& inputs,
                                  const InferPlan* infer,
                                  std::vector<bool>* skip) {
  const bool gelus = infer != nullptr;
  std::vector<int> out(m.layers.size());
  std::iota(out.begin(), out.end(), 0);
  for (int i = 0; i < static_cast<int>(m.layers.size()); ++i) {
    const Op op = m.layers[i].op;
    const bool fusable = op == Op::kConv2d || op == Op::kLinear ||
                         op == Op::kAdd || op == Op::kBatchNorm;
    if (!fusable || net.value(i).consumers != 1) continue;
    const int j = net.value(i).last_consumer;
    const Op act = m.layers[j].op;
    if ((act == Op::kRelu ||
         (gelus && act == Op::kGelu && op == Op::kLinear)) &&
        inputs[j] == std::vector<int>{i}) {
      out[i] = j;
      (*skip)[j] = true;
    }
  }
  return out;
}

}  // namespace

void check_supported(const model::Model& m) {
  const auto shapes = model::infer_shapes(m);
  for (int i = 0; i < static_cast<int>(m.layers.size()); ++i) {
    const model::Layer& l = m.layers[i];
    const int first = model::layer_inputs(m, i)[0];
    const model::Shape& in = first < 0 ? m.input.shape : shapes[first];
    switch (l.op) {
      case Op::kLinear:
        if (in.size() > 2)
          unimplemented(l, "input " + model::shape_str(in) +
                               " per sample; only [F] and [T, F] inputs are "
                               "implemented");
        break;
      case Op::kAvgPool2d:
        check_pool(l, with_batch(1, in), with_batch(1, shapes[i]));
        break;
      case Op::kLrn:
        if (l.size % 2 == 0)
          unimplemented(l, "even size " + std::to_string(l.size) +
                               ": oneDNN centres the window unlike torch");
        break;
      default:
        break;
    }
  }
}

Graph build_graph(const model::Model& m, int64_t batch, Dt dt,
                  const dnnl::engine& eng, ParamStates* params, RunState* state,
                  int state_arrays, const InferPlan* infer) {
  const auto shapes = model::infer_shapes(m);
  const int n = static_cast<int>(m.layers.size());
  Graph g{std::make_unique<Net>(eng, dt, n),
          std::make_unique<ParamStore>(eng, params), nullptr};
  Net& net = *g.net;
  std::vector<std::vector<int>> inputs(n);
  net.value(-1).dims = with_batch(batch, m.input.shape);
  for (int i = 0; i < n; ++i) {
    inputs[i] = model::layer_inputs(m, i);
    net.value(i).dims = with_batch(batch, shapes[i]);
  }
  // A generation build's output head reads the last position only
  // (ops_transformer.cpp: the same condition).
  if (infer != nullptr && infer->kv_capacity > 0 &&
      m.layers.back().op == Op::kTiedLinear)
    net.value(n - 1).dims.at(1) = 1;
  count_uses(m, net, inputs, infer == nullptr);
  std::vector<bool> skip(n, false);
  std::vector<int> out = fuse_activations(m, net, inputs, infer, &skip);
  const InferPasses passes = infer_passes(m, inputs, infer, &out, &skip);
  for (int i = 0; i < n; ++i) {
    if (skip[i]) continue;
    net.value(out[i]).producer = i;
    net.value(out[i]).producer_aliases = m.layers[i].op == Op::kAdd;
  }
  for (int i = 0; i < n; ++i) {
    if (skip[i]) continue;
    LayerCtx c{net,    *g.params,
               *state, m.layers[i],
               i,      inputs[i],
               out[i], out[i] != i && m.layers[out[i]].op == Op::kRelu};
    if (out[i] != i && m.layers[out[i]].op == Op::kGelu) {
      c.gelu = &m.layers[out[i]];
      ++g.fused_gelus;
    }
    c.infer = infer;
    c.model = &m;
    c.int8_out = passes.int8_out[i];
    g.int8_values += c.int8_out;
    if (passes.sum_from[i] != kNoSum) {
      c.sum = true;
      c.sum_from = passes.sum_from[i];
      ++g.fused_adds;
    }
    if (passes.norm_of[i] >= 0) {
      c.norm = &m.layers[passes.norm_of[i]];
      c.norm_index = passes.norm_of[i];
      ++g.folded_norms;
    }
    build_layer(c, dt);
  }
  net.finalize();
  g.params->finalize(net.stream(), state_arrays);
  g.loss = std::make_unique<LossHead>(net, n - 1, m.loss);
  return g;
}

std::string layout_name(const Md& md, const std::string& names) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.format_kind != dnnl_blocked || d.ndims > static_cast<int>(names.size()))
    return "(not blocked)";
  const dnnl_blocking_desc_t& b = d.format_desc.blocking;
  std::vector<int> order(d.ndims);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return b.strides[x] > b.strides[y]; });
  std::string s;
  for (int a : order) {
    const bool blocked =
        std::count(b.inner_idxs, b.inner_idxs + b.inner_nblks, a) > 0;
    s += blocked ? static_cast<char>(std::toupper(names[a])) : names[a];
  }
  for (int k = 0; k < b.inner_nblks; ++k)
    s += std::to_string(b.inner_blks[k]) + names[b.inner_idxs[k]];
  return s;
}

}  // namespace nnbench::engines::onednn
