#pragma once
// Generation on the oracle: no KV cache, the whole sequence through the
// model again for every token, so that an engine's cache is checked
// against plain arithmetic (nnbench verify's greedy tokens). Slow by
// design; never a benchmark.
#include <memory>

#include "backend/generator.h"

namespace nnbench::engines::reference {

// `o` checked by the caller (device, precision). Throws Unimplemented for a
// model that does not generate (model::generation_problem).
std::unique_ptr<backend::Generator> make_generator(
    const model::Model& m, const backend::Options& o,
    const backend::GenerationShape& shape);

}  // namespace nnbench::engines::reference
