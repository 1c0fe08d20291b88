#pragma once
// Host-side data in plain vectors, batch dimension first: what datasets
// produce, what backends copy in and hand back for inspection. Its own
// folder so that data/ and backend/ share it without depending on each
// other.
#include <cstdint>
#include <vector>

#include "model/model.h"

namespace nnbench::host {

// Float inputs and outputs fill `f`; token ids and class labels fill `i`.
struct Tensor {
  std::vector<int64_t> shape;
  model::DType dtype = model::DType::kFloat32;
  std::vector<float> f;
  std::vector<int64_t> i;
};

struct Batch {
  Tensor input, labels;
};

}  // namespace nnbench::host
