#pragma once
// Generation on LibTorch with a KV cache (network.h's forward_cached): the
// prompt once, then one token per step reading the cache, under
// InferenceMode as a plain LibTorch decoding loop runs.
#include <memory>

#include "backend/generator.h"

namespace nnbench::engines::torch_backend {

// fp32 or bf16 (the module converted, as PyTorch's model.to(bfloat16)).
// Throws Unimplemented for another precision or a model that
// does not generate (model::generation_problem), nnbench::Error for a
// shape the model cannot take (more tokens than learned positions).
std::unique_ptr<backend::Generator> make_generator(
    const model::Model& m, const backend::Options& o,
    const backend::GenerationShape& shape);

}  // namespace nnbench::engines::torch_backend
