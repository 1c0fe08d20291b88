#pragma once
// Op builders: each adds one layer's forward steps and backward steps to a
// Net, creating its primitives and memory once for the build's batch size.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backends/onednn/net.h"
#include "backends/onednn/param_store.h"
#include "model/layer.h"

namespace nnbench::backends::onednn {

// State that outlives a build (a new batch size rebuilds the net).
struct RunState {
  struct Running {
    std::vector<float> mean, var;
  };
  std::map<int, Running> running;  // batch-norm statistics by layer
  uint64_t seed = 1;
  uint64_t steps = 0;  // train steps so far: each draws new dropout masks
  const int64_t* tokens = nullptr;  // the bound batch's token ids, if any
};

struct LayerCtx {
  Net& net;
  ParamStore& params;
  RunState& state;
  const model::Layer& l;
  int index;            // the layer, and the id of its output value
  std::vector<int> in;  // ids of the input values
  int out;              // where the output goes: a fused ReLU's value
  bool fuse_relu = false;

  Value& src(size_t k = 0) { return net.value(in.at(k)); }
  Value& dst() { return net.value(out); }
  bool src_needs_grad(size_t k = 0) { return src(k).needs_grad; }
};

// Shapes with the batch dim first, in a layout the primitive may choose.
inline Md any_md(const Dims& dims, Dt dt) { return Md(dims, dt, Tag::any); }

inline bool is_reference(const dnnl::primitive_desc& pd) {
  return std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
}

// make(true): a primitive descriptor with the layouts the caller already
// has (no reorders); make(false): with `any`. The first unless oneDNN
// rejects it or takes it only with a slow reference kernel.
template <typename Make>
auto prefer_given_layouts(Make make) {
  try {
    auto pd = make(true);
    if (!is_reference(pd)) return pd;
  } catch (const dnnl::error&) {
  }
  return make(false);
}

// The gradient at the layer's dst in layout `want`; through the fused
// ReLU's derivative, computed from its output, where one is fused.
memory diff_dst_of(LayerCtx& c, const Md& want);

// Throws Unimplemented for a pooling oneDNN cannot compute like torch.
void check_pool(const model::Layer& l, const Dims& src, const Dims& dst);

void build_conv(LayerCtx& c);
void build_linear(LayerCtx& c);
void build_pool(LayerCtx& c);
void build_global_pool(LayerCtx& c);
void build_eltwise(LayerCtx& c);
void build_softmax(LayerCtx& c);
void build_batch_norm(LayerCtx& c);
void build_lrn(LayerCtx& c);
void build_dropout(LayerCtx& c);
void build_flatten(LayerCtx& c);
void build_add(LayerCtx& c);
void build_concat(LayerCtx& c);
void build_zero_pad(LayerCtx& c);
void build_embedding(LayerCtx& c);
void build_one_hot(LayerCtx& c);
void build_seq_mean(LayerCtx& c);

}  // namespace nnbench::backends::onednn
