#pragma once
// What can be computed from a description alone: shapes, parameters, FLOPs.
#include <cstdint>
#include <vector>

#include "model/model.h"

namespace nnbench::model {

// Output shape of every layer. Throws nnbench::Error naming the layer on any
// mismatch or invalid attribute.
std::vector<Shape> infer_shapes(const Model& m);

// Trainable parameters of one layer given its input shapes.
int64_t layer_params(const Layer& l, const std::vector<Shape>& in_shapes);

struct Cost {
  int64_t params = 0;
  // Forward FLOPs per sample; a multiply-add counts as 2 FLOPs. Elementwise
  // ops count one FLOP per output element, pooling one per window element.
  double forward_flops = 0;
  // Training FLOPs per sample: 3x forward (the backward pass costs about two
  // forwards: gradients for inputs and for weights). Convention of
  // Kaplan et al. and of MLPerf reference estimates.
  double train_flops = 0;
  // Floats of activations kept per sample (sum of layer outputs); used to
  // estimate memory before a run.
  double activation_floats = 0;
};

Cost analyze(const Model& m);

int64_t numel(const Shape& s);

}  // namespace nnbench::model
