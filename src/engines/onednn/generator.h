#pragma once
// Generation on nnbench's oneDNN engine: two inference-only builds of the
// model sharing one KV cache per attention layer (InferPlan::kv_capacity),
// one for the prompt, one for a single token per row, both with the output
// head on the last position only.
#include <dnnl.hpp>
#include <memory>

#include "backend/generator.h"

namespace nnbench::engines::onednn {

// At `dt` (fp32, or bf16 where the CPU has it: the caller's data_type);
// at precision int8, fp32 builds whose token step reads s8 weights
// (InferPlan::int8_weights). Throws Unimplemented for a model that does
// not generate, nnbench::Error for a shape the model cannot take.
std::unique_ptr<backend::Generator> make_generator(
    const model::Model& m, const backend::Options& o,
    const backend::GenerationShape& shape, dnnl::memory::data_type dt);

}  // namespace nnbench::engines::onednn
