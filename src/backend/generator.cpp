#include "backend/generator.h"

#include "model/generation.h"
#include "util/error.h"

namespace nnbench::backend {

void check_generates(const model::Model& m, const GenerationShape& shape) {
  if (const std::string why = model::generation_problem(m); !why.empty())
    throw Unimplemented("generation: " + why);
  model::with_sequence(m, shape.prompt + shape.new_tokens);
}

int64_t check_prompts(const std::vector<std::vector<int64_t>>& prompts,
                      const GenerationShape& shape) {
  const auto n = static_cast<int64_t>(prompts.size());
  const int64_t t = n ? static_cast<int64_t>(prompts[0].size()) : 0;
  if (n != shape.batch || t < 1 || t > shape.prompt)
    throw Error("generation: " + std::to_string(n) + " prompts of " +
                std::to_string(t) + " tokens, the generator was sized for " +
                std::to_string(shape.batch) + " of at most " +
                std::to_string(shape.prompt));
  for (const auto& row : prompts)
    if (static_cast<int64_t>(row.size()) != t)
      throw Error("generation: prompts of different lengths");
  return t;
}

void check_decode(const std::vector<int64_t>& tokens,
                  const GenerationShape& shape) {
  if (static_cast<int64_t>(tokens.size()) != shape.batch)
    throw Error("generation: " + std::to_string(tokens.size()) +
                " tokens to decode for " + std::to_string(shape.batch) +
                " rows");
}

}  // namespace nnbench::backend
