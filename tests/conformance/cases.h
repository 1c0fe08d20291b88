#pragma once
// Small models for the conformance suite: one per layer type (each ends in a
// linear layer so every op sits inside a network with a loss), plus small
// zoo models.
#include <string>
#include <vector>

#include "model/model.h"

namespace nnbench::conformance {

struct Case {
  std::string name;
  model::Model model;
};

std::vector<Case> layer_cases();
std::vector<std::string> zoo_cases();

// The least each backend must support, per precision it states: half of
// the layer cases and two zoo models; at int8 a third of the layer cases
// (post-training quantization as PyTorch's dynamic quantization and
// Keras's quantize make it covers the layers with weights but
// convolutions, and the engine refuses what it would leave fp32: the 13
// image cases); unless a backend registered by a test (the toy: linear and
// relu only) says it runs fewer on purpose.
struct Minimum {
  size_t layers = 0, zoo = 0;
};
Minimum minimum_for(const std::string& backend, const std::string& precision);
void expect_minimum(const std::string& backend, Minimum m);

}  // namespace nnbench::conformance
