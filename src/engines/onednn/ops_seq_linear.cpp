// A linear layer on every step of a sequence ([N, T, F] -> [N, T, O], the
// output layer of a language model, a transformer's MLP): oneDNN's inner
// product on the N*T rows of the plain buffers, viewed as [N*T, F] and
// [N*T, O]; in inference builds its brgemm matmul where it has one
// (matmul_rows), or the matrix-vector loop for a token's few rows
// (ops_gemv.cpp). Inference-only builds may fuse a residual add after it
// into it or the GELU after it (an eltwise post-op); no batch norm is folded
// into it. int8 builds quantize it as a linear (s8 weights per output
// channel, the input per tensor from its calibrated range).
#include "engines/onednn/ops.h"

namespace nnbench::engines::onednn {

using dnnl::prop_kind;

namespace {

// int8: the output in fp32, or as int8 where only quantized layers read it
// (infer_passes.h); a fused add's addend copied into it at its level.
void build_seq_linear_int8(LayerCtx& c, const dnnl::post_ops& po) {
  Net& net = c.net;
  const model::Layer& l = c.l;
  const Dims& in = c.src().dims;
  const Level out = c.int8_out ? level_of(c, c.out) : Level{net.dt(), 1.f};
  RowsInt8 r;
  r.src = c.in[0];
  r.weight = l.name + ".weight";
  if (l.bias) r.bias = l.name + ".bias";
  r.rows = in[0] * in[1];
  r.in = in[2];
  r.out = l.out;
  r.dst_level = c.int8_out ? c.out : -1;
  r.post_ops = po;
  net.define(c.out, net.plain(c.out, out.dt), out.scale);
  r.dst = c.dst().mem;
  if (c.sum) copy_addend(c, r.dst, out.scale);
  linear_rows_int8(c, r);
}

// A fused GELU where the matrix-vector loop ran (it applies a ReLU only):
// oneDNN's eltwise on the output, in place.
void gelu_in_place(LayerCtx& c) {
  Net& net = c.net;
  const memory y = c.dst().mem;
  const dnnl::eltwise_forward::primitive_desc pd(
      {prop_kind::forward_inference, gelu_algorithm(*c.gelu), y.get_desc(), 0.f,
       0.f},
      net.attr(), net.engine());
  net.fwd(When::kAlways, dnnl::eltwise_forward(pd),
          {{DNNL_ARG_SRC, y}, {DNNL_ARG_DST, y}});
}

}  // namespace

void build_seq_linear(LayerCtx& c) {
  const model::Layer& l = c.l;
  if (c.norm != nullptr)
    throw backend::Unimplemented(
        "layer '" + l.name +
        "' (linear): a batch norm folded into a linear on [T, F] "
        "(not implemented)");
  Net& net = c.net;
  const Dt dt = net.dt();
  const bool train = c.infer == nullptr;
  const Dims& in = c.src().dims;  // [N, T, F]
  const int64_t rows = in[0] * in[1];
  const Md src(Dims{rows, in[2]}, dt, Tag::ab);
  const Md dst(Dims{rows, l.out}, dt, Tag::ab);
  const Dims w_dims{l.out, in[2]};
  const Md bias = l.bias ? Md({l.out}, Dt::f32, Tag::a) : Md();
  // A residual add fused into an inference build (infer_passes.h): the
  // output starts as the other addend, and the sum post-op (the loop's
  // accumulate) adds to it; matmul_rows reads the addend in place instead.
  dnnl::primitive_attr attr = net.attr();
  dnnl::post_ops po;
  if (c.sum) po.append_sum(1.f);
  append_activation(c, po);
  attr.set_post_ops(po);
  if (c.infer != nullptr && c.infer->int8) return build_seq_linear_int8(c, po);
  const memory x = net.src_as(c.in[0], net.plain(c.in[0], dt));
  net.define(c.out, net.plain(c.out, dt));
  if (!train && !gemv_rows(c, in[1])) {
    RowsLinear r;
    r.x = x;
    r.y = c.dst().mem;
    if (c.sum) r.addend = net.src_as(c.sum_from, net.plain(c.sum_from, dt));
    r.rows = rows;
    r.in = in[2];
    r.out = l.out;
    r.weight = l.name + ".weight";
    if (l.bias) r.bias = l.name + ".bias";
    r.activation = true;
    if (matmul_rows(c, r)) return;
  }
  const dnnl::inner_product_forward::primitive_desc pd(
      {train ? prop_kind::forward_training : prop_kind::forward_inference, src,
       linear_weights_md(c, w_dims, in[1]), bias, dst},
      attr, net.engine());
  const Md canonical(w_dims, Dt::f32, Tag::ab);
  if (!train) {
    const auto w = c.params.add(l.name + ".weight", canonical,
                                pd.weights_desc(), canonical);
    const memory b =
        l.bias
            ? c.params.add(l.name + ".bias", bias, pd.bias_desc(), bias).weights
            : memory();
    if (c.sum) {
      const memory y = net.src_as(c.sum_from, net.plain(c.sum_from, dt));
      net.fwd(When::kAlways, make_reorder(y, c.dst().mem),
              {{DNNL_ARG_FROM, y}, {DNNL_ARG_TO, c.dst().mem}});
    }
    if (gemv_rows(c, in[1])) {
      Gemv g{x, w.weights, b, c.dst().mem, rows, in[2], l.out};
      g.accumulate = c.sum;
      g.relu = c.fuse_relu;
      g.int8_from = int8_weights_of(c, l.name + ".weight");
      g.int8_pages = &c.params.int8_pages();
      gemv_step(net, g);
      if (c.gelu != nullptr) gelu_in_place(c);
      return;
    }
    Args args{{DNNL_ARG_SRC, fwd_view(net, x, src)},
              {DNNL_ARG_WEIGHTS, w.weights},
              {DNNL_ARG_DST, fwd_view(net, c.dst().mem, dst)}};
    if (l.bias) args[DNNL_ARG_BIAS] = b;
    net.fwd(When::kAlways, dnnl::inner_product_forward(pd), args);
    return;
  }
  // The weight gradient in the forward's layout where it is fp32: the
  // forward then reads the master weights.
  const auto pw = prefer_given_layouts([&](bool given) {
    const bool same = given && pd.weights_desc().data_type() == Dt::f32;
    return dnnl::inner_product_backward_weights::primitive_desc(
        {src, same ? pd.weights_desc() : any_md(w_dims, Dt::f32), bias, dst},
        net.attr(), net.engine(), pd);
  });
  const auto w = c.params.add(l.name + ".weight", canonical, pd.weights_desc(),
                              pw.diff_weights_desc());
  Args fwd{{DNNL_ARG_SRC, fwd_view(net, x, src)},
           {DNNL_ARG_WEIGHTS, w.weights},
           {DNNL_ARG_DST, fwd_view(net, c.dst().mem, dst)}};
  Args bwd_w{{DNNL_ARG_DIFF_WEIGHTS, w.grad}};
  if (l.bias) {
    const auto b = c.params.add(l.name + ".bias", bias, pd.bias_desc(),
                                pw.diff_bias_desc());
    fwd[DNNL_ARG_BIAS] = b.weights;
    bwd_w[DNNL_ARG_DIFF_BIAS] = b.grad;
  }
  net.fwd(When::kAlways, dnnl::inner_product_forward(pd), fwd);

  net.begin_layer(c.index);
  const memory diff_dst = diff_dst_of(c, net.plain(c.out, dt));
  bwd_w[DNNL_ARG_SRC] = bwd_view(net, x, src);
  bwd_w[DNNL_ARG_DIFF_DST] = bwd_view(net, diff_dst, dst);
  net.bwd(dnnl::inner_product_backward_weights(pw), bwd_w);
  if (!c.src_needs_grad()) return;
  // diff_src = diff_dst x W as a matmul: oneDNN 2.6's inner product
  // backward-data ran the PTB model's [8192, 10000] x [10000, 256] at ~118
  // GFLOP/s, its matmul at ~200 (docs/performance.md).
  const dnnl::matmul::primitive_desc pd_data({dst, any_md(w_dims, dt), src},
                                             net.attr(), net.engine());
  const memory diff_src = net.grad_out(c.in[0], net.plain(c.in[0], dt));
  net.bwd(dnnl::matmul(pd_data),
          {{DNNL_ARG_SRC, bwd_view(net, diff_dst, dst)},
           {DNNL_ARG_WEIGHTS, net.bwd_as(w.weights, pd_data.weights_desc())},
           {DNNL_ARG_DST, bwd_view(net, diff_src, src)}});
  net.grad_commit(c.in[0], diff_src);
}

bool matmul_rows(LayerCtx& c, const RowsLinear& r) {
  Net& net = c.net;
  const Dt dt = net.dt();
  const Md src({r.rows, r.in}, dt, Tag::ab), dst({r.rows, r.out}, dt, Tag::ab);
  dnnl::post_ops po;
  if (r.addend) po.append_binary(dnnl::algorithm::binary_add, dst);
  if (r.activation) append_activation(c, po);
  dnnl::primitive_attr attr = net.attr();
  attr.set_post_ops(po);
  // The same bytes as the canonical [out, in], and the bias as [1, out].
  const Md canonical({r.in, r.out}, Dt::f32, Tag::ba);
  const Md bias({1, r.out}, Dt::f32, Tag::ab);
  const auto weights = any_md({r.in, r.out}, dt);
  const dnnl::matmul::primitive_desc pd =
      r.bias.empty() ? dnnl::matmul::primitive_desc({src, weights, dst}, attr,
                                                    net.engine())
                     : dnnl::matmul::primitive_desc({src, weights, bias, dst},
                                                    attr, net.engine());
  if (std::string(pd.impl_info_str()).rfind("brg", 0) != 0) return false;
  Args args{
      {DNNL_ARG_SRC, fwd_view(net, r.x, src)},
      {DNNL_ARG_WEIGHTS,
       c.params.add(r.weight, canonical, pd.weights_desc(), canonical).weights},
      {DNNL_ARG_DST, fwd_view(net, r.y, dst)}};
  if (!r.bias.empty())
    args[DNNL_ARG_BIAS] =
        c.params.add(r.bias, bias, pd.bias_desc(), bias).weights;
  if (r.addend)
    args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] =
        fwd_view(net, r.addend, dst);
  net.fwd(When::kAlways, dnnl::matmul(pd), args);
  return true;
}

}  // namespace nnbench::engines::onednn
