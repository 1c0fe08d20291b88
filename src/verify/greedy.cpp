#include "verify/greedy.h"

#include "backend/generator.h"
#include "data/synthetic.h"
#include "model/generation.h"
#include "util/error.h"

namespace nnbench::verify {
namespace {

constexpr int64_t kRows = 2, kPrompt = 8, kNew = 8;

std::vector<int64_t> generate(backend::Generator& g,
                              const std::vector<std::vector<int64_t>>& p) {
  std::vector<int64_t> all, next = g.prefill(p);
  all.insert(all.end(), next.begin(), next.end());
  for (int64_t k = 1; k < kNew; ++k) {
    next = g.decode(next);
    all.insert(all.end(), next.begin(), next.end());
  }
  return all;
}

}  // namespace

std::optional<results::TensorCheck> check_greedy_tokens(
    backend::Backend& oracle, backend::Backend& candidate,
    const model::Model& m, const backend::Options& options) {
  if (!model::generation_problem(m).empty() || options.precision != "fp32")
    return std::nullopt;
  try {
    model::with_sequence(m, kPrompt + kNew);
  } catch (const Error&) {
    return std::nullopt;
  }
  const backend::GenerationShape shape{kRows, kPrompt, kNew};
  std::unique_ptr<backend::Generator> g;
  try {
    g = candidate.generator(m, options, shape);
  } catch (const backend::Unimplemented&) {
    return std::nullopt;
  } catch (const backend::Unavailable&) {
    throw;
  } catch (const std::exception& e) {
    results::TensorCheck c;
    c.what = std::string("generation: it failed to start: ") + e.what();
    c.error = 1;
    c.pass = false;
    return c;
  }
  results::TensorCheck c;
  c.what = "generation (greedy tokens, " + std::to_string(kRows) +
           " prompts of " + std::to_string(kPrompt) + ", " +
           std::to_string(kNew) + " new; error: the fraction that differ)";
  c.tolerance = 0;
  const auto prompts =
      data::synthetic_prompts(kRows, kPrompt, m.input.vocab, options.seed);
  backend::Options plain = options;
  plain.device = "cpu";
  const auto want = generate(*oracle.generator(m, plain, shape), prompts);
  std::vector<int64_t> got;
  try {
    got = generate(*g, prompts);
  } catch (const std::exception& e) {
    // The candidate failed to generate: a failed check naming why, and the
    // other backends still verified.
    c.what += ": it failed to generate: " + std::string(e.what());
    c.error = 1;
    c.pass = false;
    return c;
  }
  int64_t differ = 0;
  for (size_t i = 0; i < want.size(); ++i) differ += got.at(i) != want[i];
  c.error = double(differ) / double(want.size());
  c.pass = differ == 0;
  return c;
}

}  // namespace nnbench::verify
