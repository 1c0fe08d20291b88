// Multi-head self-attention: the projections as inner products (in
// inference builds oneDNN's brgemm matmul where it has one: matmul_rows,
// or the matrix-vector loop for a token's rows), the core
// as two batched matmuls and a softmax on strided views of the projected
// q, k and v (qkv [N, T, 3, H, D]: no copies into a head-major layout),
// its backward as matmuls on the same views; in generation builds a KV
// cache (InferPlan::kv_capacity) and, for one new token, plain loops.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "engines/onednn/bf16.h"
#include "engines/onednn/ops.h"
#include "util/error.h"

namespace nnbench::engines::onednn {
namespace {

using dnnl::prop_kind;
using Matmul = dnnl::matmul::primitive_desc;

float* floats(const memory& m) {
  return static_cast<float*>(m.get_data_handle());
}

// dst [rows, out] = src [rows, in] x W^T + b on plain buffers, W canonical
// [out, in] stored in the layout the primitive that runs it prefers (or
// plain for the matrix-vector loop); with an int8 plan, quantized from
// `int8_range`, src's calibrated range.
class Projection {
 public:
  Projection(LayerCtx& c, const memory& src, const memory& dst, int64_t rows,
             int64_t tokens, int64_t in, int64_t out, const std::string& name,
             const Range* int8_range = nullptr)
      : src_(src),
        s_(Dims{rows, in}, c.net.dt(), Tag::ab),
        d_(Dims{rows, out}, c.net.dt(), Tag::ab),
        w_dims_{out, in} {
    Net& net = c.net;
    if (int8_range != nullptr) {
      RowsInt8 r;
      r.src_mem = src;
      r.src_range = *int8_range;
      r.weight = c.l.name + "." + name + "_weight";
      if (c.l.bias) r.bias = c.l.name + "." + name + "_bias";
      r.rows = rows;
      r.in = in;
      r.out = out;
      r.dst = dst;
      linear_rows_int8(c, r);
      return;
    }
    const bool train = c.infer == nullptr;
    if (!train && !gemv_rows(c, tokens)) {
      RowsLinear r;
      r.x = src;
      r.y = dst;
      r.rows = rows;
      r.in = in;
      r.out = out;
      r.weight = c.l.name + "." + name + "_weight";
      if (c.l.bias) r.bias = c.l.name + "." + name + "_bias";
      if (matmul_rows(c, r)) return;
    }
    const Md b = c.l.bias ? Md({out}, Dt::f32, Tag::a) : Md();
    pd_ = dnnl::inner_product_forward::primitive_desc(
        {train ? prop_kind::forward_training : prop_kind::forward_inference, s_,
         linear_weights_md(c, w_dims_, tokens), b, d_},
        net.attr(), net.engine());
    const Md canonical(w_dims_, Dt::f32, Tag::ab);
    Md w_grad = canonical, b_grad = b;
    if (train) {
      // The weight gradient in the forward's layout where it is fp32: the
      // forward then reads the master weights.
      pw_ = prefer_given_layouts([&](bool given) {
        const bool same = given && pd_.weights_desc().data_type() == Dt::f32;
        return dnnl::inner_product_backward_weights::primitive_desc(
            {s_, same ? pd_.weights_desc() : any_md(w_dims_, Dt::f32), b, d_},
            net.attr(), net.engine(), pd_);
      });
      w_grad = pw_.diff_weights_desc();
      if (c.l.bias) b_grad = pw_.diff_bias_desc();
    }
    w_ = c.params.add(c.l.name + "." + name + "_weight", canonical,
                      pd_.weights_desc(), w_grad);
    if (c.l.bias)
      b_ = c.params.add(c.l.name + "." + name + "_bias", b, pd_.bias_desc(),
                        b_grad);
    if (gemv_rows(c, tokens)) {
      Gemv g{src, w_.weights, b_.weights, dst, rows, in, out};
      g.int8_from = int8_weights_of(c, c.l.name + "." + name + "_weight");
      g.int8_pages = &c.params.int8_pages();
      gemv_step(net, g);
      return;
    }
    Args args{{DNNL_ARG_SRC, fwd_view(net, src, s_)},
              {DNNL_ARG_WEIGHTS, w_.weights},
              {DNNL_ARG_DST, fwd_view(net, dst, d_)}};
    if (c.l.bias) args[DNNL_ARG_BIAS] = b_.weights;
    net.fwd(When::kAlways, dnnl::inner_product_forward(pd_), args);
  }

  // The weight (and bias) gradients from diff_dst; diff_src, where given,
  // gets diff_dst x W.
  void backward(Net& net, const memory& diff_dst,
                const memory* diff_src) const {
    Args bwd_w{{DNNL_ARG_SRC, bwd_view(net, src_, s_)},
               {DNNL_ARG_DIFF_DST, bwd_view(net, diff_dst, d_)},
               {DNNL_ARG_DIFF_WEIGHTS, w_.grad}};
    if (b_.grad) bwd_w[DNNL_ARG_DIFF_BIAS] = b_.grad;
    net.bwd(dnnl::inner_product_backward_weights(pw_), bwd_w);
    if (diff_src == nullptr) return;
    // As a matmul, faster than oneDNN 2.6's inner product backward-data
    // (ops_seq_linear.cpp).
    const Matmul pd({d_, any_md(w_dims_, net.dt()), s_}, net.attr(),
                    net.engine());
    net.bwd(dnnl::matmul(pd),
            {{DNNL_ARG_SRC, bwd_view(net, diff_dst, d_)},
             {DNNL_ARG_WEIGHTS, net.bwd_as(w_.weights, pd.weights_desc())},
             {DNNL_ARG_DST, bwd_view(net, *diff_src, s_)}});
  }

 private:
  memory src_;
  Md s_, d_;
  Dims w_dims_;
  dnnl::inner_product_forward::primitive_desc pd_;
  dnnl::inner_product_backward_weights::primitive_desc pw_;
  ParamStore::Ref w_, b_;
};

// Views of one head-split tensor: [N, H, T, D] over a buffer of rows of
// `row` elements (qkv: 3F, a context: F), `at` elements into each row, and
// the same transposed ([N, H, D, T]).
struct Heads {
  int64_t n, h, t, d;
  Md split(Dt dt, int64_t row) const {
    return Md({n, h, t, d}, dt, Dims{t * row, d, row, 1});
  }
  Md split_t(Dt dt, int64_t row) const {
    return Md({n, h, d, t}, dt, Dims{t * row, d, 1, row});
  }
  // Scores [N, H, T, T], plain, and the same transposed.
  Md scores(Dt dt) const { return Md({n, h, t, t}, dt, Tag::abcd); }
  Md scores_t(Dt dt) const {
    return Md({n, h, t, t}, dt, Dims{h * t * t, t * t, 1, t});
  }
};

size_t elem(Dt dt) { return dt == Dt::bf16 ? 2 : 4; }

dnnl::primitive_attr scaled(const Net& net, float scale) {
  dnnl::primitive_attr a = net.attr();
  a.set_output_scales(0, {scale});
  return a;
}

// The causal mask written over the scores: oneDNN 2.6's optimised matmul
// takes no [T, T] binary post-op broadcast over batch and heads.
void mask_later(Net& net, const memory& scores, const Heads& x) {
  const int64_t planes = x.n * x.h, t = x.t;
  const bool bf16 = net.dt() == Dt::bf16;
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

// probs = softmax(Q K^T / sqrt(D), causal where asked), ctx = probs V for
// every head, on q, k, v read in place from qkv.
void attend(LayerCtx& c, const memory& qkv, const memory& probs,
            const memory& ctx, const Heads& x) {
  Net& net = c.net;
  const Dt dt = net.dt();
  const int64_t f = x.h * x.d, row = 3 * f;
  const Matmul qk({x.split(dt, row), x.split_t(dt, row), x.scores(dt)},
                  scaled(net, 1.f / std::sqrt(static_cast<float>(x.d))),
                  net.engine());
  net.fwd(
      When::kAlways, dnnl::matmul(qk),
      {{DNNL_ARG_SRC, fwd_view(net, qkv, x.split(dt, row))},
       {DNNL_ARG_WEIGHTS, fwd_view(net, qkv, x.split_t(dt, row), f * elem(dt))},
       {DNNL_ARG_DST, probs}});
  if (c.l.causal) mask_later(net, probs, x);
  const dnnl::softmax_forward::primitive_desc sm(
      {c.infer ? prop_kind::forward_inference : prop_kind::forward_training,
       x.scores(dt), 3},
      net.attr(), net.engine());
  net.fwd(When::kAlways, dnnl::softmax_forward(sm),
          {{DNNL_ARG_SRC, probs}, {DNNL_ARG_DST, probs}});
  const Matmul pv({x.scores(dt), x.split(dt, row), x.split(dt, f)}, net.attr(),
                  net.engine());
  net.fwd(When::kAlways, dnnl::matmul(pv),
          {{DNNL_ARG_SRC, probs},
           {DNNL_ARG_WEIGHTS,
            fwd_view(net, qkv, x.split(dt, row), 2 * f * elem(dt))},
           {DNNL_ARG_DST, fwd_view(net, ctx, x.split(dt, f))}});
}

template <typename T>
void softmax_rows(const T* p, const T* dp, T* ds, int64_t rows, int64_t t) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const T *pr = p + r * t, *dr = dp + r * t;
    float dot = 0;
    for (int64_t j = 0; j < t; ++j) dot += load(pr, j) * load(dr, j);
    for (int64_t j = 0; j < t; ++j)
      store(ds + r * t, j, load(pr, j) * (load(dr, j) - dot));
  }
}

// dS = P (dP - rowsum(P dP)) over each row of T scores, by hand: oneDNN
// 2.6 has no optimised softmax backward below AVX-512 (ref:any capped to
// AVX2), and this is small next to the matmuls around it.
void softmax_backward(Net& net, const memory& probs, const memory& d_probs,
                      const memory& d_scores, int64_t rows, int64_t t) {
  const bool bf16 = net.dt() == Dt::bf16;
  net.bwd([=] {
    if (bf16)
      softmax_rows(static_cast<const uint16_t*>(probs.get_data_handle()),
                   static_cast<const uint16_t*>(d_probs.get_data_handle()),
                   static_cast<uint16_t*>(d_scores.get_data_handle()), rows, t);
    else
      softmax_rows(floats(probs), floats(d_probs), floats(d_scores), rows, t);
  });
}

// The core's backward: from the context's gradient to q's, k's and v's,
// written into their places in d_qkv. With S = Q K^T / sqrt(D) and
// P = softmax(S): dP = dC V^T, dV = P^T dC, dS = P (dP - rowsum(P dP)),
// dQ = dS K / sqrt(D), dK = dS^T Q / sqrt(D). Masked scores have P = 0,
// so their dS is 0.
void attend_backward(LayerCtx& c, const memory& qkv, const memory& probs,
                     const memory& d_ctx, const memory& d_qkv, const Heads& x) {
  Net& net = c.net;
  const Dt dt = net.dt();
  const int64_t f = x.h * x.d, row = 3 * f;
  const size_t k_at = f * elem(dt), v_at = 2 * f * elem(dt);
  const memory d_probs = net.alloc(x.scores(dt));
  const Matmul dp({x.split(dt, f), x.split_t(dt, row), x.scores(dt)},
                  net.attr(), net.engine());
  net.bwd(dnnl::matmul(dp),
          {{DNNL_ARG_SRC, bwd_view(net, d_ctx, x.split(dt, f))},
           {DNNL_ARG_WEIGHTS, bwd_view(net, qkv, x.split_t(dt, row), v_at)},
           {DNNL_ARG_DST, d_probs}});
  const Matmul dv({x.scores_t(dt), x.split(dt, f), x.split(dt, row)},
                  net.attr(), net.engine());
  net.bwd(dnnl::matmul(dv),
          {{DNNL_ARG_SRC, bwd_view(net, probs, x.scores_t(dt))},
           {DNNL_ARG_WEIGHTS, bwd_view(net, d_ctx, x.split(dt, f))},
           {DNNL_ARG_DST, bwd_view(net, d_qkv, x.split(dt, row), v_at)}});
  const memory d_scores = net.alloc(x.scores(dt));
  softmax_backward(net, probs, d_probs, d_scores, x.n * x.h * x.t, x.t);
  const auto scale = scaled(net, 1.f / std::sqrt(static_cast<float>(x.d)));
  const Matmul dq({x.scores(dt), x.split(dt, row), x.split(dt, row)}, scale,
                  net.engine());
  net.bwd(dnnl::matmul(dq),
          {{DNNL_ARG_SRC, d_scores},
           {DNNL_ARG_WEIGHTS, bwd_view(net, qkv, x.split(dt, row), k_at)},
           {DNNL_ARG_DST, bwd_view(net, d_qkv, x.split(dt, row))}});
  const Matmul dk({x.scores_t(dt), x.split(dt, row), x.split(dt, row)}, scale,
                  net.engine());
  net.bwd(dnnl::matmul(dk),
          {{DNNL_ARG_SRC, bwd_view(net, d_scores, x.scores_t(dt))},
           {DNNL_ARG_WEIGHTS, bwd_view(net, qkv, x.split(dt, row))},
           {DNNL_ARG_DST, bwd_view(net, d_qkv, x.split(dt, row), k_at)}});
}

// The cache of attention layer c.index, [N, H, capacity, D] for k and v.
RunState::Cache* cache_of(LayerCtx& c, const Heads& x) {
  RunState::Cache& cache = c.state.caches[c.index];
  const auto size = static_cast<size_t>(x.n * x.h * c.infer->kv_capacity * x.d);
  // Both builds of a generator (prompt, one token) share it: same size.
  if (cache.k.size() != size) {
    cache.k.assign(size, 0.f);
    cache.v.assign(size, 0.f);
  }
  return &cache;
}

// Writes the k and v of the bound tokens (t per row, at RunState::position)
// from qkv (fp32 or bf16) into the cache, which is fp32 either way: the
// attention over it (attend_head) then has one form for every precision.
// A long cache costs reads at bf16 and int8 (docs/generation.md).
void store_kv(LayerCtx& c, const memory& qkv, RunState::Cache* cache,
              const Heads& x) {
  const int64_t cap = c.infer->kv_capacity, f = x.h * x.d;
  const RunState* state = &c.state;
  const bool bf16 = c.net.dt() == Dt::bf16;
  c.net.fwd(When::kAlways, [=] {
    const int64_t at = state->position, t = x.t, d = x.d;
    if (at < 0 || at + t > cap)
      throw Error("oneDNN backend: KV cache of " + std::to_string(cap) +
                  " positions, asked to write " + std::to_string(at) + ".." +
                  std::to_string(at + t));
    for (int64_t b = 0; b < x.n; ++b)
      for (int64_t i = 0; i < t; ++i)
        for (int64_t hh = 0; hh < x.h; ++hh) {
          const int64_t from = (b * t + i) * 3 * f + hh * d;
          float* k = cache->k.data() + ((b * x.h + hh) * cap + at + i) * d;
          float* v = cache->v.data() + ((b * x.h + hh) * cap + at + i) * d;
          if (bf16) {
            const auto* q = static_cast<const uint16_t*>(qkv.get_data_handle());
            widen_all(q + from + f, k, d);
            widen_all(q + from + 2 * f, v, d);
          } else {
            const float* q = floats(qkv);
            std::memcpy(k, q + from + f, d * sizeof(float));
            std::memcpy(v, q + from + 2 * f, d * sizeof(float));
          }
        }
  });
}

// One head of one row against the cache: scores of query q over the `seen`
// keys, their softmax (in s), the weighted sum of the values (in o). GCC
// builds it for three ISA levels and picks one by the CPU at load time.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3",
                             "default"))) void
attend_head(const float* q, const float* k, const float* v, int64_t seen,
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
// multiply-adds twice), so plain loops, a thread per (row, head); at bf16
// the queries are widened and the context narrowed around them.
void attend_cached(LayerCtx& c, const memory& qkv, const memory& ctx,
                   RunState::Cache* cache, const Heads& x) {
  const int64_t cap = c.infer->kv_capacity, f = x.h * x.d;
  const RunState* state = &c.state;
  const float scale = 1.f / std::sqrt(static_cast<float>(x.d));
  const bool bf16 = c.net.dt() == Dt::bf16;
  // fp32 copies of the rows' q and context at bf16, made at build time.
  auto wide = std::make_shared<std::vector<float>>(
      bf16 ? static_cast<size_t>(x.n * 4 * f) : 0);
  c.net.fwd(When::kAlways, [=] {
    const int64_t seen = state->position + 1, d = x.d;
    const float* q = bf16 ? wide->data() : floats(qkv);
    float* out = bf16 ? wide->data() + x.n * 3 * f : floats(ctx);
    if (bf16)
      widen_all(static_cast<const uint16_t*>(qkv.get_data_handle()),
                wide->data(), x.n * 3 * f);
    // Each thread's scores, allocated here: an allocation failing inside
    // the parallel region would end the process instead of the run.
    const int threads = omp_get_max_threads();
    std::vector<float> scratch(static_cast<size_t>(threads * seen));
#pragma omp parallel num_threads(threads)
    {
      float* s = scratch.data() + omp_get_thread_num() * seen;
#pragma omp for collapse(2) schedule(static)
      for (int64_t b = 0; b < x.n; ++b)
        for (int64_t hh = 0; hh < x.h; ++hh) {
          const int64_t at = (b * x.h + hh) * cap * d;
          attend_head(q + b * 3 * f + hh * d, cache->k.data() + at,
                      cache->v.data() + at, seen, d, scale, s,
                      out + b * f + hh * d);
        }
    }
    if (bf16)
      narrow_all(out, static_cast<uint16_t*>(ctx.get_data_handle()), x.n * f);
  });
}

}  // namespace

void build_attention(LayerCtx& c) {
  Net& net = c.net;
  const Dt dt = net.dt();
  const Dims& in = c.src().dims;  // [N, T, F]
  const Heads x{in[0], c.l.heads, in[1], in[2] / c.l.heads};
  const int64_t n = x.n, t = x.t, f = in[2];
  const bool cached = c.infer != nullptr && c.infer->kv_capacity > 0;
  const memory src = net.src_as(c.in[0], net.plain(c.in[0], dt));
  net.define(c.out, net.plain(c.out, dt));
  const memory qkv = net.alloc(Md({n * t, 3 * f}, dt, Tag::ab));
  const memory ctx = net.alloc(Md({n * t, f}, dt, Tag::ab));
  // int8: both projections quantized like linears, the output one from
  // the heads' context's range, which calibration records inside this
  // layer (InferPlan::observe); the scores, softmax and weighted sum stay
  // fp32.
  const std::string ctx_key = c.l.name + ".ctx";
  const bool int8 = c.infer != nullptr && c.infer->int8;
  if (int8)
    net.note("fp32_in_int8 " + c.l.name,
             c.l.name + " (attention's scores, softmax and weighted sum)");
  const Projection in_proj(c, src, qkv, n * t, t, f, 3 * f, "in",
                           int8 ? &c.infer->ranges.at(c.in[0]) : nullptr);
  memory probs;
  if (!cached) {
    probs = net.alloc(x.scores(dt));
    attend(c, qkv, probs, ctx, x);
  } else {
    RunState::Cache* cache = cache_of(c, x);
    store_kv(c, qkv, cache, x);
    // A prompt starts at position 0, so its own keys are all there are.
    if (t > 1) {
      probs = net.alloc(x.scores(dt));
      attend(c, qkv, probs, ctx, x);
    } else {
      attend_cached(c, qkv, ctx, cache, x);
    }
  }
  if (c.infer != nullptr && c.infer->observe != nullptr) {
    Range* seen =
        &c.infer->observe->try_emplace(ctx_key, kNoRange).first->second;
    net.fwd(When::kAlways, [ctx, seen] { widen(*seen, ctx); });
  }
  const Projection out_proj(c, ctx, c.dst().mem, n * t, t, f, f, "out",
                            int8 ? &c.infer->inner.at(ctx_key) : nullptr);
  if (c.infer != nullptr) return;

  net.begin_layer(c.index);
  const memory d_ctx = net.alloc(ctx.get_desc());
  out_proj.backward(net, diff_dst_of(c, net.plain(c.out, dt)), &d_ctx);
  const memory d_qkv = net.alloc(qkv.get_desc());
  attend_backward(c, qkv, probs, d_ctx, d_qkv, x);
  if (!c.src_needs_grad()) {
    in_proj.backward(net, d_qkv, nullptr);
    return;
  }
  const memory d_src = net.grad_out(c.in[0], net.plain(c.in[0], dt));
  in_proj.backward(net, d_qkv, &d_src);
  net.grad_commit(c.in[0], d_src);
}

}  // namespace nnbench::engines::onednn
