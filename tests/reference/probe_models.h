#pragma once
// Tiny models that exercise one op each (plus a final linear so the loss
// sees every value), shared by the gradient checks and the comparison with
// LibTorch.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/zoo/builder.h"

namespace nnbench::engines::reference::testing {

struct Probe {
  std::string name;
  model::Model model;
  int64_t batch;
};

// Float input of the given per-sample shape; `body` adds the layers.
model::Model float_model(const model::Shape& input,
                         const std::function<void(model::zoo::Builder&)>& body,
                         model::Loss loss = model::Loss::kSoftmaxCrossEntropy);
model::Model token_model(int64_t steps, int64_t vocab,
                         const std::function<void(model::zoo::Builder&)>& body);

// A parameter-free op given by its enum (tanh, softmax have no builder call).
int simple(model::zoo::Builder& b, int x, model::Op op);

// Every probe of the CNN and LSTM ops: one or more per op.
std::vector<Probe> probes();
// The transformer ops' probes (layer norm, GELU, positions, attention,
// the first position, tied embeddings).
std::vector<Probe> transformer_probes();

}  // namespace nnbench::engines::reference::testing
