// Convolution and inner product (linear): blocked layouts chosen by oneDNN,
// a following ReLU fused as a post-op, gradients of the weights written in
// the layout of the fp32 master weights.
#include <string>

#include "engines/onednn/graph.h"
#include "engines/onednn/ops.h"

namespace nnbench::engines::onednn {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;

// The backward-weights primitive: fp32 gradients, in the forward's weight
// layout where it can (then the forward reads the master weights directly),
// reading the forward's source and destination layouts where it can (no
// reorder). Else oneDNN's choice of all three, else plain layouts (its
// GEMM-based kernels): a first layer reading one channel in a plain layout
// has only the reference kernel on AVX2 with the forward's layouts.
template <typename MakePd>
auto weights_grad_pd(const Md& fwd_src, const Md& fwd_weights,
                     const Md& fwd_dst, MakePd make) {
  const Dims &s = fwd_src.dims(), &w = fwd_weights.dims(), &d = fwd_dst.dims();
  const Dt dt = fwd_src.data_type();
  // bf16 forward weights are never the fp32 gradients' layout: no first try.
  const int skip = fwd_weights.data_type() == Dt::f32 ? 0 : 1;
  return first_optimised(4 - skip, [&](int i) {
    switch (i + skip) {
      case 0:
        return make(fwd_src, fwd_weights, fwd_dst);
      case 1:
        return make(fwd_src, any_md(w, Dt::f32), fwd_dst);
      case 2:
        return make(any_md(s, dt), any_md(w, Dt::f32), any_md(d, dt));
      default:
        return make(Md(s, dt, plain_tag(s.size())),
                    Md(w, Dt::f32, plain_tag(w.size())),
                    Md(d, dt, plain_tag(d.size())));
    }
  });
}

Md bias_md(const model::Layer& l) {
  return l.bias ? Md({l.out}, Dt::f32, Tag::a) : Md();
}

// Wires a conv or linear layer from its forward and backward-weights
// primitive descriptors; make_data() gives the backward-data one, needed
// only when the input takes a gradient.
template <typename Fwd, typename BwdW, typename BwdD, typename MakeData>
void wire_dense(LayerCtx& c, const Md& canonical,
                const typename Fwd::primitive_desc& pd,
                const typename BwdW::primitive_desc& pw, MakeData make_data) {
  Net& net = c.net;
  const std::string& name = c.l.name;
  const memory src = net.src_as(c.in[0], pd.src_desc());
  net.define(c.out, pd.dst_desc());
  const auto w = c.params.add(name + ".weight", canonical, pd.weights_desc(),
                              pw.diff_weights_desc());
  Args fwd{{DNNL_ARG_SRC, src},
           {DNNL_ARG_WEIGHTS, w.weights},
           {DNNL_ARG_DST, c.dst().mem}};
  Args bwd_w{{DNNL_ARG_DIFF_WEIGHTS, w.grad}};
  if (c.l.bias) {
    const auto b = c.params.add(name + ".bias", bias_md(c.l), pd.bias_desc(),
                                pw.diff_bias_desc());
    fwd[DNNL_ARG_BIAS] = b.weights;
    bwd_w[DNNL_ARG_DIFF_BIAS] = b.grad;
  }
  net.fwd(When::kAlways, Fwd(pd), fwd);

  net.begin_layer(c.index);
  const memory diff_dst = diff_dst_of(c, pd.dst_desc());
  bwd_w[DNNL_ARG_SRC] = net.bwd_as(src, pw.src_desc());
  bwd_w[DNNL_ARG_DIFF_DST] = net.bwd_as(diff_dst, pw.diff_dst_desc());
  net.bwd(BwdW(pw), bwd_w);
  if (!c.src_needs_grad()) return;
  const auto pd_data = make_data();
  const memory diff_src = net.grad_out(c.in[0], pd_data.diff_src_desc());
  net.bwd(BwdD(pd_data),
          {{DNNL_ARG_DIFF_DST, net.bwd_as(diff_dst, pd_data.diff_dst_desc())},
           {DNNL_ARG_WEIGHTS, net.bwd_as(w.weights, pd_data.weights_desc())},
           {DNNL_ARG_DIFF_SRC, diff_src}});
  net.grad_commit(c.in[0], diff_src);
}

}  // namespace

dnnl::primitive_attr relu_attr(const Net& net, bool fuse) {
  dnnl::primitive_attr attr = net.attr();
  if (fuse) {
    dnnl::post_ops po;
    po.append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(po);
  }
  return attr;
}

Dims conv_weight_dims(const model::Layer& l, int64_t in_channels) {
  const int64_t g = l.groups;
  return g > 1 ? Dims{g, l.out / g, in_channels / g, l.kernel[0], l.kernel[1]}
               : Dims{l.out, in_channels, l.kernel[0], l.kernel[1]};
}

memory diff_dst_of(LayerCtx& c, const Md& want) {
  Value& v = c.dst();
  if (!c.fuse_relu) return c.net.bwd_as(v.diff, want);
  const auto alg = algorithm::eltwise_relu_use_dst_for_bwd;
  const dnnl::eltwise_forward::primitive_desc hint(
      {prop_kind::forward_training, alg, v.md, 0.f, 0.f}, c.net.engine());
  const dnnl::eltwise_backward::primitive_desc pd(
      {alg, v.md, v.md, 0.f, 0.f}, c.net.attr(), c.net.engine(), hint);
  // Not in place: the gradient buffer may be shared with a residual input.
  memory diff = c.net.alloc(pd.diff_src_desc());
  c.net.bwd(dnnl::eltwise_backward(pd), {{DNNL_ARG_DST, v.mem},
                                         {DNNL_ARG_DIFF_DST, v.diff},
                                         {DNNL_ARG_DIFF_SRC, diff}});
  return c.net.bwd_as(diff, want);
}

void build_conv(LayerCtx& c) {
  if (c.infer) return build_dense_infer(c);
  const model::Layer& l = c.l;
  Net& net = c.net;
  const Dt dt = net.dt();
  const Dims& src_dims = c.src().dims;
  const Dims& dst_dims = c.dst().dims;
  const int64_t g = l.groups;
  const Dims w_dims = conv_weight_dims(l, src_dims[1]);
  const Dims strides{l.stride[0], l.stride[1]}, pad{l.pad[0], l.pad[1]};
  // make(alg): Winograd first where `winograd`, else (or where oneDNN
  // refuses it) direct.
  auto winograd_else_direct = [](bool winograd, auto make) {
    return first_optimised(winograd ? 2 : 1, [&](int i) {
      return make(winograd && i == 0 ? algorithm::convolution_winograd
                                     : algorithm::convolution_direct);
    });
  };
  // Winograd 4x3 where oneDNN 2.6 has it (fp32 3x3 stride-1 convolutions
  // on avx512_core) and the layer reads at least 32 channels, all three
  // passes; direct elsewhere. Not oneDNN's `auto`, which keeps small
  // batches and images direct (ResNet-50 at batch 8, ResNet-56's backward
  // weights), where Winograd ran faster; below 32 channels direct, as at 1
  // channel (padded to 16) and at 16 its transforms cost more than they
  // saved (17 to 31 not measured: docs/performance.md).
  const auto pd = winograd_else_direct(src_dims[1] / g >= 32, [&](algorithm a) {
    return dnnl::convolution_forward::primitive_desc(
        {prop_kind::forward_training, a, any_md(src_dims, dt),
         any_md(w_dims, dt), bias_md(l), any_md(dst_dims, dt), strides, pad,
         pad},
        relu_attr(net, c.fuse_relu), net.engine());
  });
  // The backward passes in the forward's algorithm, else direct.
  const bool winograd =
      std::string(pd.impl_info_str()).find("wino") != std::string::npos;
  const auto pw = winograd_else_direct(winograd, [&](algorithm alg) {
    return weights_grad_pd(
        pd.src_desc(), pd.weights_desc(), pd.dst_desc(),
        [&](const Md& src, const Md& dw, const Md& dst) {
          return dnnl::convolution_backward_weights::primitive_desc(
              {alg, src, dw, l.bias ? pd.bias_desc() : Md(), dst, strides, pad,
               pad},
              net.attr(), net.engine(), pd);
        });
  });
  // The backward-data kernels read the weights in their own layout (e.g.
  // OIhw16o16i for OIhw16i16o): let them choose; a reorder refreshes that
  // copy each step, as forcing the forward's layout falls back to ref:any.
  std::string data_impl = "none (its input takes no gradient)";
  auto make_data = [&] {
    auto d = winograd_else_direct(winograd, [&](algorithm alg) {
      return prefer_given_layouts([&](bool given) {
        return dnnl::convolution_backward_data::primitive_desc(
            {alg, given ? pd.src_desc() : any_md(src_dims, dt),
             any_md(w_dims, dt), given ? pd.dst_desc() : any_md(dst_dims, dt),
             strides, pad, pad},
            net.attr(), net.engine(), pd);
      });
    });
    data_impl = d.impl_info_str();
    return d;
  };
  const std::string names = g > 1 ? "goihw" : "oihw";
  net.note("conv_layout",
           "conv weights " + layout_name(pd.weights_desc(), names) +
               ", activations " + layout_name(pd.dst_desc(), "nchw") + " (" +
               l.name + ")");
  const Md canonical(w_dims, Dt::f32, g > 1 ? Tag::goihw : Tag::oihw);
  wire_dense<dnnl::convolution_forward, dnnl::convolution_backward_weights,
             dnnl::convolution_backward_data>(c, canonical, pd, pw, make_data);
  net.tally("conv_impl",
            std::string("fwd ") + pd.impl_info_str() + ", bwd data " +
                data_impl + ", bwd weights " + pw.impl_info_str(),
            l.name);
}

void build_linear(LayerCtx& c) {
  if (c.infer) return build_dense_infer(c);
  const model::Layer& l = c.l;
  Net& net = c.net;
  const Dt dt = net.dt();
  const Dims& src_dims = c.src().dims;
  const Dims w_dims{l.out, src_dims[1]};

  const dnnl::inner_product_forward::primitive_desc pd(
      {prop_kind::forward_training, any_md(src_dims, dt), any_md(w_dims, dt),
       bias_md(l), any_md(c.dst().dims, dt)},
      relu_attr(net, c.fuse_relu), net.engine());
  const auto pw = weights_grad_pd(
      pd.src_desc(), pd.weights_desc(), pd.dst_desc(),
      [&](const Md& src, const Md& dw, const Md& dst) {
        return dnnl::inner_product_backward_weights::primitive_desc(
            {src, dw, l.bias ? pd.bias_desc() : Md(), dst}, net.attr(),
            net.engine(), pd);
      });
  auto make_data = [&] {
    return dnnl::inner_product_backward_data::primitive_desc(
        {any_md(src_dims, dt), any_md(w_dims, dt), pd.dst_desc()}, net.attr(),
        net.engine(), pd);
  };
  net.note("linear_layout", "linear weights " +
                                layout_name(pd.weights_desc(), "oi") + " (" +
                                l.name + ")");
  wire_dense<dnnl::inner_product_forward, dnnl::inner_product_backward_weights,
             dnnl::inner_product_backward_data>(c, Md(w_dims, Dt::f32, Tag::ab),
                                                pd, pw, make_data);
}

}  // namespace nnbench::engines::onednn
