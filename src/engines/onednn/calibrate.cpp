// int8 calibration: the range (min, max) each quantized layer's input takes
// over the calibration samples, as ONNX Runtime's MinMax calibration
// records it.
#include <algorithm>
#include <iterator>
#include <limits>

#include "engines/onednn/graph.h"
#include "host/tensor_file.h"
#include "model/analysis.h"
#include "util/error.h"

namespace nnbench::engines::onednn {
namespace {

constexpr int64_t kChunk = 16;

// Samples first..first+n of `all` (wrapping around: a repeated sample
// leaves a range as it is) as a batch.
host::Tensor chunk(const host::Tensor& all, int64_t first, int64_t n) {
  const int64_t total = all.shape.at(0);
  const bool ints = all.dtype == model::DType::kInt64;
  const size_t per = (ints ? all.i.size() : all.f.size()) / total;
  host::Tensor t;
  t.shape = all.shape;
  t.shape[0] = n;
  t.dtype = all.dtype;
  for (int64_t k = 0; k < n; ++k) {
    const size_t at = ((first + k) % total) * per;
    if (ints)
      t.i.insert(t.i.end(), all.i.begin() + at, all.i.begin() + at + per);
    else
      t.f.insert(t.f.end(), all.f.begin() + at, all.f.begin() + at + per);
  }
  return t;
}

void widen(Range& r, const float* v, size_t n) {
  for (size_t k = 0; k < n; ++k) {
    r.min = std::min(r.min, v[k]);
    r.max = std::max(r.max, v[k]);
  }
}

}  // namespace

void widen(Range& r, const memory& m) {
  widen(r, static_cast<const float*>(m.get_data_handle()),
        m.get_desc().get_size() / sizeof(float));
}

std::map<int, Range> calibrate(const model::Model& m, const std::string& file,
                               const dnnl::engine& eng, ParamStates* params,
                               RunState* state, int64_t* samples,
                               std::map<std::string, Range>* inner) {
  if (file.empty())
    throw Error(
        "oneDNN backend: int8 needs calibration samples (the options' "
        "calibration file)");
  const auto tensors = host::read_tensors(file);
  const auto it = tensors.find("input");
  if (it == tensors.end() || it->second.shape.empty() ||
      it->second.shape[0] <= 0 || it->second.dtype != m.input.dtype)
    throw Error("oneDNN backend: calibration file " + file +
                " has no input samples of the model's type");
  const host::Tensor& all = it->second;
  *samples = all.shape[0];
  const int64_t batch = std::min(kChunk, *samples);

  // The inputs of quantized layers (an attention's: its input
  // projection), and of adds: an add fused into a conv
  // holds its other input in the conv's output buffer, as int8 at that
  // input's own level (ops_dense_infer.cpp).
  std::map<int, Range> ranges;
  for (int i = 0; i < static_cast<int>(m.layers.size()); ++i) {
    const model::Op op = m.layers[i].op;
    if (op == model::Op::kConv2d || op == model::Op::kLinear ||
        op == model::Op::kAttention || op == model::Op::kTiedLinear)
      ranges[model::layer_inputs(m, i)[0]] = kNoRange;
    if (op == model::Op::kAdd)
      for (int id : model::layer_inputs(m, i)) ranges[id] = kNoRange;
  }

  InferPlan fp32;
  inner->clear();
  fp32.observe = inner;
  Graph g = build_graph(m, batch, Dt::f32, eng, params, state, 0, &fp32);
  Net& net = *g.net;
  // An add's input that a fused conv writes straight into the add's
  // output is never a value of its own.
  for (auto it = ranges.begin(); it != ranges.end();)
    it = net.value(it->first).md.is_zero() ? ranges.erase(it) : std::next(it);
  for (int64_t first = 0; first < *samples; first += batch) {
    host::Tensor in = chunk(all, first, batch);
    memory bound;
    if (in.dtype == model::DType::kInt64) {
      state->tokens = in.i.data();
    } else {
      const memory host(net.plain(-1, Dt::f32), eng, in.f.data());
      bound = memory(net.value(-1).md, eng);
      make_reorder(host, bound)
          .execute(net.stream(), {{DNNL_ARG_FROM, host}, {DNNL_ARG_TO, bound}});
      net.value(-1).mem.set_data_handle(bound.get_data_handle());
    }
    net.run_forward(false);
    for (auto& [id, range] : ranges) {
      std::vector<float> plain(net.plain(id, Dt::f32).get_size() /
                               sizeof(float));
      const memory to(net.plain(id, Dt::f32), eng, plain.data());
      make_reorder(net.value(id).mem, to)
          .execute(net.stream(),
                   {{DNNL_ARG_FROM, net.value(id).mem}, {DNNL_ARG_TO, to}});
      net.stream().wait();
      widen(range, plain.data(), plain.size());
    }
  }
  state->tokens = nullptr;
  return ranges;
}

}  // namespace nnbench::engines::onednn
