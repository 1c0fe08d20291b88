#include "engines/onednn/infer_passes.h"

#include <algorithm>
#include <map>

namespace nnbench::engines::onednn {
namespace {

using model::Op;

bool is_dense(const model::Model& m, int i) {
  return m.layers[i].op == Op::kConv2d || m.layers[i].op == Op::kLinear;
}

// The layers built (not skipped) that read value `id`, once per read.
std::vector<int> readers_of(int id, const std::vector<std::vector<int>>& inputs,
                            const std::vector<bool>& skip) {
  std::vector<int> out;
  for (int j = 0; j < static_cast<int>(inputs.size()); ++j)
    if (!skip[j])
      for (int k : inputs[j])
        if (k == id) out.push_back(j);
  return out;
}

// Inference-only builds: a batch norm whose input is a conv or linear that
// nothing else reads folds into that layer (norm_of[i]: the norm folded
// into layer i), which then writes where the norm would have, its fused
// ReLU's value included; the norm is skipped.
std::vector<int> fold_norms(const model::Model& m,
                            const std::vector<std::vector<int>>& inputs,
                            std::vector<int>* out, std::vector<bool>* skip) {
  std::vector<int> norm_of(m.layers.size(), -1);
  for (int j = 0; j < static_cast<int>(m.layers.size()); ++j) {
    if (m.layers[j].op != Op::kBatchNorm || inputs[j].size() != 1) continue;
    const int i = inputs[j][0];
    if (i < 0 || !is_dense(m, i) || readers_of(i, inputs, *skip).size() != 1)
      continue;
    norm_of[i] = j;
    (*out)[i] = (*out)[j];
    (*skip)[j] = true;
  }
  return norm_of;
}

// int8: the values only quantized layers (conv, linear) read, which their
// producer, a conv or linear too, then writes as int8 instead of in fp32
// for each reader to quantize. Run after the adds fuse: an add fused into
// a layer reads its addend through a copy into the layer's output buffer.
// A conv holds it there as int8 at the addend's own level (its sum post-op
// reads it as that type), so its range must be known; oneDNN 2.6's int8
// inner product takes no typed sum, so a linear holds it at the output's
// level, and its calibrated range must lie within the output's (a negative
// addend, or one above the output's maximum, would saturate). At least one
// quantized reader must remain: calibration records their inputs' ranges.
std::vector<bool> int8_outputs(const model::Model& m,
                               const std::vector<std::vector<int>>& inputs,
                               const std::vector<int>& out,
                               const std::vector<bool>& skip,
                               const std::vector<int>& sum_from,
                               const std::map<int, Range>& ranges) {
  auto within = [&](int inner, int outer) {
    const auto a = ranges.find(inner), b = ranges.find(outer);
    return a != ranges.end() && b != ranges.end() &&
           a->second.min >= std::min(0.f, b->second.min) &&
           a->second.max <= b->second.max &&
           (b->second.min < 0 || a->second.min >= 0);
  };
  std::vector<bool> int8(m.layers.size(), false);
  for (int i = 0; i < static_cast<int>(m.layers.size()); ++i) {
    if (skip[i] || !is_dense(m, i)) continue;
    const int y = sum_from[i];
    if (y != kNoSum && !(holds_addend_as_int8(m.layers[i]) ? ranges.count(y) > 0
                                                           : within(y, out[i])))
      continue;
    const auto readers = readers_of(out[i], inputs, skip);
    int8[i] =
        !readers.empty() && std::all_of(readers.begin(), readers.end(),
                                        [&](int j) { return is_dense(m, j); });
  }
  return int8;
}

// The layer that writes value `id` (-1 for the model input itself).
int writer_of(int id, const std::vector<int>& out,
              const std::vector<bool>& skip) {
  for (int i = 0; i < static_cast<int>(out.size()); ++i)
    if (!skip[i] && out[i] == id) return i;
  return -1;
}

// Inference-only builds: an add whose one input comes from a conv or
// linear that nothing else reads, and whose other input is written before
// that layer runs, is fused into the layer: a step copies the other input
// into the add's output, which the layer then adds its result to (oneDNN's
// sum post-op, the matrix-vector loop's accumulate), or the layer reads it
// in place (matmul_rows' binary post-op), its ReLU included. An add that reads
// an activation fused into the layer (conv -> ReLU -> add) stays apart: the
// layer's post-ops apply the sum before the activation. sum_from[i]: the value
// copied for layer i (or kNoSum).
std::vector<int> fuse_adds(const model::Model& m,
                           const std::vector<std::vector<int>>& inputs,
                           std::vector<int>* out, std::vector<bool>* skip) {
  const int n = static_cast<int>(m.layers.size());
  std::vector<int> sum_from(n, kNoSum);
  for (int a = 0; a < n; ++a) {
    if (m.layers[a].op != Op::kAdd || (*skip)[a] || inputs[a].size() != 2 ||
        inputs[a][0] == inputs[a][1])
      continue;
    for (int k = 0; k < 2; ++k) {
      const int x = inputs[a][k], y = inputs[a][1 - k];
      if (x >= 0 &&
          (m.layers[x].op == Op::kRelu || m.layers[x].op == Op::kGelu))
        continue;
      const int i = x < 0 ? -1 : writer_of(x, *out, *skip);
      if (i < 0 || sum_from[i] != kNoSum || !is_dense(m, i) ||
          readers_of(x, inputs, *skip).size() != 1)
        continue;
      if (y >= 0 && writer_of(y, *out, *skip) >= i) continue;
      sum_from[i] = y;
      (*out)[i] = (*out)[a];
      (*skip)[a] = true;
      break;
    }
  }
  return sum_from;
}

}  // namespace

InferPasses infer_passes(const model::Model& m,
                         const std::vector<std::vector<int>>& inputs,
                         const InferPlan* infer, std::vector<int>* out,
                         std::vector<bool>* skip) {
  const size_t n = m.layers.size();
  if (infer == nullptr)
    return {std::vector<int>(n, -1), std::vector<int>(n, kNoSum),
            std::vector<bool>(n, false)};
  InferPasses p;
  p.norm_of = fold_norms(m, inputs, out, skip);
  p.sum_from = fuse_adds(m, inputs, out, skip);
  p.int8_out = infer->int8 ? int8_outputs(m, inputs, *out, *skip, p.sum_from,
                                          infer->ranges)
                           : std::vector<bool>(n, false);
  return p;
}

}  // namespace nnbench::engines::onednn
