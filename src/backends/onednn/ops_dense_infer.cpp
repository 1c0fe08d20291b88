// Conv and linear layers of an inference-only build: the weights never
// change, so they are prepared once: a batch norm that alone reads the
// layer is folded into them (w * gamma / sqrt(var + eps) per output
// channel, the bias shifted likewise), and with int8 they are quantized per
// output channel while the input is quantized per tensor from its
// calibrated range. The output stays in the net's floating type, so every
// other op runs as in fp32.
#include <algorithm>
#include <cmath>

#include "backends/onednn/graph.h"
#include "backends/onednn/ops.h"

namespace nnbench::backends::onednn {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;

// Canonical fp32 weights (one row per output channel) and bias.
struct Dense {
  std::vector<float> w, b;
};

Dense folded(LayerCtx& c) {
  const model::Layer& l = c.l;
  Dense d{c.params.state(l.name + ".weight").value, {}};
  d.b = l.bias ? c.params.state(l.name + ".bias").value
               : std::vector<float>(l.out, 0.f);
  if (c.norm == nullptr) return d;
  const auto& gamma = c.params.state(c.norm->name + ".weight").value;
  const auto& beta = c.params.state(c.norm->name + ".bias").value;
  const RunState::Running& r = running_stats(c.state, c.norm_index, l.out);
  const size_t row = d.w.size() / l.out;
  for (int64_t o = 0; o < l.out; ++o) {
    const double s = gamma[o] / std::sqrt(double(r.var[o]) + c.norm->eps);
    for (size_t k = 0; k < row; ++k) d.w[o * row + k] *= float(s);
    d.b[o] = float((d.b[o] - r.mean[o]) * s + beta[o]);
  }
  return d;
}

// int8: the input's scale and type from its calibrated range (u8 where it
// was never negative: the output of a ReLU), the weights' scale per output
// channel, the output scales that undo both and the bias moved into the
// accumulator's units (oneDNN 2.x computes scale * (acc + bias)).
struct Quant {
  Dt src_dt = Dt::f32;
  float src_scale = 1.f;
  std::vector<float> weight_scales, output_scales;
};

Quant quantize(LayerCtx& c, Dense& d) {
  Quant q;
  const auto it = c.infer->ranges.find(c.in[0]);
  if (it == c.infer->ranges.end())
    throw std::logic_error("no calibrated range for the input of " + c.l.name);
  const Range r = it->second;
  const bool unsigned_input = r.min >= 0;
  const float reach = std::max(std::abs(r.min), std::abs(r.max));
  q.src_dt = unsigned_input ? Dt::u8 : Dt::s8;
  q.src_scale = reach > 0 ? (unsigned_input ? 255.f : 127.f) / reach : 1.f;
  const int64_t out = c.l.out;
  const size_t row = d.w.size() / out;
  for (int64_t o = 0; o < out; ++o) {
    float m = 0;
    for (size_t k = 0; k < row; ++k)
      m = std::max(m, std::abs(d.w[o * row + k]));
    const float ws = m > 0 ? c.infer->weight_levels / m : 1.f;
    q.weight_scales.push_back(ws);
    q.output_scales.push_back(1.f / (q.src_scale * ws));
    d.b[o] *= q.src_scale * ws;
  }
  return q;
}

// A constant tensor in layout `md`, from a host copy in `from` (plain):
// scaled per output channel (`mask`) when quantizing.
memory constant(Net& net, const Md& md, const Md& from,
                std::vector<float>& host, int mask,
                const std::vector<float>* scales) {
  const memory src(from, net.engine(), host.data());
  memory dst = net.alloc(md);
  auto r = scales ? make_scaling_reorder(src, dst, mask, *scales)
                  : make_reorder(src, dst);
  r.execute(net.stream(), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}});
  net.stream().wait();
  return dst;
}

}  // namespace

void build_dense_infer(LayerCtx& c) {
  const model::Layer& l = c.l;
  Net& net = c.net;
  const Dt dt = net.dt();
  const bool conv = l.op == model::Op::kConv2d;
  const Dims& src_dims = c.src().dims;
  const Dims& dst_dims = c.dst().dims;
  const Dims w_dims =
      conv ? conv_weight_dims(l, src_dims[1]) : Dims{l.out, src_dims[1]};
  Dense d = folded(c);
  Quant q;
  if (c.infer->int8) q = quantize(c, d);
  dnnl::primitive_attr attr = relu_attr(net, c.fuse_relu);
  if (c.infer->int8) attr.set_output_scales(1 << 1, q.output_scales);

  const Dt src_dt = c.infer->int8 ? q.src_dt : dt;
  const Dt w_dt = c.infer->int8 ? Dt::s8 : dt;
  const Md bias({l.out}, Dt::f32, Tag::a);
  const Md src_any = any_md(src_dims, src_dt), w_any = any_md(w_dims, w_dt),
           dst_any = any_md(dst_dims, dt);
  dnnl::primitive prim;
  Md src_md, w_md, dst_md;
  std::string impl;
  if (conv) {
    const Dims strides{l.stride[0], l.stride[1]}, pad{l.pad[0], l.pad[1]};
    const dnnl::convolution_forward::primitive_desc pd(
        {prop_kind::forward_inference, algorithm::convolution_direct, src_any,
         w_any, bias, dst_any, strides, pad, pad},
        attr, net.engine());
    prim = dnnl::convolution_forward(pd);
    src_md = pd.src_desc(), w_md = pd.weights_desc(), dst_md = pd.dst_desc();
    impl = pd.impl_info_str();
  } else {
    const dnnl::inner_product_forward::primitive_desc pd(
        {prop_kind::forward_inference, src_any, w_any, bias, dst_any}, attr,
        net.engine());
    prim = dnnl::inner_product_forward(pd);
    src_md = pd.src_desc(), w_md = pd.weights_desc(), dst_md = pd.dst_desc();
    impl = pd.impl_info_str();
  }
  const bool grouped = conv && l.groups > 1;
  const Md canonical(w_dims, Dt::f32,
                     conv ? (grouped ? Tag::goihw : Tag::oihw) : Tag::ab);
  // Per output channel: dim 0, or dims 0 and 1 (g, o) when grouped.
  const int w_mask = grouped ? 3 : 1;
  const memory weights = constant(net, w_md, canonical, d.w, w_mask,
                                  c.infer->int8 ? &q.weight_scales : nullptr);
  const memory b = constant(net, bias, bias, d.b, 0, nullptr);
  const memory src = c.infer->int8 ? net.quantized(c.in[0], src_md, q.src_scale)
                                   : net.src_as(c.in[0], src_md);
  net.define(c.out, dst_md);
  net.fwd(When::kAlways, prim,
          {{DNNL_ARG_SRC, src},
           {DNNL_ARG_WEIGHTS, weights},
           {DNNL_ARG_BIAS, b},
           {DNNL_ARG_DST, c.dst().mem}});
  net.note(conv ? "conv_impl" : "linear_impl", l.name + ": " + impl);
  if (c.norm) net.note("folded", "batch norms folded into the layer before");
}

}  // namespace nnbench::backends::onednn
