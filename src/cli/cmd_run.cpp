// `nnbench run`: one model, one backend, one mode.
#include <fmt/core.h>

#include "backend/registry.h"
#include "bench/runner.h"
#include "cli/app.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/session.h"
#include "cli/table.h"
#include "model/model_file.h"
#include "model/zoo/zoo.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace nnbench::cli {
namespace {

struct RunArgs {
  std::string model, model_file, mode = "train", out;
  bench::RunRequest request;
};

int run_command(RunArgs& a) {
  if (a.model.empty() == a.model_file.empty())
    throw Error("give exactly one of --model NAME or --model-file FILE");
  const model::Model m = a.model.empty() ? model::load_model_file(a.model_file)
                                         : model::zoo::get(a.model);
  a.request.mode = backend::mode_from_name(a.mode);
  auto b = backend::make_backend(a.request.backend);
  if (!a.out.empty()) util::check_writable(a.out);

  const bench::Environment env = capture_and_warn();
  a.request.options.threads = resolve_threads(a.request.options.threads, env);
  const bench::Peak peak = bench::measure_gemm_peak(a.request.options.threads);
  const auto r = bench::run(*b, m, a.request, peak);
  print_progress(r);
  fmt::print("{}", results_table({r}));
  if (!a.out.empty()) write_report(a.out, env, peak, {r});
  return r.state == results::State::kOk ? kExitOk : kExitRunNotOk;
}

}  // namespace

Action add_run(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  app.add_option("--model", a->model, "Zoo model name (see `nnbench models`)");
  app.add_option("--model-file", a->model_file, "Model description (JSON)");
  app.add_option("--backend", a->request.backend, "Backend")
      ->capture_default_str();
  app.add_option("--mode", a->mode, "train or infer")
      ->check(CLI::IsMember({"train", "infer"}))
      ->capture_default_str();
  app.add_option("--batch", a->request.batch, "Mini-batch size")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--out", a->out, "Write the results as JSON to this file");
  add_measurement_options(app, a->request);
  return [a] { return run_command(*a); };
}

}  // namespace nnbench::cli
