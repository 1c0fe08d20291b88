// Transformer layers of inference-only builds: layer normalization and the
// projections as oneDNN primitives, attention as two batched matmuls and a
// softmax on strided views of the projected q, k and v (no copies into a
// head-major layout), and, in generation builds, a KV cache per attention
// layer (InferPlan::kv_capacity). Their backward is not implemented:
// graph.cpp refuses them in builds that train.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "engines/onednn/ops.h"
#include "util/error.h"

namespace nnbench::engines::onednn {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;

float* floats(const memory& m) { return static_cast<float*>(m.get_data_handle()); }

// dst [rows, out] = src [rows, in] x W^T + b: an inner product whose
// weights (canonical [out, in]) are stored in the layout it prefers.
void project(LayerCtx& c, const memory& src, const memory& dst, int64_t rows,
             int64_t tokens, int64_t in, int64_t out, const std::string& weight,
             const std::string& bias) {
  Net& net = c.net;
  const Dt dt = net.dt();
  const Md s(Dims{rows, in}, dt, Tag::ab), d(Dims{rows, out}, dt, Tag::ab);
  const Dims w_dims{out, in};
  const Md b = c.l.bias ? Md({out}, Dt::f32, Tag::a) : Md();
  const dnnl::inner_product_forward::primitive_desc pd(
      {prop_kind::forward_inference, s, linear_weights_md(c, w_dims, tokens), b,
       d},
      net.attr(), net.engine());
  const Md canonical(w_dims, Dt::f32, Tag::ab);
  Args args{
      {DNNL_ARG_SRC, fwd_view(net, src, s)},
      {DNNL_ARG_WEIGHTS,
       c.params.add(c.l.name + weight, canonical, pd.weights_desc(), canonical)
           .weights},
      {DNNL_ARG_DST, fwd_view(net, dst, d)}};
  if (c.l.bias)
    args[DNNL_ARG_BIAS] =
        c.params.add(c.l.name + bias, b, pd.bias_desc(), b).weights;
  net.fwd(When::kAlways, dnnl::inner_product_forward(pd), args);
}

// ctx [N, T, H, D] = softmax(Q K^T / sqrt(D) + mask) V for every head, on
// q, k, v read in place from qkv [N, T, 3, H, D].
void attend(LayerCtx& c, const memory& qkv, const memory& ctx, int64_t n,
            int64_t t, int64_t h, int64_t d) {
  Net& net = c.net;
  const Dt dt = net.dt();
  const int64_t f = h * d, row = 3 * f;
  const size_t elem = dt == Dt::bf16 ? 2 : 4;
  const Md q_md({n, h, t, d}, dt, Dims{t * row, d, row, 1});
  const Md kt_md({n, h, d, t}, dt, Dims{t * row, d, 1, row});
  const Md s_md({n, h, t, t}, dt, Tag::abcd);
  const Md ctx_md({n, h, t, d}, dt, Dims{t * f, d, f, 1});
  dnnl::primitive_attr qk_attr = net.attr();
  qk_attr.set_output_scales(0, {1.f / std::sqrt(static_cast<float>(d))});
  const dnnl::matmul::primitive_desc qk({q_md, kt_md, s_md}, qk_attr,
                                        net.engine());
  const memory scores = net.alloc(s_md);
  net.fwd(When::kAlways, dnnl::matmul(qk),
          {{DNNL_ARG_SRC, fwd_view(net, qkv, q_md)},
           {DNNL_ARG_WEIGHTS, fwd_view(net, qkv, kt_md, f * elem)},
           {DNNL_ARG_DST, scores}});
  // The causal mask written over the scores: oneDNN 2.6's optimised matmul
  // takes no [T, T] binary post-op broadcast over batch and heads.
  if (c.l.causal) {
    const int64_t planes = n * h;
    const bool bf16 = dt == Dt::bf16;
    net.fwd(When::kAlways, [=] {
      for (int64_t p = 0; p < planes; ++p)
        for (int64_t i = 0; i + 1 < t; ++i) {
          const int64_t at = (p * t + i) * t + i + 1, count = t - i - 1;
          if (bf16)
            std::fill_n(static_cast<uint16_t*>(scores.get_data_handle()) + at,
                        count, uint16_t{0xFF80});  // bf16's -infinity
          else
            std::fill_n(floats(scores) + at, count,
                        -std::numeric_limits<float>::infinity());
        }
    });
  }
  const dnnl::softmax_forward::primitive_desc sm(
      {prop_kind::forward_inference, s_md, 3}, net.attr(), net.engine());
  net.fwd(When::kAlways, dnnl::softmax_forward(sm),
          {{DNNL_ARG_SRC, scores}, {DNNL_ARG_DST, scores}});
  const dnnl::matmul::primitive_desc pv({s_md, q_md, ctx_md}, net.attr(),
                                        net.engine());
  net.fwd(When::kAlways, dnnl::matmul(pv),
          {{DNNL_ARG_SRC, scores},
           {DNNL_ARG_WEIGHTS, fwd_view(net, qkv, q_md, 2 * f * elem)},
           {DNNL_ARG_DST, fwd_view(net, ctx, ctx_md)}});
}

// The cache of attention layer c.index, [N, H, capacity, D] for k and v.
RunState::Cache* cache_of(LayerCtx& c, int64_t n, int64_t h, int64_t d) {
  RunState::Cache& cache = c.state.caches[c.index];
  const size_t size = static_cast<size_t>(n * h * c.infer->kv_capacity * d);
  // Both builds of a generator (prompt, one token) share it: same size.
  if (cache.k.size() != size) {
    cache.k.assign(size, 0.f);
    cache.v.assign(size, 0.f);
  }
  return &cache;
}

// Writes the k and v of the bound tokens (t per row, at RunState::position)
// from qkv into the cache.
void store_kv(LayerCtx& c, const memory& qkv, RunState::Cache* cache,
              int64_t n, int64_t t, int64_t h, int64_t d) {
  const int64_t cap = c.infer->kv_capacity, f = h * d;
  const RunState* state = &c.state;
  c.net.fwd(When::kAlways, [=] {
    const int64_t at = state->position;
    if (at < 0 || at + t > cap)
      throw Error("oneDNN backend: KV cache of " + std::to_string(cap) +
                  " positions, asked to write " + std::to_string(at) + ".." +
                  std::to_string(at + t));
    const float* x = floats(qkv);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < t; ++i)
        for (int64_t hh = 0; hh < h; ++hh) {
          const float* src = x + (b * t + i) * 3 * f + hh * d;
          const int64_t to = ((b * h + hh) * cap + at + i) * d;
          std::memcpy(cache->k.data() + to, src + f, d * sizeof(float));
          std::memcpy(cache->v.data() + to, src + 2 * f, d * sizeof(float));
        }
  });
}

// One head of one row against the cache: scores of query q over the `seen`
// keys, their softmax (in s), the weighted sum of the values (in o). Built
// for three ISA levels, chosen when loaded, as the engine's kernels are.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
void attend_head(const float* q, const float* k, const float* v, int64_t seen,
                 int64_t d, float scale, float* s, float* o) {
  float top = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < seen; ++j) {
    float dot = 0;
#pragma omp simd reduction(+ : dot)
    for (int64_t e = 0; e < d; ++e) dot += q[e] * k[j * d + e];
    s[j] = dot * scale;
    top = std::max(top, s[j]);
  }
  float sum = 0;
  for (int64_t j = 0; j < seen; ++j) sum += s[j] = std::exp(s[j] - top);
  std::fill_n(o, d, 0.f);
  for (int64_t j = 0; j < seen; ++j) {
    const float w = s[j] / sum;
#pragma omp simd
    for (int64_t e = 0; e < d; ++e) o[e] += w * v[j * d + e];
  }
}

// One new token per row against the cache: each head's query, scores over
// the positions seen so far (causal by construction), their softmax and
// the weighted values. Small next to the projections (heads x seen x D
// multiply-adds twice), so plain loops, a thread per (row, head).
void attend_cached(LayerCtx& c, const memory& qkv, const memory& ctx,
                   RunState::Cache* cache, int64_t n, int64_t h, int64_t d) {
  const int64_t cap = c.infer->kv_capacity, f = h * d;
  const RunState* state = &c.state;
  const float scale = 1.f / std::sqrt(static_cast<float>(d));
  c.net.fwd(When::kAlways, [=] {
    const int64_t seen = state->position + 1;
    const float* x = floats(qkv);
    float* out = floats(ctx);
#pragma omp parallel
    {
      std::vector<float> s(seen);
#pragma omp for collapse(2) schedule(static)
      for (int64_t b = 0; b < n; ++b)
        for (int64_t hh = 0; hh < h; ++hh) {
          const int64_t at = (b * h + hh) * cap * d;
          attend_head(x + b * 3 * f + hh * d, cache->k.data() + at,
                      cache->v.data() + at, seen, d, scale, s.data(),
                      out + b * f + hh * d);
        }
    }
  });
}

}  // namespace

void build_layer_norm(LayerCtx& c) {
  Net& net = c.net;
  const Dt dt = net.dt();
  const Dims& in = c.src().dims;
  const int64_t f = in.back();
  int64_t rows = 1;
  for (size_t k = 0; k + 1 < in.size(); ++k) rows *= in[k];
  const Md md(Dims{rows, f}, dt, Tag::ab);
  const memory x = net.src_as(c.in[0], net.plain(c.in[0], dt));
  net.define(c.out, net.plain(c.out, dt));
  const dnnl::layer_normalization_forward::primitive_desc pd(
      {prop_kind::forward_inference, md, static_cast<float>(c.l.eps),
       dnnl::normalization_flags::use_scale |
           dnnl::normalization_flags::use_shift},
      net.attr(), net.engine());
  const Md vec({f}, Dt::f32, Tag::a);
  net.fwd(When::kAlways, dnnl::layer_normalization_forward(pd),
          {{DNNL_ARG_SRC, fwd_view(net, x, md)},
           {DNNL_ARG_DST, fwd_view(net, c.dst().mem, md)},
           {DNNL_ARG_SCALE,
            c.params.add(c.l.name + ".weight", vec, vec, vec).weights},
           {DNNL_ARG_SHIFT,
            c.params.add(c.l.name + ".bias", vec, vec, vec).weights}});
}

void build_attention(LayerCtx& c) {
  Net& net = c.net;
  const Dims& in = c.src().dims;  // [N, T, F]
  const int64_t n = in[0], t = in[1], f = in[2], h = c.l.heads, d = f / h;
  const bool cached = c.infer->kv_capacity > 0;
  if (cached && net.dt() != Dt::f32)
    throw backend::Unimplemented("layer '" + c.l.name +
                                 "' (attention): a KV cache at bf16");
  const memory x = net.src_as(c.in[0], net.plain(c.in[0], net.dt()));
  net.define(c.out, net.plain(c.out, net.dt()));
  const memory qkv = net.alloc(Md({n * t, 3 * f}, net.dt(), Tag::ab));
  const memory ctx = net.alloc(Md({n * t, f}, net.dt(), Tag::ab));
  if (c.infer->int8)
    net.note("fp32_in_int8 " + c.l.name, c.l.name + " (attention)");
  project(c, x, qkv, n * t, t, f, 3 * f, ".in_weight", ".in_bias");
  if (!cached) {
    attend(c, qkv, ctx, n, t, h, d);
  } else {
    RunState::Cache* cache = cache_of(c, n, h, d);
    store_kv(c, qkv, cache, n, t, h, d);
    // A prompt starts at position 0, so its own keys are all there are.
    if (t > 1)
      attend(c, qkv, ctx, n, t, h, d);
    else
      attend_cached(c, qkv, ctx, cache, n, h, d);
  }
  project(c, ctx, c.dst().mem, n * t, t, f, f, ".out_weight", ".out_bias");
}

void build_tied_linear(LayerCtx& c) {
  Net& net = c.net;
  const Dt dt = net.dt();
  const Dims& in = c.src().dims;  // [N, T, F]
  const model::Layer& table = c.model->layers.at(c.l.tied);
  const int64_t n = in[0], t = in[1], f = in[2], vocab = table.vocab;
  // Generation reads the last position's logits only.
  const bool last = c.infer->kv_capacity > 0;
  const int64_t rows = last ? n : n * t;
  const memory x = net.src_as(c.in[0], net.plain(c.in[0], dt));
  memory src = x;
  if (last) {
    const size_t elem = dt == Dt::bf16 ? 2 : 4;
    src = net.alloc(Md({n, f}, dt, Tag::ab));
    const memory from = fwd_view(net, x, Md({n, f}, dt, Dims{t * f, 1}),
                                 (t - 1) * f * elem);
    net.fwd(When::kAlways, make_reorder(from, src),
            {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, src}});
  }
  net.define(c.out, net.plain(c.out, dt));
  const Md s(Dims{rows, f}, dt, Tag::ab), d(Dims{rows, vocab}, dt, Tag::ab);
  // The embedding's own table, in the layout the embedding reads.
  const Md w(Dims{vocab, f}, dt, Tag::ab);
  const dnnl::inner_product_forward::primitive_desc pd(
      {prop_kind::forward_inference, s, w, Md(), d}, net.attr(), net.engine());
  net.fwd(When::kAlways, dnnl::inner_product_forward(pd),
          {{DNNL_ARG_SRC, fwd_view(net, src, s)},
           {DNNL_ARG_WEIGHTS, c.params.shared(table.name + ".weight", w)},
           {DNNL_ARG_DST, fwd_view(net, c.dst().mem, d)}});
}

}  // namespace nnbench::engines::onednn
