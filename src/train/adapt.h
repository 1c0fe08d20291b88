#pragma once
// Fits a zoo model to a dataset whose vocabulary or class count differs from
// the published one (a text corpus other than Nietzsche's has another
// character set), and rejects a dataset whose inputs the model cannot read.
#include "backend/backend.h"
#include "data/dataset.h"
#include "model/model.h"

namespace nnbench::train {

// Throws nnbench::Error naming model, dataset and both shapes on a mismatch.
// Adaptations are appended to the model's notes, so its hash changes.
model::Model adapt_model(model::Model m, const data::Dataset& d);

// Gives a batch the model's per-sample input shape (same element count),
// and a binary model's labels the output's shape ([N] -> [N, 1]).
void reshape_inputs(host::Batch& b, const model::Model& m);

}  // namespace nnbench::train
