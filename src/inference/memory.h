#pragma once
// The memory a LoadGen run is estimated to need, checked before anything is
// allocated, as `nnbench run` checks its own (bench/step_loop.h): samples
// loaded up front (performance and calibration samples) grow with the
// settings, and 10^8 of them grew nnbench until the kernel killed it.
#include "inference/settings.h"
#include "model/model.h"
#include "results/request.h"

namespace nnbench::inference {

// Bytes: the engine copies' weights and a step's activations, the
// performance samples (whole step batches, as they are made) and int8's
// calibration samples (in memory and in the file the engine reads).
double estimate_memory_bytes(const model::Model& m, const Settings& s,
                             const results::RunRequest& r);

// Throws results::RunError (state oom, source "estimate") when the estimate
// exceeds 90 % of the memory available, on the CPU, unless the request
// turned the check off (--no-memory-check): the same rule `run` applies.
void check_memory(const model::Model& m, const Settings& s,
                  const results::RunRequest& r);

}  // namespace nnbench::inference
