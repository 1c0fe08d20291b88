// Ops that move data: flatten, residual add, channel concat and the ResNet
// zero-padding shortcut.
#include <algorithm>
#include <climits>
#include <cstring>

#include "engines/onednn/ops.h"

namespace nnbench::engines::onednn {
namespace {

// Addresses an [N,C,H,W] element in a plain or channel-blocked layout
// (nchw, nhwc, nChw8c, nChw16c), from the descriptor's own strides.
struct Indexer {
  int64_t stride[4];
  int64_t block = 1;
  int64_t at(int64_t n, int64_t c, int64_t h, int64_t w) const {
    return n * stride[0] + c / block * stride[1] + h * stride[2] +
           w * stride[3] + c % block;
  }
};

bool make_indexer(const Md& md, Indexer* ix) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.ndims != 4 || d.format_kind != dnnl_blocked || d.offset0 != 0)
    return false;
  const dnnl_blocking_desc_t& b = d.format_desc.blocking;
  if (b.inner_nblks > 1 || (b.inner_nblks == 1 && b.inner_idxs[0] != 1))
    return false;
  ix->block = b.inner_nblks == 1 ? b.inner_blks[0] : 1;
  std::copy(b.strides, b.strides + 4, ix->stride);
  return true;
}

// The output layout of the shortcut: the input's channel blocking.
Md like(const Md& in, const Dims& dims, Dt dt) {
  for (Tag t : {Tag::nChw16c, Tag::nChw8c})
    if (Md(in.dims(), dt, t) == in) return Md(dims, dt, t);
  return Md(dims, dt, Tag::nchw);
}

struct PadGeometry {
  Indexer src, dst;
  Dims src_dims, dst_dims;
  int64_t lo, sh, sw;  // first real channel; spatial strides
};

// dst[n, c + lo, h, w] = src[n, c, h * sh, w * sw]; other channels stay 0.
template <typename T>
void pad_forward(const PadGeometry& g, const T* src, T* dst) {
  const Dims& s = g.src_dims;
  const Dims& d = g.dst_dims;
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < s[1]; ++c)
      for (int64_t h = 0; h < d[2]; ++h)
        for (int64_t w = 0; w < d[3]; ++w)
          dst[g.dst.at(n, c + g.lo, h, w)] =
              src[g.src.at(n, c, h * g.sh, w * g.sw)];
}

// The transpose: diff_src is diff_dst's real channels at the sampled
// positions and zero elsewhere (cleared first: cheaper than a test each).
template <typename T>
void pad_backward(const PadGeometry& g, const T* diff_dst, T* diff_src,
                  size_t bytes) {
  std::memset(diff_src, 0, bytes);
  const Dims& s = g.src_dims;
  const Dims& d = g.dst_dims;
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < s[1]; ++c)
      for (int64_t h = 0; h < d[2]; ++h)
        for (int64_t w = 0; w < d[3]; ++w)
          diff_src[g.src.at(n, c, h * g.sh, w * g.sw)] =
              diff_dst[g.dst.at(n, c + g.lo, h, w)];
}

template <typename F>
void by_type(Dt dt, F f) {
  if (dt == Dt::bf16)
    f(uint16_t{});
  else
    f(float{});
}

}  // namespace

void build_flatten(LayerCtx& c) {
  Net& net = c.net;
  const Md src_plain = net.plain(c.in[0], net.dt());
  const memory src = net.src_as(c.in[0], net.md_or_plain(c.in[0]));
  net.define(c.out, net.plain(c.out, net.dt()));
  // The [N,F] output is the input in plain layout, reinterpreted.
  const memory dst_as_src = view(c.dst().mem, src_plain);
  net.fwd(When::kAlways, make_reorder(src, dst_as_src),
          {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst_as_src}});
  if (!c.src_needs_grad()) return;
  net.begin_layer(c.index);
  net.add_grad(c.in[0], net.diff_view(c.out, src_plain));
}

void build_add(LayerCtx& c) {
  Net& net = c.net;
  const Md md = net.md_or_plain(c.in[0]);
  dnnl::primitive_attr attr = net.attr();
  if (c.fuse_relu) {
    dnnl::post_ops po;
    po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(po);
  }
  const dnnl::binary::primitive_desc pd(
      {dnnl::algorithm::binary_add, md, md, md}, attr, net.engine());
  const memory a = net.src_as(c.in[0], md);
  const memory b = net.src_as(c.in[1], md);
  net.define(c.out, md);
  net.fwd(
      When::kAlways, dnnl::binary(pd),
      {{DNNL_ARG_SRC_0, a}, {DNNL_ARG_SRC_1, b}, {DNNL_ARG_DST, c.dst().mem}});
  if (!c.dst().needs_grad) return;  // an inference-only build
  net.begin_layer(c.index);
  // The gradient passes unchanged to both inputs: share the buffer where
  // the input has no other consumer, copy (or accumulate) otherwise.
  const memory diff = diff_dst_of(c, md);
  int reader = INT_MAX;  // lowest later block that reads `diff`
  bool aliased[2] = {false, false};
  for (size_t k = 0; k < 2; ++k) {
    aliased[k] = c.src_needs_grad(k) && net.try_alias_grad(c.in[k], diff);
    if (aliased[k])
      reader = std::min(
          reader, c.src(k).producer_aliases ? INT_MIN : c.src(k).producer);
  }
  // A ResNet shortcut (read by the next block's conv too) can start from
  // the buffer as well when `diff` is this layer's own temporary (a fused
  // ReLU's gradient) and its readers finish before the conv adds to it.
  const bool exclusive = c.fuse_relu && c.in[0] != c.in[1];
  for (size_t k = 0; k < 2; ++k) {
    if (!c.src_needs_grad(k) || aliased[k]) continue;
    if (!(exclusive && net.try_share_grad(c.in[k], diff, reader)))
      net.add_grad(c.in[k], diff);
  }
}

void build_concat(LayerCtx& c) {
  Net& net = c.net;
  std::vector<Md> mds;
  for (int id : c.in) mds.push_back(net.md_or_plain(id));
  const dnnl::concat::primitive_desc pd(1, mds, net.engine());
  net.define(c.out, pd.dst_desc());
  Args args{{DNNL_ARG_DST, c.dst().mem}};
  for (size_t k = 0; k < c.in.size(); ++k)
    args[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(k)] =
        net.src_as(c.in[k], mds[k]);
  net.fwd(When::kAlways, dnnl::concat(pd), args);
  if (!c.dst().needs_grad) return;  // an inference-only build
  net.begin_layer(c.index);
  // Each input's gradient is a channel range of a plain copy of diff_dst.
  const Md plain = net.plain(c.out, net.dt());
  const memory whole = net.alloc(plain);
  net.bwd(make_reorder(c.dst().diff, whole),
          {{DNNL_ARG_FROM, c.dst().diff}, {DNNL_ARG_TO, whole}});
  Dims offsets(plain.dims().size(), 0);
  for (size_t k = 0; k < c.in.size(); ++k) {
    const Dims& dims = c.src(k).dims;
    if (c.src_needs_grad(k))
      net.add_grad(c.in[k], view(whole, plain.submemory_desc(dims, offsets)));
    offsets[1] += dims[1];
  }
}

void build_zero_pad(LayerCtx& c) {
  Net& net = c.net;
  PadGeometry g;
  Md src_md = net.md_or_plain(c.in[0]);
  if (!make_indexer(src_md, &g.src)) src_md = net.plain(c.in[0], net.dt());
  const memory src = net.src_as(c.in[0], src_md);
  g.src_dims = c.src().dims;
  g.dst_dims = c.dst().dims;
  g.lo = (g.dst_dims[1] - g.src_dims[1]) / 2;
  g.sh = c.l.stride[0];
  g.sw = c.l.stride[1];
  net.define(c.out, like(src_md, g.dst_dims, net.dt()));
  const memory dst = c.dst().mem;
  make_indexer(c.dst().md, &g.dst);
  // The padded channels are zero once and for all; steps write the rest.
  std::memset(dst.get_data_handle(), 0, c.dst().md.get_size());
  by_type(net.dt(), [&](auto zero) {
    using T = decltype(zero);
    net.fwd(When::kAlways, [g, src, dst] {
      pad_forward(g, static_cast<const T*>(src.get_data_handle()),
                  static_cast<T*>(dst.get_data_handle()));
    });
  });
  if (!c.src_needs_grad()) return;
  net.begin_layer(c.index);
  const memory diff_src = net.grad_out(c.in[0], src_md);
  const memory diff_dst = c.dst().diff;
  by_type(net.dt(), [&](auto zero) {
    using T = decltype(zero);
    net.bwd([g, diff_dst, diff_src] {
      pad_backward(g, static_cast<const T*>(diff_dst.get_data_handle()),
                   static_cast<T*>(diff_src.get_data_handle()),
                   diff_src.get_desc().get_size());
    });
  });
  net.grad_commit(c.in[0], diff_src);
}

}  // namespace nnbench::engines::onednn
