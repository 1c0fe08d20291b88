#include "verify/greedy.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "backend/generator.h"
#include "data/synthetic.h"
#include "model/generation.h"
#include "util/error.h"
#include "verify/verify.h"

namespace nnbench::verify {
namespace {

constexpr int64_t kRows = 2, kPrompt = 8, kNew = 8;

// int8 generation quantizes weights per row or per tensor, and at most
// activations on the fly per token (ONNX Runtime's dynamic quantization,
// OpenVINO's groups): far closer than the calibrated int8 that the 3.5e-1
// of tolerances_for("int8") allows for, so a wrong scale would pass that.
// docs/generation.md has what each engine measured.
constexpr double kInt8Generation = 5e-2;

results::TensorCheck failed(std::string what, const std::string& why) {
  results::TensorCheck c;
  c.what = std::move(what) + why;
  c.error = 1;
  c.pass = false;
  return c;
}

}  // namespace

GenerationCheck check_generation(backend::Backend& oracle,
                                 backend::Backend& candidate,
                                 const model::Model& m,
                                 const backend::Options& options) {
  if (!model::generation_problem(m).empty()) return {};
  try {
    model::with_sequence(m, kPrompt + kNew);
  } catch (const Error&) {
    return {};
  }
  const bool fp32 = options.precision == "fp32";
  const std::string tokens_what =
      "generation (greedy tokens, " + std::to_string(kRows) + " prompts of " +
      std::to_string(kPrompt) + ", " + std::to_string(kNew) +
      " new, each step on the oracle's tokens; error: the fraction of steps "
      "whose next token differs)";
  const backend::GenerationShape shape{kRows, kPrompt, kNew};
  std::unique_ptr<backend::Generator> g;
  try {
    g = candidate.generator(m, options, shape);
  } catch (const backend::Unimplemented&) {
    return {};
  } catch (const backend::Unavailable&) {
    throw;
  } catch (const std::exception& e) {
    return {
        false,
        {failed(tokens_what, std::string(": it failed to start: ") + e.what())},
        std::nullopt};
  }
  const auto prompts =
      data::synthetic_prompts(kRows, kPrompt, m.input.vocab, options.seed);
  backend::Options plain = options;
  plain.device = "cpu";
  plain.precision = "fp32";
  const auto ref = oracle.generator(m, plain, shape);
  // The oracle's logits, which it always gives.
  auto oracle_logits = [&] {
    auto l = ref->last_logits();
    if (!l) throw Error("generation check: the oracle gave no logits");
    return *l;
  };
  int64_t differ = 0, steps = 0;
  // The largest relative error of one step's logits (a step at a time, so
  // that an error in one is not diluted by the others); none once the
  // candidate gives no logits after the prefill; a step whose logits it
  // does not give, or of another size, is infinitely wrong.
  std::optional<double> logits_error;
  // Every step's logits, the candidate's and the oracle's, for the
  // agreement below fp32.
  host::Tensor all_got, all_want;
  std::vector<int64_t> want = ref->prefill(prompts), got, fed;
  for (int64_t k = 0;; ++k) {
    std::optional<std::vector<float>> l;
    try {
      got = k == 0 ? g->prefill(prompts) : g->decode(fed);
      l = g->last_logits();
    } catch (const std::exception& e) {
      // The candidate failed to generate: a failed check naming why, and
      // the other backends still verified.
      return {true,
              {failed(tokens_what,
                      ": it failed to generate: " + std::string(e.what()))},
              std::nullopt};
    }
    for (size_t i = 0; i < want.size(); ++i) differ += got.at(i) != want[i];
    steps += static_cast<int64_t>(want.size());
    if (k == 0 && l) logits_error = 0;
    if (logits_error) {
      host::Tensor w, c;
      w.f = oracle_logits();
      if (l) c.f = std::move(*l);
      logits_error = std::max(*logits_error,
                              l ? max_relative_error(c, w) : double(INFINITY));
      if (c.f.size() == w.f.size()) {
        all_got.f.insert(all_got.f.end(), c.f.begin(), c.f.end());
        all_want.f.insert(all_want.f.end(), w.f.begin(), w.f.end());
      }
    }
    if (k + 1 == kNew) break;
    fed = want;
    want = ref->decode(want);
  }
  GenerationCheck out;
  out.started = true;
  if (fp32) {
    results::TensorCheck c;
    c.what = tokens_what;
    c.error = double(differ) / double(steps);
    c.tolerance = 0;
    c.pass = differ == 0;
    out.checks.push_back(c);
  } else {
    results::Agreement a;
    a.rows = steps;
    a.top1 = 1 - double(differ) / double(steps);
    a.kl = NAN;
    // Every step's logits, each of the vocabulary's width: their mean KL.
    if (logits_error && std::isfinite(*logits_error) &&
        all_want.f.size() == static_cast<size_t>(steps * m.input.vocab)) {
      all_got.shape = all_want.shape = {steps, m.input.vocab};
      a.kl = agreement_of(all_got, all_want).kl;
    }
    out.agreement = a;
  }
  if (logits_error) {
    results::TensorCheck c;
    c.what =
        "generation (logits of each row's last position after the prefill "
        "and each decode, on the oracle's tokens; error: the largest step's)";
    c.error = *logits_error;
    c.tolerance = options.precision == "int8"
                      ? kInt8Generation
                      : tolerances_for(options.precision).output;
    c.pass = c.error <= c.tolerance;
    out.checks.push_back(c);
  }
  return out;
}

}  // namespace nnbench::verify
