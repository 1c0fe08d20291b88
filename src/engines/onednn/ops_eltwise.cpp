// Elementwise activations, softmax and dropout.
#include <algorithm>
#include <cstring>

#include "engines/onednn/bf16.h"
#include "engines/onednn/ops.h"

namespace nnbench::engines::onednn {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;

// The *_use_dst_for_bwd variants compute the same forward; their backward
// needs only the output, so the input need not stay valid.
algorithm eltwise_algorithm(const model::Layer& l) {
  switch (l.op) {
    case model::Op::kGelu:  // no *_use_dst_for_bwd form: backward reads src
      return gelu_algorithm(l);
    case model::Op::kSigmoid:
      return algorithm::eltwise_logistic_use_dst_for_bwd;
    case model::Op::kTanh:
      return algorithm::eltwise_tanh_use_dst_for_bwd;
    default:
      return algorithm::eltwise_relu_use_dst_for_bwd;
  }
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Inverted dropout: each element kept with probability 1-p and scaled by
// 1/(1-p). Counter-based draws, reproducible from (seed, layer, step); each
// 64-bit draw decides four elements with 16 bits each (p is resolved to
// 1/65536), which keeps this serial loop cheap next to the primitives.
template <typename T>
void fill_mask(T* mask, size_t n, double p, uint64_t key, T keep, T drop) {
  const auto threshold = static_cast<uint32_t>(p * 65536.0 + 0.5);
  // Indexing by the comparison keeps the loop free of unpredictable branches.
  const T value[2] = {drop, keep};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const uint64_t bits = splitmix64(key + i / 4);
    for (size_t j = 0; j < 4; ++j)
      mask[i + j] = value[((bits >> (16 * j)) & 0xFFFF) >= threshold];
  }
  const uint64_t bits = splitmix64(key + i / 4);
  for (size_t j = 0; i + j < n; ++j)
    mask[i + j] = value[((bits >> (16 * j)) & 0xFFFF) >= threshold];
}

void draw_mask(const memory& mask, double p, uint64_t key) {
  const Md md = mask.get_desc();
  const float scale = static_cast<float>(1.0 / (1.0 - p));
  void* data = mask.get_data_handle();
  if (md.data_type() == Dt::bf16)
    fill_mask(static_cast<uint16_t*>(data), md.get_size() / 2, p, key,
              to_bf16(scale), uint16_t{0});
  else
    fill_mask(static_cast<float*>(data), md.get_size() / 4, p, key, scale, 0.f);
}

}  // namespace

void append_activation(const LayerCtx& c, dnnl::post_ops& po) {
  if (c.fuse_relu) po.append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f);
  if (c.gelu != nullptr) po.append_eltwise(1.f, gelu_algorithm(*c.gelu), 0, 0);
}

void build_eltwise(LayerCtx& c) {
  Net& net = c.net;
  const algorithm alg = eltwise_algorithm(c.l);
  const Md md = net.md_or_plain(c.in[0]);
  const dnnl::eltwise_forward::primitive_desc pd(
      {prop_kind::forward_training, alg, md, 0.f, 0.f}, net.attr(),
      net.engine());
  const memory src = net.src_as(c.in[0], pd.src_desc());
  net.define(c.out, pd.dst_desc());
  net.fwd(When::kAlways, dnnl::eltwise_forward(pd),
          {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, c.dst().mem}});
  if (!c.src_needs_grad()) return;
  net.begin_layer(c.index);
  const dnnl::eltwise_backward::primitive_desc pb(
      {alg, pd.dst_desc(), pd.dst_desc(), 0.f, 0.f}, net.attr(), net.engine(),
      pd);
  const memory diff_src = net.grad_out(c.in[0], pb.diff_src_desc());
  // GELU's backward reads its input, the others their output.
  const bool reads_src = c.l.op == model::Op::kGelu;
  net.bwd(
      dnnl::eltwise_backward(pb),
      {{reads_src ? DNNL_ARG_SRC : DNNL_ARG_DST, reads_src ? src : c.dst().mem},
       {DNNL_ARG_DIFF_DST, net.bwd_as(c.dst().diff, pb.diff_dst_desc())},
       {DNNL_ARG_DIFF_SRC, diff_src}});
  net.grad_commit(c.in[0], diff_src);
}

void build_softmax(LayerCtx& c) {
  Net& net = c.net;
  const Md md = net.md_or_plain(c.in[0]);
  const int axis = static_cast<int>(c.src().dims.size()) - 1;
  const dnnl::softmax_forward::primitive_desc pd(
      {prop_kind::forward_training, md, axis}, net.attr(), net.engine());
  net.define(c.out, pd.dst_desc());
  net.fwd(When::kAlways, dnnl::softmax_forward(pd),
          {{DNNL_ARG_SRC, net.src_as(c.in[0], pd.src_desc())},
           {DNNL_ARG_DST, c.dst().mem}});
  if (!c.src_needs_grad()) return;
  net.begin_layer(c.index);
  const dnnl::softmax_backward::primitive_desc pb(
      {pd.dst_desc(), pd.dst_desc(), axis}, net.attr(), net.engine(), pd);
  const memory diff_src = net.grad_out(c.in[0], pb.diff_src_desc());
  net.bwd(dnnl::softmax_backward(pb),
          {{DNNL_ARG_DST, c.dst().mem},
           {DNNL_ARG_DIFF_DST, net.bwd_as(c.dst().diff, pb.diff_dst_desc())},
           {DNNL_ARG_DIFF_SRC, diff_src}});
  net.grad_commit(c.in[0], diff_src);
}

void build_dropout(LayerCtx& c) {
  Net& net = c.net;
  const Md md = net.md_or_plain(c.in[0]);
  const memory src = net.src_as(c.in[0], md);
  net.define(c.out, md);
  const memory dst = c.dst().mem;
  const memory mask = net.alloc(md);
  const double p = c.l.p;
  if (p == 0) draw_mask(mask, p, 0);  // all kept: draw once
  const dnnl::binary::primitive_desc pd({algorithm::binary_mul, md, md, md},
                                        net.attr(), net.engine());
  const dnnl::binary mul(pd);
  if (p > 0) {
    const uint64_t layer_key =
        splitmix64(c.state.seed) ^ (static_cast<uint64_t>(c.index) << 48);
    RunState* state = &c.state;
    net.fwd(When::kTrain, [mask, p, layer_key, state] {
      draw_mask(mask, p, splitmix64(layer_key + state->steps));
    });
  }
  net.fwd(When::kTrain, mul,
          {{DNNL_ARG_SRC_0, src}, {DNNL_ARG_SRC_1, mask}, {DNNL_ARG_DST, dst}});
  // Inference: identity.
  net.fwd(When::kInfer, make_reorder(src, dst),
          {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}});
  if (!c.src_needs_grad()) return;
  net.begin_layer(c.index);
  const memory diff_src = net.grad_out(c.in[0], md);
  net.bwd(mul, {{DNNL_ARG_SRC_0, c.dst().diff},
                {DNNL_ARG_SRC_1, mask},
                {DNNL_ARG_DST, diff_src}});
  net.grad_commit(c.in[0], diff_src);
}

}  // namespace nnbench::engines::onednn
