// nnbench generate: a prompt, then new tokens one at a time (the generation
// scenario): time to first token, time per output token, inter-token
// percentiles, prefill and generation tokens/s, and the fraction of the
// machine's memory-bandwidth ceiling.
#include <fmt/core.h>

#include <CLI/CLI.hpp>

#include "backend/registry.h"
#include "cli/app.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/session.h"
#include "model/generation.h"
#include "reporters/console.h"
#include "reporters/json_file.h"
#include "results/generation.h"
#include "scenarios/scenario.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace nnbench::cli {
namespace {

struct GenerateArgs {
  std::string model, model_file, out;
  results::RunRequest request;
  results::GenerationRequest g;
};

int generate_command(GenerateArgs& a) {
  scenarios::Case c;
  c.model = a.model;
  c.model_file = a.model_file;
  c.request = a.request;
  c.request.mode = backend::Mode::kInfer;
  c.request.batch = a.g.batch;
  c.settings = {{"prompt", std::to_string(a.g.prompt)},
                {"new_tokens", std::to_string(a.g.new_tokens)},
                {"warmup", std::to_string(a.g.warmup)},
                {"repetitions", std::to_string(a.g.repetitions)}};
  if (const auto why = results::generation_request_problem(a.g); !why.empty())
    throw Error(why);
  // What cannot run is a usage error before anything runs.
  const model::Model m = resolve_model(a.model, a.model_file);
  if (const std::string why = model::generation_problem(m); !why.empty())
    throw Error("cannot generate: " + why);
  model::with_sequence(m, a.g.prompt + a.g.new_tokens);
  auto b = backend::make_ready_backend(a.request.backend);
  if (!a.out.empty()) util::check_writable(a.out);
  const machine::Environment env = capture_and_warn();
  const auto scenario = scenarios::make_scenario("generation");
  const auto r = scenario->run(*b, c, {});
  if (results::is_failure(r->state))
    fmt::print(stderr, "nnbench: {} on {}: {}: {}\n", r->model, r->backend,
               results::state_name(r->state), r->message);
  reporters::Console console;
  reporters::JsonFile file(a.out);
  results::Reporters to;
  to.add(&console);
  to.add(&file);
  report_records(to, report_context(env, machine::Peak{}), {r.get()});
  fmt::print("{}", scenario->notes(*r));
  const bool ok = r->state == results::State::kOk && r->validity.valid();
  return ok ? kExitOk : kExitRunNotOk;
}

}  // namespace

Action add_generate(CLI::App& app) {
  auto a = std::make_shared<GenerateArgs>();
  app.add_option("--model", a->model,
                 "Zoo model name (a decoder: gpt2-small, gpt2-tiny)");
  app.add_option("--model-file", a->model_file, "Model description (JSON)");
  a->request.backend = backend::default_backend();
  app.add_option("--batch", a->g.batch, "Sequences generated together")
      ->check(positive(results::kMaxGenerationBatch))
      ->capture_default_str();
  app.add_option("--prompt", a->g.prompt,
                 "Prompt tokens (llama-bench's pp512 by default)")
      ->check(positive(results::kMaxGenerationTokens))
      ->capture_default_str();
  app.add_option("--new-tokens", a->g.new_tokens,
                 "Tokens generated after the prompt (tg128 by default)")
      ->check(bounded(2, results::kMaxGenerationTokens))
      ->capture_default_str();
  app.add_option("--repetitions", a->g.repetitions, "Timed generations")
      ->check(positive(results::kMaxGenerationRepetitions))
      ->capture_default_str();
  app.add_option("--warmup", a->g.warmup, "Untimed generations first")
      ->check(non_negative(results::kMaxGenerationWarmup))
      ->capture_default_str();
  app.add_option("--out", a->out, "Write the results as JSON to this file");
  add_shared_options(app,
                     {&a->request.backend, &a->request.options.device,
                      &a->request.options.threads, &a->request.options.seed,
                      &a->request.options.precision});
  add_contention_rule(app, a->request.contention.rule);
  return [a] { return generate_command(*a); };
}

}  // namespace nnbench::cli
