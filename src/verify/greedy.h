#pragma once
// Generation checked against the oracle: the same prompts decoded greedily
// by both must give the same tokens. The oracle recomputes the whole
// sequence for each token; an engine's KV cache that keeps a wrong key,
// value or position changes its tokens.
#include <optional>

#include "backend/backend.h"
#include "results/verification.h"

namespace nnbench::verify {

// The check for `m` (dropout already off) at `options`, "generation"
// with the fraction of tokens that differ as its error and tolerance 0.
// None for a model that does not generate (model::generation_problem), a
// precision other than fp32, fewer than 16 learned positions, or a
// candidate whose generator is unimplemented.
std::optional<results::TensorCheck> check_greedy_tokens(
    backend::Backend& oracle, backend::Backend& candidate,
    const model::Model& m, const backend::Options& options);

}  // namespace nnbench::verify
