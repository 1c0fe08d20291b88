#pragma once
// Seeded synthetic batches shaped like the task's data. Values are random,
// never constant: zeros can run faster than real data (denormals, sparsity
// shortcuts) and make a benchmark lie.
#include <cstdint>
#include <vector>

#include "host/host.h"
#include "model/model.h"

namespace nnbench::data {

// Float inputs ~ N(0, 1); token ids uniform in [0, vocab). Labels: class ids
// uniform in [0, classes) with the output's shape minus its last dim for
// softmax cross-entropy, 0/1 of the output's shape for binary cross-entropy.
host::Batch synthetic_batch(const model::Model& m, int64_t batch,
                            uint64_t seed);

// Generation's prompts: `batch` rows of `prompt` token ids uniform in
// [0, vocab), seeded.
std::vector<std::vector<int64_t>> synthetic_prompts(int64_t batch,
                                                    int64_t prompt,
                                                    int64_t vocab,
                                                    uint64_t seed);

// Bytes one batch of this model occupies on the host.
double batch_bytes(const model::Model& m, int64_t batch);

}  // namespace nnbench::data
