// `nnbench run`: one model, one backend, one mode.
#include <fmt/core.h>

#include <set>

#include "backend/registry.h"
#include "bench/step_loop.h"
#include "bench/stopping/registry.h"
#include "cli/app.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/session.h"
#include "distributed/comm_engines.h"
#include "machine/instance.h"
#include "machine/threads.h"
#include "model/model_file.h"
#include "model/zoo/zoo.h"
#include "reporters/console.h"
#include "reporters/json_file.h"
#include "results/kinds.h"
#include "results/limits.h"
#include "scenarios/scenario.h"
#include "study/launch.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "verify/verify.h"

namespace nnbench::cli {
namespace {

struct RunArgs {
  std::string model, model_file, mode = "train", out, scenario = "throughput";
  std::string instance;  // the cloud instance this machine is
  results::RunRequest request;
  bool verify = false;
  bool batch_given = false, mode_given = false;
  // Data parallel (--distributed): the group this process joined.
  int processes = 0;  // 0: not given
  distributed::GroupOptions group_options;
  std::unique_ptr<distributed::Group> group;
};

results::RunResult measure(backend::Backend& b, const RunArgs& a,
                           const machine::Peak& peak) {
  scenarios::Case c;
  c.model = a.model;
  c.model_file = a.model_file;
  c.request = a.request;
  auto rec =
      scenarios::make_scenario(a.scenario)->run(b, c, {peak, a.group.get()});
  return results::as<results::RunResult>(*rec);  // both scenarios of run
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

// The ranks' outcome as this run's: rank 0's results file, or when a rank
// failed, that file marked failed naming it (or a failed result of our own
// when rank 0 wrote none: mpirun ends every rank when one dies).
int launch_and_record(backend::Backend& b, const model::Model& m,
                      const RunArgs& a) {
  const auto& d = a.request.distributed;
  const study::Launch l{d.engine, a.processes, a.group_options.rendezvous,
                        a.group_options.timeout_seconds};
  const study::LaunchOutcome o = study::launch_ranks(l);
  if (o.failed_rank < 0) {
    if (!a.out.empty() && !o.rank0_output.empty())
      util::write_file_atomically(a.out, o.rank0_output);
    return o.exit_code;
  }
  fmt::print(stderr, "nnbench: {}\n", study::failure_message(l, o));
  if (a.out.empty()) return kExitRunNotOk;
  auto file = nlohmann::json::parse(o.rank0_output, nullptr, false);
  if (file.is_object() && file.contains("results") &&
      !file["results"].empty()) {
    for (auto& r : file["results"]) study::mark_failed(r, l, o);
    util::write_file_atomically(a.out, file.dump(2) + "\n");
    return kExitRunNotOk;
  }
  auto r = bench::failed_result(b, m, a.request, results::State::kFailed,
                                "rank 0 wrote no result");
  auto j = to_json(r);
  study::mark_failed(j, l, o);
  write_report(a.out, capture_and_warn(), machine::Peak{},
               {results::run_result_from_json(j)});
  return kExitRunNotOk;
}

// Strong scaling splits the global batch over the ranks: one that does not
// split is a usage error before any rank starts (or, under a user's
// mpirun, before any rank measures).
void check_split(const results::RunRequest& r, int ranks) {
  if (r.distributed.scaling == "strong" && ranks > 1 && r.batch % ranks != 0)
    throw Error("--batch " + std::to_string(r.batch) + " does not split over " +
                std::to_string(ranks) +
                " ranks (strong scaling divides the global batch): give a "
                "multiple of " +
                std::to_string(ranks) + ", or --scaling weak");
}

// --distributed: start the ranks (--processes N), or join the group this
// process was started into. Returns true when the launcher ran the ranks.
bool start_distributed(backend::Backend& b, const model::Model& m, RunArgs& a,
                       int* exit_code) {
  auto& d = a.request.distributed;
  if (d.engine.empty()) {
    if (a.processes > 1)
      throw Error("--processes needs --distributed mpi or gloo");
    return false;
  }
  d.processes = a.processes;  // 0: started by mpirun, not asked here
  if (a.processes > 1) check_split(a.request, a.processes);
  if (a.processes > 1 && !distributed::started_as_rank()) {
    *exit_code = launch_and_record(b, m, a);
    return true;
  }
  a.group = distributed::make_group(d.engine, a.group_options);
  check_split(a.request, a.group->size());  // under a user's mpirun
  return false;
}

int finish_rank(RunArgs& a, const results::RunResult& r) {
  const bool ok = r.state == results::State::kOk && !invalid_counts(r);
  // A rank that failed while the others measure would leave them waiting
  // in the engine: end the job (MPI) after the result is written.
  if (a.group && a.group->broken()) a.group->abandon(kExitRunNotOk);
  return ok ? kExitOk : kExitRunNotOk;
}

// Ranks other than 0 run the same measurement and print and write nothing
// but their errors: rank 0 records the run.
int run_quiet_rank(backend::Backend& b, const model::Model& m, RunArgs& a) {
  // No peak: this rank's fraction of it is recorded nowhere, and timing
  // GEMMs here would compete with rank 0's calibration for the cores.
  const machine::Peak peak;
  const auto r =
      a.verify ? verify_then_run(b, m, a, peak) : measure(b, a, peak);
  if (r.state != results::State::kOk)
    fmt::print(stderr, "nnbench: rank {}: {}: {}\n", a.group->rank(),
               results::state_name(r.state), r.message);
  return finish_rank(a, r);
}

// Settings that contradict each other are usage errors, before anything
// runs: never a run that silently does something else.
void check_request(const RunArgs& a) {
  if (const auto why =
          bench::stopping::rules_problem(a.request.warmup, a.request.stop);
      !why.empty())
    throw Error(why);
  std::set<std::string> given;
  if (a.batch_given) given.insert("batch");
  if (a.mode_given) given.insert("mode");
  results::RunRequest r = a.request;
  r.mode = backend::mode_from_name(a.mode);
  if (const auto why =
          scenarios::make_scenario(a.scenario)->request_problem(r, given);
      !why.empty())
    throw Error(why);
}

int run_command(RunArgs& a) {
  check_request(a);
  const model::Model m = resolve_model(a.model, a.model_file);
  if (!a.instance.empty()) machine::name_instance(a.instance, "");
  a.request.mode = backend::mode_from_name(a.mode);
  auto b = backend::make_ready_backend(a.request.backend);
  if (!a.out.empty()) util::check_writable(a.out);
  if (int code = 0; start_distributed(*b, m, a, &code)) return code;
  if (a.group && a.group->rank() != 0) return run_quiet_rank(*b, m, a);

  const machine::Environment env = capture_and_warn();
  const machine::Peak peak = measure_peak(
      machine::resolve_threads(a.request.options.threads), &env.cpu);
  const auto r =
      a.verify ? verify_then_run(*b, m, a, peak) : measure(*b, a, peak);
  print_progress(r);
  // The table on stdout and, with --out, the results file.
  reporters::Console console;
  reporters::JsonFile file(a.out);
  results::Reporters to;
  to.add(&console);
  to.add(&file);
  report_records(to, report_context(env, peak), {&r});
  fmt::print("{}", scenarios::make_scenario(a.scenario)->notes(r));
  return finish_rank(a, r);
}

void add_distributed_options(CLI::App& app, RunArgs& a) {
  auto& d = a.request.distributed;
  app.add_option("--distributed", d.engine,
                 "Data-parallel training over this engine: mpi (start with "
                 "mpirun or --processes) or gloo (LibTorch's c10d)")
      ->check(CLI::IsMember({"mpi", "gloo"}));
  app.add_option("--processes", a.processes,
                 "Start this many ranks on this machine (needs "
                 "--distributed)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--scaling", d.scaling,
                 "strong: --batch is the global batch, split over the ranks; "
                 "weak: every rank runs --batch")
      ->check(CLI::IsMember({"strong", "weak"}))
      ->capture_default_str();
  app.add_flag("--overlap", d.overlap,
               "All-reduce gradient buckets during backward where the backend "
               "can (torch); the result records what happened");
  app.add_option("--bucket-bytes", d.bucket_bytes,
                 "Gradient bytes per all-reduce bucket (PyTorch DDP: 25 MiB)")
      ->check(CLI::Range(int64_t{4096}, int64_t{1} << 32))
      ->capture_default_str();
  app.add_option("--rendezvous", a.group_options.rendezvous,
                 "Gloo's meeting point: file:PATH or tcp:HOST:PORT (rank 0 "
                 "listens); --processes makes a private file");
  app.add_option("--dist-timeout", a.group_options.timeout_seconds,
                 "Seconds a rank waits for a silent peer (Gloo) and the "
                 "launcher gives the others after a rank dies")
      ->check(positive(results::kMaxSeconds))
      ->capture_default_str();
  app.add_option("--gloo-interface", a.group_options.interface,
                 "Network interface Gloo binds (default: by host name)");
}

}  // namespace

namespace {

// The scenarios whose records are a step loop's (RunResult): run's own.
std::vector<std::string> step_scenarios() {
  std::vector<std::string> out;
  for (const auto& n : scenarios::scenario_names()) {
    const auto m = results::traits_of(n).measure;
    if (m == results::Measure::kSteps || m == results::Measure::kLatency)
      out.push_back(n);
  }
  return out;
}

}  // namespace

Action add_run(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  app.add_option("--model", a->model, "Zoo model name (see `nnbench models`)");
  app.add_option("--model-file", a->model_file, "Model description (JSON)");
  app.add_option("--instance", a->instance,
                 "The cloud instance this machine is (data/prices.json), "
                 "recorded with its price so runs from several machines "
                 "compare by cost");
  a->request.backend = backend::default_backend();
  app.add_option("--scenario", a->scenario,
                 "throughput (time per mini-batch at --batch) or latency "
                 "(batch-1 inference: median, p90, p99)")
      ->check(CLI::IsMember(step_scenarios()))
      ->capture_default_str();
  app.add_option("--mode", a->mode, "train or infer")
      ->check(CLI::IsMember({"train", "infer"}))
      ->capture_default_str();
  app.add_option("--batch", a->request.batch, "Mini-batch size")
      ->check(positive(results::kMaxBatch))
      ->capture_default_str();
  app.add_option("--out", a->out, "Write the results as JSON to this file");
  app.add_flag("--verify", a->verify,
               "First check the backend against the reference on a small "
               "batch; record no timing if it fails");
  add_measurement_options(app, a->request);
  add_distributed_options(app, *a);
  return [a, &app] {
    a->batch_given = app.count("--batch") > 0;
    a->mode_given = app.count("--mode") > 0;
    return run_command(*a);
  };
}

}  // namespace nnbench::cli
