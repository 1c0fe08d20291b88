#pragma once
// Generation checked against the oracle: the same prompts decoded greedily
// by both, the candidate fed the oracle's tokens (teacher forcing), so that
// every step compares the two on the same sequence: the same next token at
// every step, and the same logits where the candidate gives them. The
// oracle recomputes the whole sequence for each token; an engine's KV cache
// that keeps a wrong key, value or position changes its logits, and a
// large error its tokens.
#include <optional>
#include <vector>

#include "backend/backend.h"
#include "results/verification.h"

namespace nnbench::verify {

struct GenerationCheck {
  // The candidate's generator was made and generated (its checks judge
  // it); false where it was unimplemented or failed to start.
  bool started = false;
  std::vector<results::TensorCheck> checks;
  // Below fp32: every step's rows against the oracle's (verification.h).
  std::optional<results::Agreement> agreement;
};

// The checks for `m` (dropout already off) at `options`. At fp32:
// "generation (greedy tokens ...)", the fraction of steps whose next token
// differs, tolerance 0; then, where the candidate's generator gives its
// logits (backend::Generator::last_logits), "generation (logits ...)",
// the largest step's relative error (as the outputs') with fp32's output
// tolerance. Below fp32 the logits are judged with that precision's
// output tolerance (int8: 5e-2) and the tokens are not judged but
// stated (agreement: a near-tie among synthetic weights' logits flips under
// rounding without meaning much), with the mean KL of the softmaxes where there
// are logits. None for a model that does not generate
// (model::generation_problem), fewer than 16 learned positions, or a
// candidate whose generator is unimplemented at that precision.
GenerationCheck check_generation(backend::Backend& oracle,
                                 backend::Backend& candidate,
                                 const model::Model& m,
                                 const backend::Options& options);

}  // namespace nnbench::verify
