// Conv and linear layers of an inference-only build: the weights never
// change, so they are prepared once: a batch norm that alone reads the
// layer is folded into them (w * gamma / sqrt(var + eps) per output
// channel, the bias shifted likewise), and with int8 they are quantized per
// output channel while the input is quantized per tensor from its
// calibrated range. The output stays in the net's floating type, so every
// other op runs as in fp32, unless only quantized layers read it: then it
// is written as int8 at its readers' level.
#include <algorithm>
#include <cmath>

#include "engines/onednn/graph.h"
#include "engines/onednn/infer_passes.h"
#include "engines/onednn/ops.h"

namespace nnbench::engines::onednn {
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

// int8: the input's level, the weights' scale per output channel, the
// output scales that undo both (and apply the output's level where the
// output is int8 too) and the bias moved into the accumulator's units
// (oneDNN 2.x computes scale * (acc + bias)).
struct Quant {
  Level src{Dt::f32, 1.f}, dst{Dt::f32, 1.f};
  std::vector<float> weight_scales, output_scales;
};

Quant quantize(LayerCtx& c, Dense& d, const Level& src, const Level& dst,
               int64_t out, float adjust) {
  Quant q;
  q.src = src;
  q.dst = dst;
  const size_t row = d.w.size() / out;
  for (int64_t o = 0; o < out; ++o) {
    float m = 0;
    for (size_t k = 0; k < row; ++k)
      m = std::max(m, std::abs(d.w[o * row + k]));
    const float levels = weight_levels(*c.infer, adjust);
    const float ws = m > 0 ? levels / m : 1.f;
    q.weight_scales.push_back(ws);
    q.output_scales.push_back(q.dst.scale / (q.src.scale * ws));
    d.b[o] *= q.src.scale * ws;
  }
  return q;
}

// oneDNN applies an int8 product's output scale before its post-ops: a
// ReLU commutes with the output's level, a GELU does not. With a fused
// GELU the scales give real values, the GELU runs on them, and an
// eltwise_linear post-op then applies the output's level.
void scale_after_gelu(const LayerCtx& c, Quant& q, dnnl::post_ops& po) {
  if (c.gelu == nullptr) return;
  // A sum before the GELU would add an addend already at the output's
  // level, then scale it again; infer_passes fuses no add with a GELU.
  if (c.sum) throw std::logic_error("a GELU and an add fused into " + c.l.name);
  for (float& s : q.output_scales) s /= q.dst.scale;
  if (q.dst.scale != 1.f)
    po.append_eltwise(1.f, algorithm::eltwise_linear, q.dst.scale, 0.f);
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

// The forward primitive of a conv or linear and the layouts it chose.
struct DensePd {
  dnnl::primitive prim;
  Md src, weights, dst;
  std::string impl;
};

// The factor oneDNN's reorder applies to s8 weights in this layout (its
// scale_adjust; 1 where it applies none).
float weight_adjust(const Md& weights) {
  const auto& e = weights.data.extra;
  return (e.flags & dnnl_memory_extra_flag_scale_adjust) ? e.scale_adjust : 1.f;
}

// The descriptor's choices, and its primitive unless only the choices are
// wanted (`create` false).
template <typename Pd, typename Prim>
DensePd chosen(const Pd& pd, bool create) {
  return {create ? Prim(pd) : dnnl::primitive(), pd.src_desc(),
          pd.weights_desc(), pd.dst_desc(), pd.impl_info_str()};
}

DensePd make_pd(LayerCtx& c, const Md& src, const Md& weights, const Md& bias,
                const Md& dst, const dnnl::primitive_attr& attr,
                bool create = true) {
  const model::Layer& l = c.l;
  if (l.op != model::Op::kConv2d)
    return chosen<dnnl::inner_product_forward::primitive_desc,
                  dnnl::inner_product_forward>(
        {{prop_kind::forward_inference, src, weights, bias, dst},
         attr,
         c.net.engine()},
        create);
  const Dims strides{l.stride[0], l.stride[1]}, pad{l.pad[0], l.pad[1]};
  return chosen<dnnl::convolution_forward::primitive_desc,
                dnnl::convolution_forward>(
      {{prop_kind::forward_inference, algorithm::convolution_direct, src,
        weights, bias, dst, strides, pad, pad},
       attr,
       c.net.engine()},
      create);
}

void note_layouts(LayerCtx& c, const DensePd& pd, bool grouped) {
  const std::string& name = c.l.name;
  if (c.l.op != model::Op::kConv2d) {
    c.net.note("linear_impl", name + ": " + pd.impl);
    c.net.note(
        "linear_layout",
        "linear weights " + layout_name(pd.weights, "oi") + " (" + name + ")");
    return;
  }
  c.net.tally("conv_impl", pd.impl, name);
  c.net.note(
      "conv_layout",
      "conv weights " + layout_name(pd.weights, grouped ? "goihw" : "oihw") +
          ", activations " + layout_name(pd.dst, "nchw") + " (" + name + ")");
}

}  // namespace

void build_dense_infer(LayerCtx& c) {
  const model::Layer& l = c.l;
  Net& net = c.net;
  const Dt dt = net.dt();
  const bool conv = l.op == model::Op::kConv2d;
  const bool int8 = c.infer->int8;
  const Dims& src_dims = c.src().dims;
  const Dims w_dims =
      conv ? conv_weight_dims(l, src_dims[1]) : Dims{l.out, src_dims[1]};
  Dense d = folded(c);
  Quant q;
  if (int8) {
    // Without VNNI the weights' levels depend on whether oneDNN scales them
    // itself, which its chosen weight layout says: ask a descriptor first
    // (with VNNI there is nothing to ask: 127 levels).
    float adjust = 1.f;
    if (!c.infer->vnni) {
      const DensePd probe =
          make_pd(c, any_md(src_dims, level_of(c, c.in[0]).dt),
                  any_md(w_dims, Dt::s8), Md({l.out}, Dt::f32, Tag::a),
                  any_md(c.dst().dims, c.int8_out ? level_of(c, c.out).dt : dt),
                  net.attr(), false);
      adjust = weight_adjust(probe.weights);
    }
    q = quantize(c, d, level_of(c, c.in[0]),
                 c.int8_out ? level_of(c, c.out) : Level{Dt::f32, 1.f}, l.out,
                 adjust);
  }
  // An int8 conv output holds a fused add's addend first as int8 at the
  // addend's own level (u8 or s8, read back by the sum post-op as that
  // type, scaled to the output's): neither a negative addend nor one beyond
  // the output's range saturates.
  const bool own = c.sum && c.int8_out && holds_addend_as_int8(l);
  Level addend{Dt::f32, 1.f};
  if (own) addend = level_of(c, c.sum_from);
  dnnl::primitive_attr attr = net.attr();
  dnnl::post_ops po;
  if (own)
    po.append_sum(q.dst.scale / addend.scale, addend.dt);
  else if (c.sum)
    po.append_sum(1.f);
  append_activation(c, po);
  if (int8) scale_after_gelu(c, q, po);
  attr.set_post_ops(po);
  if (int8) attr.set_output_scales(1 << 1, q.output_scales);
  const Md bias({l.out}, Dt::f32, Tag::a);
  const DensePd pd =
      make_pd(c, any_md(src_dims, int8 ? q.src.dt : dt),
              any_md(w_dims, int8 ? Dt::s8 : dt), bias,
              any_md(c.dst().dims, c.int8_out ? q.dst.dt : dt), attr);

  const bool grouped = conv && l.groups > 1;
  const Md canonical(w_dims, Dt::f32,
                     conv ? (grouped ? Tag::goihw : Tag::oihw) : Tag::ab);
  // Per output channel: dim 0, or dims 0 and 1 (g, o) when grouped.
  const memory weights =
      constant(net, pd.weights, canonical, d.w, grouped ? 3 : 1,
               int8 ? &q.weight_scales : nullptr);
  const memory b = constant(net, bias, bias, d.b, 0, nullptr);
  const memory src = int8 ? net.quantized(c.in[0], pd.src, q.src.scale)
                          : net.src_as(c.in[0], pd.src);
  net.define(c.out, pd.dst, q.dst.scale);
  if (c.sum) {
    // The addend at the output's level, or at its own as int8 (above).
    Md as = c.dst().md;
    if (own) as.data.data_type = static_cast<dnnl_data_type_t>(addend.dt);
    copy_addend(c, own ? view(c.dst().mem, as) : c.dst().mem,
                own ? addend.scale : q.dst.scale);
  }
  net.fwd(When::kAlways, pd.prim,
          {{DNNL_ARG_SRC, src},
           {DNNL_ARG_WEIGHTS, weights},
           {DNNL_ARG_BIAS, b},
           {DNNL_ARG_DST, c.dst().mem}});
  note_layouts(c, pd, grouped);
  if (int8) net.note("int8_product " + l.name, pd.impl);
}

Level level_of(const LayerCtx& c, int id) {
  const auto it = c.infer->ranges.find(id);
  if (it == c.infer->ranges.end())
    throw std::logic_error("no calibrated range for value " +
                           std::to_string(id) + " at " + c.l.name);
  return level_of(it->second);
}

void copy_addend(LayerCtx& c, const memory& to, float scale) {
  Net& net = c.net;
  net.md_or_plain(c.sum_from);
  const Value& y = net.value(c.sum_from);
  const float ratio = scale / y.scale;
  net.fwd(When::kAlways,
          ratio == 1.f ? make_reorder(y.mem, to)
                       : make_scaling_reorder(y.mem, to, 0, {ratio}),
          {{DNNL_ARG_FROM, y.mem}, {DNNL_ARG_TO, to}});
}

Level level_of(const Range& r) {
  const bool is_unsigned = r.min >= 0;
  const float reach = std::max(std::abs(r.min), std::abs(r.max));
  return {is_unsigned ? Dt::u8 : Dt::s8,
          reach > 0 ? (is_unsigned ? 255.f : 127.f) / reach : 1.f};
}

void linear_rows_int8(LayerCtx& c, const RowsInt8& r) {
  Net& net = c.net;
  Dense d{c.params.state(r.weight).value, {}};
  d.b = r.bias.empty() ? std::vector<float>(r.out, 0.f)
                       : c.params.state(r.bias).value;
  const Level src = r.src_mem ? level_of(r.src_range) : level_of(c, r.src);
  const Level dst =
      r.dst_level < 0 ? Level{Dt::f32, 1.f} : level_of(c, r.dst_level);
  const Dims w_dims{r.out, r.in};
  const Md s(Dims{r.rows, r.in}, src.dt, Tag::ab);
  const Md y(Dims{r.rows, r.out}, dst.dt == Dt::f32 ? net.dt() : dst.dt,
             Tag::ab);
  const Md bias({r.out}, Dt::f32, Tag::a);
  using Pd = dnnl::inner_product_forward::primitive_desc;
  float adjust = 1.f;
  if (!c.infer->vnni)  // as in build_dense_infer
    adjust = weight_adjust(
        Pd({prop_kind::forward_inference, s, any_md(w_dims, Dt::s8), bias, y},
           net.attr(), net.engine())
            .weights_desc());
  Quant q = quantize(c, d, src, dst, r.out, adjust);
  dnnl::post_ops po = r.post_ops;
  scale_after_gelu(c, q, po);
  dnnl::primitive_attr attr = net.attr();
  attr.set_post_ops(po);
  attr.set_output_scales(1 << 1, q.output_scales);
  const Pd pd(
      {prop_kind::forward_inference, s, any_md(w_dims, Dt::s8), bias, y}, attr,
      net.engine());
  const Md canonical(w_dims, Dt::f32, Tag::ab);
  const memory weights =
      constant(net, pd.weights_desc(), canonical, d.w, 1, &q.weight_scales);
  const memory b = constant(net, bias, bias, d.b, 0, nullptr);
  memory x;
  if (!r.src_mem) {
    x = net.quantized(r.src, net.plain(r.src, src.dt), src.scale);
  } else {
    // Seen as [rows, in] whatever its dims ([N, T, F] for a value).
    const memory from =
        fwd_view(net, r.src_mem, Md(Dims{r.rows, r.in}, Dt::f32, Tag::ab));
    x = net.alloc(s);
    net.fwd(When::kAlways, make_scaling_reorder(from, x, 0, {src.scale}),
            {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, x}});
  }
  net.fwd(When::kAlways, dnnl::inner_product_forward(pd),
          {{DNNL_ARG_SRC, fwd_view(net, x, s)},
           {DNNL_ARG_WEIGHTS, weights},
           {DNNL_ARG_BIAS, b},
           {DNNL_ARG_DST, fwd_view(net, r.dst, y)}});
  net.note("linear_impl", c.l.name + ": " + pd.impl_info_str());
  net.note("int8_product " + r.weight, pd.impl_info_str());
}

}  // namespace nnbench::engines::onednn
