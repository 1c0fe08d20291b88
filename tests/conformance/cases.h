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

}  // namespace nnbench::conformance
