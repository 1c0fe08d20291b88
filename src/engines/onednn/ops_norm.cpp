// Batch normalization (batch statistics in training, running statistics in
// inference, updated like torch) and local response normalization.
#include "engines/onednn/ops.h"

namespace nnbench::engines::onednn {
namespace {

using dnnl::algorithm;
using dnnl::normalization_flags;
using dnnl::prop_kind;

const auto kScaleShift =
    normalization_flags::use_scale | normalization_flags::use_shift;

// torch: running = (1 - momentum) * running + momentum * batch statistic,
// with the unbiased variance (n / (n - 1)) for running_var.
void update_running(RunState::Running& r, const memory& mean, const memory& var,
                    double momentum, int64_t n) {
  const auto* m = static_cast<const float*>(mean.get_data_handle());
  const auto* v = static_cast<const float*>(var.get_data_handle());
  const double unbias = n > 1 ? static_cast<double>(n) / (n - 1) : 1.0;
  for (size_t c = 0; c < r.mean.size(); ++c) {
    r.mean[c] =
        static_cast<float>((1 - momentum) * r.mean[c] + momentum * m[c]);
    r.var[c] = static_cast<float>((1 - momentum) * r.var[c] +
                                  momentum * v[c] * unbias);
  }
}

// The memory a batch norm's forward leaves for its backward.
struct BnState {
  memory src, mean, var, ws;
  ParamStore::Ref scale, shift;
};

void bn_forward(LayerCtx& c, const BnState& b,
                const dnnl::batch_normalization_forward::primitive_desc& pd,
                const dnnl::batch_normalization_forward::primitive_desc& infer,
                int64_t per_channel) {
  Net& net = c.net;
  const Args common{{DNNL_ARG_SRC, b.src},
                    {DNNL_ARG_DST, c.dst().mem},
                    {DNNL_ARG_SCALE, b.scale.weights},
                    {DNNL_ARG_SHIFT, b.shift.weights}};
  Args train = common;
  train[DNNL_ARG_MEAN] = b.mean;
  train[DNNL_ARG_VARIANCE] = b.var;
  train[DNNL_ARG_WORKSPACE] = b.ws;
  net.fwd(When::kTrain, dnnl::batch_normalization_forward(pd), train);
  RunState::Running* r = &running_stats(c.state, c.index, c.src().dims[1]);
  const double momentum = c.l.momentum;
  const memory mean = b.mean, var = b.var;
  net.fwd(When::kTrain,
          [=] { update_running(*r, mean, var, momentum, per_channel); });
  const Md channel = pd.mean_desc();
  Args inference = common;
  inference[DNNL_ARG_MEAN] = memory(channel, net.engine(), r->mean.data());
  inference[DNNL_ARG_VARIANCE] = memory(channel, net.engine(), r->var.data());
  net.fwd(When::kInfer, dnnl::batch_normalization_forward(infer), inference);
}

void bn_backward(LayerCtx& c, const BnState& b,
                 const dnnl::batch_normalization_backward::primitive_desc& pb) {
  Net& net = c.net;
  net.begin_layer(c.index);
  // prop_kind::backward always writes diff_src; a scratch takes it when the
  // input needs no gradient.
  const memory diff_src = c.src_needs_grad()
                              ? net.grad_out(c.in[0], pb.diff_src_desc())
                              : net.alloc(pb.diff_src_desc());
  net.bwd(dnnl::batch_normalization_backward(pb),
          {{DNNL_ARG_SRC, b.src},
           {DNNL_ARG_MEAN, b.mean},
           {DNNL_ARG_VARIANCE, b.var},
           {DNNL_ARG_DIFF_DST, net.bwd_as(c.dst().diff, pb.diff_dst_desc())},
           {DNNL_ARG_SCALE, b.scale.weights},
           {DNNL_ARG_SHIFT, b.shift.weights},
           {DNNL_ARG_WORKSPACE, b.ws},
           {DNNL_ARG_DIFF_SRC, diff_src},
           {DNNL_ARG_DIFF_SCALE, b.scale.grad},
           {DNNL_ARG_DIFF_SHIFT, b.shift.grad}});
  if (c.src_needs_grad()) net.grad_commit(c.in[0], diff_src);
}

}  // namespace

RunState::Running& running_stats(RunState& s, int layer, int64_t channels) {
  RunState::Running& r = s.running[layer];
  if (r.mean.empty()) {
    r.mean.assign(channels, 0.f);
    r.var.assign(channels, 1.f);
  }
  return r;
}

void build_batch_norm(LayerCtx& c) {
  Net& net = c.net;
  const model::Layer& l = c.l;
  const Md md = net.md_or_plain(c.in[0]);
  const Dims& dims = c.src().dims;
  int64_t per_channel = dims[0];
  for (size_t d = 2; d < dims.size(); ++d) per_channel *= dims[d];
  const auto eps = static_cast<float>(l.eps);
  // A fused ReLU: the backward takes the ReLU's gradient and applies its
  // derivative from a bit mask the forward leaves in the workspace.
  const auto flags = c.fuse_relu
                         ? kScaleShift | normalization_flags::fuse_norm_relu
                         : kScaleShift;
  const dnnl::batch_normalization_forward::primitive_desc pd(
      {prop_kind::forward_training, md, eps, flags}, net.attr(), net.engine());
  const dnnl::batch_normalization_forward::primitive_desc pd_infer(
      {prop_kind::forward_inference, md, eps,
       flags | normalization_flags::use_global_stats},
      net.attr(), net.engine());
  net.define(c.out, pd.dst_desc());
  const Md channel({dims[1]}, Dt::f32, Tag::a);
  const BnState b{net.src_as(c.in[0], md),
                  net.alloc(pd.mean_desc()),
                  net.alloc(pd.variance_desc()),
                  net.alloc(pd.workspace_desc()),
                  c.params.add(l.name + ".weight", channel, channel, channel),
                  c.params.add(l.name + ".bias", channel, channel, channel)};
  bn_forward(c, b, pd, pd_infer, per_channel);
  if (!c.dst().needs_grad) return;  // an inference-only build
  bn_backward(c, b,
              {{prop_kind::backward, pd.dst_desc(), md, eps, flags},
               net.attr(),
               net.engine(),
               pd});
}

void build_lrn(LayerCtx& c) {
  Net& net = c.net;
  const model::Layer& l = c.l;
  const Md md = net.md_or_plain(c.in[0]);
  const auto alg = algorithm::lrn_across_channels;
  const auto alpha = static_cast<float>(l.alpha);
  const auto beta = static_cast<float>(l.beta);
  const auto k = static_cast<float>(l.k);
  const dnnl::lrn_forward::primitive_desc pd(
      {prop_kind::forward_training, alg, md, l.size, alpha, beta, k},
      net.attr(), net.engine());
  net.define(c.out, pd.dst_desc());
  const memory src = net.src_as(c.in[0], pd.src_desc());
  const memory ws = net.alloc(pd.workspace_desc());
  net.fwd(When::kAlways, dnnl::lrn_forward(pd),
          {{DNNL_ARG_SRC, src},
           {DNNL_ARG_DST, c.dst().mem},
           {DNNL_ARG_WORKSPACE, ws}});
  if (!c.src_needs_grad()) return;
  net.begin_layer(c.index);
  const dnnl::lrn_backward::primitive_desc pb(
      {alg, pd.src_desc(), pd.dst_desc(), l.size, alpha, beta, k}, net.attr(),
      net.engine(), pd);
  const memory diff_src = net.grad_out(c.in[0], pb.diff_src_desc());
  net.bwd(dnnl::lrn_backward(pb),
          {{DNNL_ARG_SRC, src},
           {DNNL_ARG_DIFF_DST, net.bwd_as(c.dst().diff, pb.diff_dst_desc())},
           {DNNL_ARG_WORKSPACE, ws},
           {DNNL_ARG_DIFF_SRC, diff_src}});
  net.grad_commit(c.in[0], diff_src);
}

}  // namespace nnbench::engines::onednn
