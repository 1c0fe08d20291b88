#pragma once
// The trainable parameters a description implies, in one canonical layout,
// and their seeded initial values. Every backend starts from these exact
// values (no backend-specific initialisation), so runs on different backends
// compute the same function and can be checked against each other.
//
// Layouts (PyTorch's, so the LibTorch backend needs no reordering):
//   linear      <layer>.weight [out, in], <layer>.bias [out]
//   conv2d      <layer>.weight [out, in/groups, kh, kw], <layer>.bias [out]
//   batch_norm  <layer>.weight [C] (scale), <layer>.bias [C] (shift)
//   embedding   <layer>.weight [vocab, out]
//   lstm        <layer>.l<k>[_reverse].w_ih [4H, I], .w_hh [4H, H],
//               .b_ih [4H], and .b_hh [4H] only with lstm_biases = 2;
//               gate order i, f, g, o; I is the layer's input width.
#include <cstdint>
#include <string>
#include <vector>

#include "model/model.h"

namespace nnbench::model {

enum class Init {
  kUniformFanIn,  // U(-1/sqrt(fan_in), 1/sqrt(fan_in)): PyTorch's defaults
  kNormal,        // N(0, 1): embeddings
  kNormalSmall,   // N(0, 0.02): a transformer's embeddings and positions
  kOnes,          // batch-norm scale
  kZeros,         // batch-norm shift
};

struct ParamSpec {
  std::string name;
  int layer = 0;  // index of the layer that owns it
  Shape shape;
  Init init = Init::kUniformFanIn;
  int64_t fan_in = 1;
};

std::vector<ParamSpec> param_specs(const Model& m);

struct ParamValue {
  ParamSpec spec;
  std::vector<float> data;
};

// Values depend only on (seed, parameter name), not on order or backend.
std::vector<ParamValue> init_params(const Model& m, uint64_t seed);

}  // namespace nnbench::model
