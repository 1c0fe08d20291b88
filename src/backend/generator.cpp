#include "backend/generator.h"

#include "model/generation.h"

namespace nnbench::backend {

void check_generates(const model::Model& m, const GenerationShape& shape) {
  if (const std::string why = model::generation_problem(m); !why.empty())
    throw Unimplemented("generation: " + why);
  model::with_sequence(m, shape.prompt + shape.new_tokens);
}

}  // namespace nnbench::backend
