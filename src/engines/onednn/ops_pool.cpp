// Max and average pooling (padding, ceil mode) and global average pooling.
#include <algorithm>
#include <string>

#include "engines/onednn/ops.h"
#include "model/layer.h"

namespace nnbench::engines::onednn {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;

// Right padding that makes oneDNN's floor rule give the output size of
// analysis.cpp; ceil mode's partial last window becomes extra padding.
Dims pad_right(const model::Layer& l, const Dims& src, const Dims& dst) {
  Dims r(2);
  for (int d = 0; d < 2; ++d)
    r[d] = std::max<int64_t>(0, (dst[d + 2] - 1) * l.stride[d] + l.kernel[d] -
                                    src[d + 2] - l.pad[d]);
  return r;
}

// torch's avg_pool2d (count_include_pad) divides by the window clipped to
// the padded input: the declared padding counts, a ceil-mode overhang past
// it does not. oneDNN counts all padding or none, so each case maps to one
// of them where it can.
algorithm avg_algorithm(const model::Layer& l, const Dims& pad_r) {
  const bool overhang = pad_r[0] > l.pad[0] || pad_r[1] > l.pad[1];
  if (!overhang) return algorithm::pooling_avg_include_padding;
  if (l.pad[0] == 0 && l.pad[1] == 0)
    return algorithm::pooling_avg_exclude_padding;
  throw backend::Unimplemented(
      "layer '" + l.name +
      "' (avg_pool2d): ceil mode with padding divides by a window torch "
      "clips between the declared padding and the overhang; oneDNN counts "
      "all padding or none");
}

struct PoolGeometry {
  algorithm alg;
  Dims strides, kernel, pad_l, pad_r;
};

// Forward and backward of one pooling whose dst the caller places.
void build_pooling(LayerCtx& c, const PoolGeometry& g, const Md& src_md,
                   const Md& dst_md, const memory& dst,
                   const memory& diff_dst_plain) {
  Net& net = c.net;
  const dnnl::pooling_forward::primitive_desc pd(
      {prop_kind::forward_training, g.alg, src_md, dst_md, g.strides, g.kernel,
       g.pad_l, g.pad_r},
      net.attr(), net.engine());
  memory dst_mem = dst;
  if (!dst_mem) {
    net.define(c.out, pd.dst_desc());
    dst_mem = c.dst().mem;
  }
  Args args{{DNNL_ARG_SRC, net.src_as(c.in[0], pd.src_desc())},
            {DNNL_ARG_DST, dst_mem}};
  memory ws;
  if (g.alg == algorithm::pooling_max) {
    ws = net.alloc(pd.workspace_desc());
    args[DNNL_ARG_WORKSPACE] = ws;
  }
  net.fwd(When::kAlways, dnnl::pooling_forward(pd), args);
  if (!c.src_needs_grad()) return;

  net.begin_layer(c.index);
  // diff_src in the forward's src layout: left to `any`, 2.6 picks
  // acdB16b for global pooling, which only the reference kernel handles.
  const auto pb = prefer_given_layouts([&](bool given) {
    return dnnl::pooling_backward::primitive_desc(
        {g.alg, given ? pd.src_desc() : any_md(c.src().dims, net.dt()),
         pd.dst_desc(), g.strides, g.kernel, g.pad_l, g.pad_r},
        net.attr(), net.engine(), pd);
  });
  const memory diff_dst = diff_dst_plain
                              ? net.bwd_as(diff_dst_plain, pb.diff_dst_desc())
                              : diff_dst_of(c, pb.diff_dst_desc());
  const memory diff_src = net.grad_out(c.in[0], pb.diff_src_desc());
  Args bargs{{DNNL_ARG_DIFF_DST, diff_dst}, {DNNL_ARG_DIFF_SRC, diff_src}};
  if (ws) bargs[DNNL_ARG_WORKSPACE] = ws;
  net.bwd(dnnl::pooling_backward(pb), bargs);
  net.grad_commit(c.in[0], diff_src);
}

}  // namespace

void build_pool(LayerCtx& c) {
  const model::Layer& l = c.l;
  const Dims& src = c.src().dims;
  const Dims& dst = c.dst().dims;
  PoolGeometry g;
  g.strides = {l.stride[0], l.stride[1]};
  g.kernel = {l.kernel[0], l.kernel[1]};
  g.pad_l = {l.pad[0], l.pad[1]};
  g.pad_r = pad_right(l, src, dst);
  g.alg = l.op == model::Op::kMaxPool2d ? algorithm::pooling_max
                                        : avg_algorithm(l, g.pad_r);
  build_pooling(c, g, c.net.md_or_plain(c.in[0]), any_md(dst, c.net.dt()), {},
                {});
}

void check_pool(const model::Layer& l, const Dims& src, const Dims& dst) {
  if (l.op == model::Op::kAvgPool2d) avg_algorithm(l, pad_right(l, src, dst));
}

void build_global_pool(LayerCtx& c) {
  Net& net = c.net;
  const Dims& src = c.src().dims;
  const Dims pooled{src[0], src[1], 1, 1};
  const PoolGeometry g{algorithm::pooling_avg_include_padding,
                       {1, 1},
                       {src[2], src[3]},
                       {0, 0},
                       {0, 0}};
  // The [N,C] output is plain; the pooling writes a blocked [N,C,1,1] that
  // a reorder copies into it (N*C elements).
  net.define(c.out, net.plain(c.out, net.dt()));
  const Md as_4d(pooled, net.dt(), Tag::nchw);
  const dnnl::pooling_forward::primitive_desc probe(
      {dnnl::prop_kind::forward_training, g.alg, net.md_or_plain(c.in[0]),
       any_md(pooled, net.dt()), g.strides, g.kernel, g.pad_l, g.pad_r},
      net.engine());
  const memory tmp = net.alloc(probe.dst_desc());
  build_pooling(c, g, net.md_or_plain(c.in[0]), probe.dst_desc(), tmp,
                c.src_needs_grad() ? net.diff_view(c.out, as_4d) : memory());
  const memory out_4d = view(c.dst().mem, as_4d);
  net.fwd(When::kAlways, make_reorder(tmp, out_4d),
          {{DNNL_ARG_FROM, tmp}, {DNNL_ARG_TO, out_4d}});
}

}  // namespace nnbench::engines::onednn
