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
  // Training FLOPs per sample, as executed: each layer's forward, plus
  // about one forward for its weight gradient where it has weights, plus
  // one for its input gradient where a parameter lies upstream. Kaplan et
  // al.'s 3 x forward counts input gradients no framework computes (the
  // first convolution's, from the data): with it, AlexNet-R's oneDNN
  // training step read 101.6 % of the best GEMM (docs/performance.md).
  double train_flops = 0;
  // Floats of activations kept per sample (sum of layer outputs); used to
  // estimate memory before a run.
  double activation_floats = 0;
};

Cost analyze(const Model& m);

int64_t numel(const Shape& s);

}  // namespace nnbench::model
