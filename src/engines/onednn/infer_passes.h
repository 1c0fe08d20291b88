#pragma once
// The passes an inference-only build makes over the layer list before
// building it: which batch norms fold into the conv or linear before them,
// which adds fuse into one, and (int8) which values are written as int8.
#include <vector>

#include "engines/onednn/ops.h"
#include "model/model.h"

namespace nnbench::engines::onednn {

constexpr int kNoSum = -2;

struct InferPasses {
  std::vector<int> norm_of;    // the batch norm folded into layer i, or -1
  std::vector<int> sum_from;   // the value an add fused into i adds, kNoSum
  std::vector<bool> int8_out;  // layer i writes its output as int8
};

// An int8 layer with a fused add holds the addend in its output buffer as
// int8 at the addend's own level (a conv: its sum post-op reads that type);
// else at the output's level (a linear: oneDNN 2.6's int8 inner product
// takes no typed sum).
inline bool holds_addend_as_int8(const model::Layer& l) {
  return l.op == model::Op::kConv2d;
}

// With infer null (a build that trains) nothing changes. Otherwise `out`
// (where each layer writes) and `skip` (layers another one builds) are
// updated for the folded norms and fused adds.
InferPasses infer_passes(const model::Model& m,
                         const std::vector<std::vector<int>>& inputs,
                         const InferPlan* infer, std::vector<int>* out,
                         std::vector<bool>* skip);

}  // namespace nnbench::engines::onednn
