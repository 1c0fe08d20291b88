#pragma once
// Finite-difference checks of the reference network's gradients, in double
// precision so that central differences are accurate to ~1e-9.
#include <cstdint>

#include "engines/reference/network.h"
#include "model/model.h"

namespace nnbench::engines::reference::testing {

// A seeded batch (data/synthetic.h) converted to double.
Batch<double> double_batch(const model::Model& m, int64_t n, uint64_t seed);

// Compares the analytic gradient of the training loss with central
// differences for every parameter element and every float input element;
// reports failures through GoogleTest. Also fails if every gradient is zero
// (a layer that ignores its input would otherwise pass).
void check_gradients(const model::Model& m, int64_t batch);

}  // namespace nnbench::engines::reference::testing
