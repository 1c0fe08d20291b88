#pragma once
// Generation on LibTorch with a KV cache (network.h's forward_cached): the
// prompt once, then one token per step reading the cache, under
// InferenceMode as a plain LibTorch decoding loop runs.
#include <memory>
#include <string>

#include "backend/generator.h"

namespace nnbench::engines::torch_backend {

// fp32 or bf16 (the module converted, as PyTorch's model.to(bfloat16)).
// Throws Unimplemented for another precision or a model that
// does not generate (model::generation_problem), nnbench::Error for a
// shape the model cannot take (more tokens than learned positions).
// Why LibTorch's bf16 matrix products do not run on this CPU ("" when they
// do): a few tried once per process (oneDNN refuses them under
// ONEDNN_MAX_CPU_ISA=AVX2).
const std::string& bf16_problem();
// Why this LibTorch has no bf16 local_response_norm on the CPU ("" when it
// has), tried once (1.13's avg_pool3d has no bf16 kernel).
const std::string& bf16_lrn_problem();

std::unique_ptr<backend::Generator> make_generator(
    const model::Model& m, const backend::Options& o,
    const backend::GenerationShape& shape);

}  // namespace nnbench::engines::torch_backend
