// Layer normalization and the tied output layer of a transformer, forward
// and backward (attention: ops_attention.cpp; positions and the first
// position: ops_token.cpp).
#include <string>

#include "engines/onednn/ops.h"

namespace nnbench::engines::onednn {
using dnnl::prop_kind;

void build_layer_norm(LayerCtx& c) {
  Net& net = c.net;
  const Dt dt = net.dt();
  const bool train = c.infer == nullptr;
  const Dims& in = c.src().dims;
  const int64_t f = in.back();
  int64_t rows = 1;
  for (size_t k = 0; k + 1 < in.size(); ++k) rows *= in[k];
  const Md md(Dims{rows, f}, dt, Tag::ab);
  const memory x = net.src_as(c.in[0], net.plain(c.in[0], dt));
  net.define(c.out, net.plain(c.out, dt));
  const float eps = static_cast<float>(c.l.eps);
  const auto flags = dnnl::normalization_flags::use_scale |
                     dnnl::normalization_flags::use_shift;
  const dnnl::layer_normalization_forward::primitive_desc pd(
      {train ? prop_kind::forward_training : prop_kind::forward_inference, md,
       eps, flags},
      net.attr(), net.engine());
  const Md vec({f}, Dt::f32, Tag::a);
  const auto scale = c.params.add(c.l.name + ".weight", vec, vec, vec);
  const auto shift = c.params.add(c.l.name + ".bias", vec, vec, vec);
  Args fwd{{DNNL_ARG_SRC, fwd_view(net, x, md)},
           {DNNL_ARG_DST, fwd_view(net, c.dst().mem, md)},
           {DNNL_ARG_SCALE, scale.weights},
           {DNNL_ARG_SHIFT, shift.weights}};
  if (!train) {
    net.fwd(When::kAlways, dnnl::layer_normalization_forward(pd), fwd);
    return;
  }
  const memory mean = net.alloc(pd.mean_desc()),
               var = net.alloc(pd.variance_desc());
  fwd[DNNL_ARG_MEAN] = mean;
  fwd[DNNL_ARG_VARIANCE] = var;
  net.fwd(When::kAlways, dnnl::layer_normalization_forward(pd), fwd);

  net.begin_layer(c.index);
  const dnnl::layer_normalization_backward::primitive_desc pb(
      {prop_kind::backward, md, md, eps, flags}, net.attr(), net.engine(), pd);
  const Md plain = net.plain(c.in[0], dt);
  const bool needs = c.src_needs_grad();
  const memory diff_src =
      needs ? net.grad_out(c.in[0], plain) : net.alloc(plain);
  net.bwd(dnnl::layer_normalization_backward(pb),
          {{DNNL_ARG_SRC, bwd_view(net, x, md)},
           {DNNL_ARG_MEAN, mean},
           {DNNL_ARG_VARIANCE, var},
           {DNNL_ARG_DIFF_DST,
            bwd_view(net, diff_dst_of(c, net.plain(c.out, dt)), md)},
           {DNNL_ARG_SCALE, scale.weights},
           {DNNL_ARG_SHIFT, shift.weights},
           {DNNL_ARG_DIFF_SRC, bwd_view(net, diff_src, md)},
           {DNNL_ARG_DIFF_SCALE, scale.grad},
           {DNNL_ARG_DIFF_SHIFT, shift.grad}});
  if (needs) net.grad_commit(c.in[0], diff_src);
}

void build_tied_linear(LayerCtx& c) {
  Net& net = c.net;
  const Dt dt = net.dt();
  const bool train = c.infer == nullptr;
  const Dims& in = c.src().dims;  // [N, T, F]
  const model::Layer& table = c.model->layers.at(c.l.tied);
  const int64_t n = in[0], t = in[1], f = in[2], vocab = table.vocab;
  // Generation reads the last position's logits only, where nothing comes
  // after this layer (graph.cpp sizes the output so).
  const bool last = !train && c.infer->kv_capacity > 0 &&
                    c.index + 1 == static_cast<int>(c.model->layers.size());
  const int64_t rows = last ? n : n * t;
  const memory x = net.src_as(c.in[0], net.plain(c.in[0], dt));
  memory src = x;
  if (last) {
    const size_t elem = dt == Dt::bf16 ? 2 : 4;
    src = net.alloc(Md({n, f}, dt, Tag::ab));
    const memory from =
        fwd_view(net, x, Md({n, f}, dt, Dims{t * f, 1}), (t - 1) * f * elem);
    net.fwd(When::kAlways, make_reorder(from, src),
            {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, src}});
  }
  net.define(c.out, net.plain(c.out, dt));
  const std::string name = table.name + ".weight";
  if (c.infer != nullptr && c.infer->int8) {
    // Quantized like a linear, its s8 copy of the table its own.
    RowsInt8 r;
    r.src = c.in[0];
    r.weight = name;
    r.rows = rows;
    r.in = f;
    r.out = vocab;
    r.dst = c.dst().mem;
    if (last) throw std::logic_error("int8 generation build at " + c.l.name);
    return linear_rows_int8(c, r);
  }
  const Md s(Dims{rows, f}, dt, Tag::ab), d(Dims{rows, vocab}, dt, Tag::ab);
  // The embedding's own table, in the layout the embedding reads.
  const Md w(Dims{vocab, f}, dt, Tag::ab);
  const memory weights = c.params.shared(name, w);
  if (last) {
    Gemv g{src, weights, memory(), c.dst().mem, n, f, vocab};
    // A prompt's build (t > 1) at int8 where the loop has VNNI only.
    if (gemv_rows(c, t)) g.int8_from = int8_weights_of(c, name);
    g.int8_pages = &c.params.int8_pages();
    return gemv_step(net, g);
  }
  const dnnl::inner_product_forward::primitive_desc pd(
      {train ? prop_kind::forward_training : prop_kind::forward_inference, s, w,
       Md(), d},
      net.attr(), net.engine());
  net.fwd(When::kAlways, dnnl::inner_product_forward(pd),
          {{DNNL_ARG_SRC, fwd_view(net, src, s)},
           {DNNL_ARG_WEIGHTS, weights},
           {DNNL_ARG_DST, fwd_view(net, c.dst().mem, d)}});
  if (!train) return;

  // The table's gradient from this use goes to a buffer of its own, which
  // the embedding's backward, running later, adds to its own (ops_token).
  net.begin_layer(c.index);
  const memory diff_dst = diff_dst_of(c, net.plain(c.out, dt));
  const Md canonical(Dims{vocab, f}, Dt::f32, Tag::ab);
  const dnnl::inner_product_backward_weights::primitive_desc pw(
      {s, canonical, Md(), d}, net.attr(), net.engine(), pd);
  const memory grad = net.alloc(canonical);
  c.params.contribute(name, grad);
  net.bwd(dnnl::inner_product_backward_weights(pw),
          {{DNNL_ARG_SRC, bwd_view(net, src, s)},
           {DNNL_ARG_DIFF_DST, bwd_view(net, diff_dst, d)},
           {DNNL_ARG_DIFF_WEIGHTS, grad}});
  if (!c.src_needs_grad()) return;
  const dnnl::matmul::primitive_desc pd_data({d, w, s}, net.attr(),
                                             net.engine());
  const memory diff_src = net.grad_out(c.in[0], net.plain(c.in[0], dt));
  net.bwd(dnnl::matmul(pd_data), {{DNNL_ARG_SRC, bwd_view(net, diff_dst, d)},
                                  {DNNL_ARG_WEIGHTS, weights},
                                  {DNNL_ARG_DST, bwd_view(net, diff_src, s)}});
  net.grad_commit(c.in[0], diff_src);
}

}  // namespace nnbench::engines::onednn
