#pragma once
// Op builders: each adds one layer's forward steps and backward steps to a
// Net, creating its primitives and memory once for the build's batch size.
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engines/onednn/net.h"
#include "engines/onednn/param_store.h"
#include "model/model.h"

namespace nnbench::engines::onednn {

// State that outlives a build (a new batch size rebuilds the net).
struct RunState {
  struct Running {
    std::vector<float> mean, var;
  };
  std::map<int, Running> running;  // batch-norm statistics by layer
  uint64_t seed = 1;
  uint64_t steps = 0;  // train steps so far: each draws new dropout masks
  const int64_t* tokens = nullptr;  // the bound batch's token ids, if any
  // Generation: the position of the bound tokens' first (learned positions
  // are read from there) and each attention layer's KV cache.
  int64_t position = 0;
  struct Cache {
    std::vector<float> k, v;  // [N, heads, capacity, head width]
  };
  std::map<int, Cache> caches;  // by attention layer
};

// The batch-norm statistics of layer `layer`, created (mean 0, variance 1,
// torch's start) on first use.
RunState::Running& running_stats(RunState& s, int layer, int64_t channels);

// What a value held over the calibration samples.
struct Range {
  float min = 0, max = 0;
};
// A range nothing has widened yet.
inline constexpr Range kNoRange{std::numeric_limits<float>::max(),
                                std::numeric_limits<float>::lowest()};
// Widens r over every element of the fp32 buffer m.
void widen(Range& r, const memory& m);

// An inference-only build (compile without a train batch): conv and linear
// layers hold constant weights, a batch norm that alone reads one is folded
// into it, an add it alone feeds is fused into it (infer_passes.h), and
// with int8 they run quantized from calibrated ranges.
struct InferPlan {
  bool int8 = false;
  bool vnni = true;             // weight_levels() below
  std::map<int, Range> ranges;  // by value id: the inputs of quantized layers
  // Ranges of buffers inside a layer that a quantized step reads (an
  // attention's heads' context: "<layer>.ctx"), and where calibration
  // records them (its fp32 build's plan only; layers widen them each run).
  std::map<std::string, Range> inner;
  std::map<std::string, Range>* observe = nullptr;
  // Generation (engines/onednn/generator.h): attention layers keep their
  // keys and values in RunState::caches, `kv_capacity` positions each, and
  // the output head reads only the last position. 0: a plain build.
  int64_t kv_capacity = 0;
  // Generation at int8: the one-token step's linears and head read s8
  // weights, one fp32 scale per output row (Gemv::int8_from; gemv_step
  // says what the activations run at).
  bool int8_weights = false;
};

// The levels each side a layer's weights are quantized to: 127 with VNNI.
// Without, oneDNN's u8 x s8 pairs can saturate 16-bit intermediate sums, so
// 63 in the end; where oneDNN's own weight reorder scales the weights
// (`adjust`: its scale_adjust, 0.5 for a conv with s8 inputs), 63 / adjust
// before it.
inline float weight_levels(const InferPlan& p, float adjust) {
  if (p.vnni) return 127.f;
  return std::round(63.f / adjust);
}

struct LayerCtx {
  Net& net;
  ParamStore& params;
  RunState& state;
  const model::Layer& l;
  int index;            // the layer, and the id of its output value
  std::vector<int> in;  // ids of the input values
  int out;              // where the output goes: a fused ReLU's value
  bool fuse_relu = false;
  // A GELU fused after this linear (inference builds only: its backward
  // reads the pre-activation, which a fused build never writes).
  const model::Layer* gelu = nullptr;
  const InferPlan* infer = nullptr;    // null in builds that train
  const model::Layer* norm = nullptr;  // a batch norm folded into this layer
  int norm_index = -1;
  bool int8_out = false;  // only quantized layers read the output
  bool sum = false;       // a fused add: the output starts as value sum_from
  int sum_from = 0;
  const model::Model* model = nullptr;  // the layers others name (tied)

  Value& src(size_t k = 0) { return net.value(in.at(k)); }
  Value& dst() { return net.value(out); }
  bool src_needs_grad(size_t k = 0) { return src(k).needs_grad; }
};

// oneDNN's algorithm for a GELU layer: GPT-2's tanh form or the exact one.
inline dnnl::algorithm gelu_algorithm(const model::Layer& l) {
  return l.approximate ? dnnl::algorithm::eltwise_gelu_tanh
                       : dnnl::algorithm::eltwise_gelu_erf;
}

// The activation fused after a conv or linear as a post-op (a ReLU, or an
// inference build's GELU), after any sum or binary add post-op already
// appended: an add fuses only where it reads the layer's own output
// (infer_passes.cpp).
void append_activation(const LayerCtx& c, dnnl::post_ops& po);

// Shapes with the batch dim first, in a layout the primitive may choose.
inline Md any_md(const Dims& dims, Dt dt) { return Md(dims, dt, Tag::any); }

// A generation build's one-token step (InferPlan::kv_capacity): its linears
// run as matrix-vector products on plain weights (gemv_step).
inline bool one_token(const LayerCtx& c, int64_t tokens) {
  return c.infer != nullptr && c.infer->kv_capacity > 0 && tokens == 1;
}

// Whether gemv_step's int8 loop quantizes its inputs too and sums in int32
// with AVX512-VNNI (at x86-64-v4 where oneDNN's effective ISA has VNNI),
// rather than widening the weights to fp32 (weight-only).
bool gemv_int8_vnni();

// A generation build at int8 whose linears all take gemv_step's int8
// weights and quantized inputs, the prompt's too (many rows at once, as a
// matrix product): where that loop has VNNI. Without
// VNNI a prompt's linears stay oneDNN's fp32 (the weight-only loop would
// widen every weight for every row).
inline bool int8_rows(const LayerCtx& c) {
  return c.infer != nullptr && c.infer->kv_capacity > 0 &&
         c.infer->int8_weights && gemv_int8_vnni();
}

// Whether a linear of `tokens` positions runs as gemv_step: a token's, or
// any at int8 where int8_rows.
inline bool gemv_rows(const LayerCtx& c, int64_t tokens) {
  return one_token(c, tokens) || int8_rows(c);
}

// y [rows, out] = x [rows, in] w^T (w plain [out, in]) + b, added to what y
// holds with `accumulate` (a fused residual add), then a ReLU with `relu`;
// plain buffers of the build's type (fp32, or bf16 with fp32 sums), b
// (fp32 or bf16) empty for no bias (ops_gemv.cpp).
struct Gemv {
  memory x, w, b, y;
  int64_t rows = 0, in = 0, out = 0;
  bool accumulate = false, relu = false;
  // Weight-only int8 (InferPlan::int8_weights): the canonical fp32 weights
  // [out, in], quantized here to s8 with one scale per output row; w is
  // then not read.
  const std::vector<float>* int8_from = nullptr;
  // Where the s8 weights are kept (the build's ParamStore::int8_pages);
  // null: the heap.
  util::HugeArena* int8_pages = nullptr;
};
void gemv_step(Net& net, const Gemv& g);
// The canonical weights of parameter `name` where the plan asks for
// int8 (a token's build), else null (Gemv::int8_from).
const std::vector<float>* int8_weights_of(const LayerCtx& c,
                                          const std::string& name);
// The ISA level gemv_step's loop was built for and runs at: "x86-64-v4",
// "x86-64-v3" or "x86-64 baseline", by oneDNN's effective ISA.
std::string gemv_level();

// The weights of a linear layer: in the layout its primitive prefers, but
// plain ([out, in], the canonical one) where gemv_step runs it (a
// generation build's one-token step, or an int8 prompt's rows): the loop
// reads them so, or their int8 copy, and no blocked copy is made.
inline Md linear_weights_md(const LayerCtx& c, const Dims& dims,
                            int64_t tokens) {
  return gemv_rows(c, tokens) ? Md(dims, c.net.dt(), Tag::ab)
                              : any_md(dims, c.net.dt());
}

inline bool is_reference(const dnnl::primitive_desc& pd) {
  return is_reference_name(pd.impl_info_str());
}

// The first of `count` candidate primitive descriptors (make(i) builds
// candidate i: other layouts, another algorithm) that oneDNN accepts with an
// optimised kernel. When every accepted one is a reference kernel, the first
// of those: it runs, and the net names it in the record (Net::check_impl).
// When oneDNN refuses all, its last refusal (the plainest candidate's).
template <typename Make>
auto first_optimised(int count, Make make) -> decltype(make(0)) {
  std::optional<decltype(make(0))> slow;
  std::exception_ptr refused;
  for (int i = 0; i < count; ++i) {
    try {
      auto pd = make(i);
      if (!is_reference(pd)) return pd;
      if (!slow) slow = std::move(pd);
    } catch (const dnnl::error&) {
      refused = std::current_exception();
    }
  }
  if (slow) return *slow;
  std::rethrow_exception(refused);
}

// make(true): a primitive descriptor with the layouts the caller already
// has (no reorders); make(false): with `any`. The first unless oneDNN
// rejects it or takes it only with a slow reference kernel.
template <typename Make>
auto prefer_given_layouts(Make make) {
  return first_optimised(2, [&](int i) { return make(i == 0); });
}

// The gradient at the layer's dst in layout `want`; through the fused
// ReLU's derivative, computed from its output, where one is fused.
memory diff_dst_of(LayerCtx& c, const Md& want);

// Throws Unimplemented for a pooling oneDNN cannot compute like torch.
void check_pool(const model::Layer& l, const Dims& src, const Dims& dst);

// A view of `base` through md, `offset` bytes in, re-pointed by a forward
// (fwd_view) or backward (bwd_view) step before the steps added after it:
// the base may get its buffer only later (the model input at each step,
// gradients in finalize).
memory fwd_view(Net& net, const memory& base, const Md& md, size_t offset = 0);
memory bwd_view(Net& net, const memory& base, const Md& md, size_t offset = 0);

// The net's attributes with a ReLU post-op where one is fused.
dnnl::primitive_attr relu_attr(const Net& net, bool fuse);
// int8: a value's type and scale from its calibrated range (u8 where it
// was never negative: the output of a ReLU); an int8 value is value * scale.
struct Level {
  Dt dt;
  float scale;
};
Level level_of(const LayerCtx& c, int id);
Level level_of(const Range& r);
// A fused add (LayerCtx::sum): the steps that copy value sum_from into
// `to`, the layer's output buffer, held as value * `scale` (1 in fp32).
void copy_addend(LayerCtx& c, const memory& to, float scale);
// Conv or linear of an inference-only build.
void build_dense_infer(LayerCtx& c);
// An int8 inner product of an inference build on plain rows: value `src`
// seen as [rows, in] (quantized per tensor from its calibrated range; or,
// where `src_mem` is given, that fp32 buffer [rows, in] and `src_range`),
// parameters `weight` ([out, in], s8 per output channel) and `bias` ("":
// none), into `dst` seen as [rows, out]: in the net's type, or int8 at the
// level of value `dst_level` where that is >= 0 (the buffer must be of
// that type); `post_ops` run on the result (a sum reads dst at dst's level).
struct RowsInt8 {
  int src = 0;
  memory src_mem;
  Range src_range;
  std::string weight, bias;
  int64_t rows = 0, in = 0, out = 0;
  memory dst;
  int dst_level = -1;
  dnnl::post_ops post_ops;
};
void linear_rows_int8(LayerCtx& c, const RowsInt8& r);
// An inference build's fp32 or bf16 linear on plain rows past the
// matrix-vector loop's: `y` [rows, out] = `x` [rows, in] W^T (+ b)
// (+ `addend`, a fused residual add read in place: no copy into y first),
// then the layer's fused activation where `activation`, as oneDNN's matmul,
// W's canonical [out, in] read as [in, out] transposed. From memory, oneDNN
// 2.6's brgemm matmul ran BERT-base's linears faster than its inner product,
// and its AVX2 matmul (gemm:jit) slower (docs/performance.md): false, and
// nothing added, where oneDNN offers no brgemm matmul.
struct RowsLinear {
  memory x, y, addend;  // addend: [rows, out] of the build's type, or none
  int64_t rows = 0, in = 0, out = 0;
  std::string weight, bias;  // parameter names; bias "": none
  bool activation = false;
};
bool matmul_rows(LayerCtx& c, const RowsLinear& r);
// The weight dims oneDNN wants for a conv (goihw when grouped).
Dims conv_weight_dims(const model::Layer& l, int64_t in_channels);

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
void build_lstm(LayerCtx& c);
// A linear layer on every step of a [T, F] sequence.
void build_seq_linear(LayerCtx& c);
// Transformers: layer norm and the tied head (ops_transformer.cpp),
// attention (ops_attention.cpp), positions and [CLS] (ops_token.cpp).
void build_layer_norm(LayerCtx& c);
void build_positions(LayerCtx& c);
void build_seq_first(LayerCtx& c);
void build_attention(LayerCtx& c);
void build_tied_linear(LayerCtx& c);

}  // namespace nnbench::engines::onednn
