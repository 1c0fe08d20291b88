// `nnbench run`: one model, one backend, one mode.
#include <fmt/core.h>

#include "backend/registry.h"
#include "bench/runner.h"
#include "cli/app.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/session.h"
#include "cli/table.h"
#include "machine/threads.h"
#include "model/model_file.h"
#include "model/zoo/zoo.h"
#include "scenarios/scenario.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "verify/verify.h"

namespace nnbench::cli {
namespace {

struct RunArgs {
  std::string model, model_file, mode = "train", out, scenario = "throughput";
  results::RunRequest request;
  bool verify = false;
};

results::RunResult measure(backend::Backend& b, const RunArgs& a,
                           const machine::Peak& peak) {
  scenarios::Case c;
  c.model = a.model;
  c.model_file = a.model_file;
  c.request = a.request;
  auto rec = scenarios::make_scenario(a.scenario)->run(b, c, {peak});
  return dynamic_cast<results::RunResult&>(*rec);  // both scenarios of run
}

// Verification against the reference before measuring: a backend that
// computes a different function gets no timing recorded.
results::RunResult verify_then_run(backend::Backend& b, const model::Model& m,
                                   const RunArgs& a,
                                   const machine::Peak& peak) {
  const results::RunRequest& r = a.request;
  auto oracle = backend::make_backend(backend::kOracle);
  verify::VerifyOptions vo;
  vo.batch = std::min<int64_t>(r.batch, 4);
  vo.seed = r.options.seed;
  vo.threads = r.options.threads;
  vo.precision = r.options.precision;
  vo.device = r.options.device;
  const verify::Verification v = verify::verify(*oracle, b, m, vo);
  fmt::print(stderr, "nnbench: verify {} against {}: {}{}\n", b.name(),
             oracle->name(), verify::verdict_name(v.verdict),
             v.message.empty() ? "" : " (" + v.message + ")");
  results::RunResult res;
  if (v.verdict == verify::Verdict::kPass) {
    res = measure(b, a, peak);
  } else {
    res = bench::failed_result(
        b, m, r,
        v.verdict == verify::Verdict::kUnimplemented
            ? results::State::kUnimplemented
            : results::State::kFailed,
        "verification against the reference failed: " + v.message);
  }
  res.verification = v;
  return res;
}

int run_command(RunArgs& a) {
  const model::Model m = resolve_model(a.model, a.model_file);
  a.request.mode = backend::mode_from_name(a.mode);
  auto b = backend::make_backend(a.request.backend);
  if (!a.out.empty()) util::check_writable(a.out);

  const machine::Environment env = capture_and_warn();
  const machine::Peak peak = machine::measure_gemm_peak(
      machine::resolve_threads(a.request.options.threads));
  const auto r =
      a.verify ? verify_then_run(*b, m, a, peak) : measure(*b, a, peak);
  print_progress(r);
  fmt::print("{}", results_table({r}));
  if (r.kind == "latency" && r.state == results::State::kOk)
    fmt::print(
        "latency, batch 1: p50 {:.3f} ms, p90 {:.3f} ms, p99 {:.3f} ms "
        "({} samples; percentiles interpolated linearly, type 7)\n",
        r.stats.median * 1e3, r.stats.p90 * 1e3, r.stats.p99 * 1e3, r.stats.n);
  if (!a.out.empty()) write_report(a.out, env, peak, {r});
  return r.state == results::State::kOk && !invalid_counts(r) ? kExitOk
                                                              : kExitRunNotOk;
}

}  // namespace

Action add_run(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  app.add_option("--model", a->model, "Zoo model name (see `nnbench models`)");
  app.add_option("--model-file", a->model_file, "Model description (JSON)");
  a->request.backend = backend::default_backend();
  app.add_option("--scenario", a->scenario,
                 "throughput (time per mini-batch at --batch) or latency "
                 "(batch-1 inference: median, p90, p99)")
      ->check(CLI::IsMember({"throughput", "latency"}))
      ->capture_default_str();
  app.add_option("--mode", a->mode, "train or infer")
      ->check(CLI::IsMember({"train", "infer"}))
      ->capture_default_str();
  app.add_option("--batch", a->request.batch, "Mini-batch size")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--out", a->out, "Write the results as JSON to this file");
  app.add_flag("--verify", a->verify,
               "First check the backend against the reference on a small "
               "batch; record no timing if it fails");
  add_measurement_options(app, a->request);
  return [a] { return run_command(*a); };
}

}  // namespace nnbench::cli
