#pragma once
// A model description: input spec, layers in topological order, loss.
// Shapes are per sample (no batch dimension): images [C,H,W], sequences
// [T,F], token ids [T].
#include <cstdint>
#include <string>
#include <vector>

#include "model/layer.h"

namespace nnbench::model {

using Shape = std::vector<int64_t>;

enum class DType { kFloat32, kInt64 };

struct InputSpec {
  Shape shape;
  DType dtype = DType::kFloat32;
  int64_t vocab = 0;  // token inputs: ids are in [0, vocab)
};

enum class Loss {
  // Log-softmax over the last dim with integer labels. The model's output is
  // logits: the final softmax is folded into the loss, as frameworks do.
  kSoftmaxCrossEntropy,
  // Sigmoid and binary cross-entropy, labels 0/1 of the output's shape.
  kSigmoidBinaryCrossEntropy,
};

struct Model {
  std::string name;
  std::string study;   // which study uses it
  std::string source;  // where the definition comes from
  std::string notes;   // conventions that change counts, deviations
  InputSpec input;
  std::vector<Layer> layers;
  Loss loss = Loss::kSoftmaxCrossEntropy;
};

std::string loss_name(Loss loss);
Loss loss_from_name(const std::string& name);
std::string dtype_name(DType dtype);
DType dtype_from_name(const std::string& name);

// Resolved input indices of layer i (expands the "previous layer" default).
std::vector<int> layer_inputs(const Model& m, int i);

std::string shape_str(const Shape& s);

}  // namespace nnbench::model
