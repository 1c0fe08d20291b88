// `nnbench train`: whole training runs on real data: time-to-accuracy with
// DAWNBench's rules and MLPerf's seed aggregation, fixed-epoch runs, cost,
// inference latency, and DAWNBench / MLLOG exports.
#include <fmt/core.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "backend/registry.h"
#include "cli/app.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/session.h"
#include "machine/instance.h"
#include "machine/threads.h"
#include "reporters/training.h"
#include "results/kinds.h"
#include "results/limits.h"
#include "scenarios/scenario.h"
#include "train/aggregate.h"
#include "train/exports.h"
#include "util/atomic_file.h"
#include "util/clock.h"
#include "util/error.h"

namespace nnbench::cli {
namespace {

struct TrainArgs {
  std::string task, backend = nnbench::backend::default_backend(), data, out,
                    dawnbench_dir, mllog_file;
  std::string instance, prices = cost::default_catalog_path();
  double price_per_hour = 0;
  int seeds = 1;
  uint64_t seed = 1;
  bool list = false;
  train::TrainOptions options;
  train::Submitter who;  // for the exports; defaults filled in later
};

int list_tasks() {
  for (const auto& t : train::tasks())
    fmt::print("{:<22} {} [{}]\n", t.name, t.description, t.dataset);
  return kExitOk;
}

// MLPerf's checker takes one run per log (run_start is EXACTLY_ONE), so
// several runs go to FILE's name numbered from 0, as MLPerf's result_N.txt.
std::string mllog_path(const std::string& file, size_t i, size_t runs) {
  if (runs == 1) return file;
  const std::filesystem::path p(file);
  return (p.parent_path() / (p.stem().string() + "_" + std::to_string(i) +
                             p.extension().string()))
      .string();
}

void check_outputs(const TrainArgs& a) {
  if (!a.out.empty()) util::check_writable(a.out);
  if (!a.mllog_file.empty())
    util::check_writable(mllog_path(a.mllog_file, 0, a.seeds));
  if (!a.dawnbench_dir.empty())
    util::check_writable(a.dawnbench_dir + "/" + a.task + ".json");
  if (!a.options.save_weights.empty()) {
    if (a.seeds != 1)
      throw Error("--save-weights writes one run's parameters: give --seeds 1");
    util::check_writable(a.options.save_weights);
  }
}

void write_exports(const TrainArgs& a, const train::Task& task,
                   const data::Dataset& d,
                   const std::vector<train::TrainRun>& runs,
                   const std::optional<cost::Price>& price) {
  train::ExportInfo info{a.who, price, d.train.size, d.test.size};
  train::Task as_run = task;  // the schedule spans the epoch budget as run
  if (a.options.epochs > 0) as_run.epochs = a.options.epochs;
  if (!a.mllog_file.empty())
    for (size_t i = 0; i < runs.size(); ++i)
      util::write_file_atomically(mllog_path(a.mllog_file, i, runs.size()),
                                  train::mllog(runs[i], as_run, info));
  if (a.dawnbench_dir.empty()) return;
  const auto& r = runs.front();
  const std::string base = a.dawnbench_dir + "/" + a.task;
  util::write_file_atomically(base + ".json",
                              train::dawnbench_entry(r, info).dump(2) + "\n");
  util::write_file_atomically(base + ".tsv", train::dawnbench_tsv(r));
  if (const auto inference = train::dawnbench_inference_entry(r, info))
    util::write_file_atomically(base + "-inference.json",
                                inference->dump(2) + "\n");
}

// The case the training scenario runs: the request's options and the
// scenario's settings, as a suite file would give them.
scenarios::Case training_case(const TrainArgs& a,
                              const train::TrainOptions& o) {
  scenarios::Case c;
  c.task = a.task;
  c.request.backend = a.backend;
  c.request.options.seed = o.seed;
  c.request.options.device = o.device;
  c.request.options.threads = o.threads;
  c.request.options.precision = o.precision;
  c.request.contention.rule = o.contention;
  const auto number = [](double x) { return fmt::format("{:.17g}", x); };
  if (!a.data.empty()) c.settings["data"] = a.data;
  if (o.epochs > 0) c.settings["epochs"] = std::to_string(o.epochs);
  if (o.target >= 0) c.settings["target"] = number(o.target);
  if (o.max_seconds > 0) c.settings["max_seconds"] = number(o.max_seconds);
  c.settings["include_eval_time"] = o.include_eval_time ? "true" : "false";
  c.settings["latency"] = o.latency ? "true" : "false";
  if (o.latency_items > 0)
    c.settings["latency_items"] = std::to_string(o.latency_items);
  if (!o.save_weights.empty()) c.settings["save_weights"] = o.save_weights;
  c.settings["loop"] = o.loop;
  return c;
}

int train_command(TrainArgs& a) {
  if (a.list) return list_tasks();
  if (a.task.empty()) throw Error("--task is required (see --list)");
  if (a.options.target == 0)
    throw Error("--target must be a validation accuracy in (0, 1]");
  const train::Task& task = train::task(a.task);
  if (a.data == data::kSyntheticData) {
    if ((a.options.target >= 0 ? a.options.target : task.target) > 0)
      throw Error(train::time_to_accuracy_needs_real_data(task.name));
    if (!a.mllog_file.empty() || !a.dawnbench_dir.empty() || a.options.latency)
      throw Error(
          "--data synthetic: --mllog, --dawnbench and --latency report "
          "accuracies or a trained model, which synthetic data do not give");
  }
  if (!a.instance.empty()) machine::name_instance(a.instance, a.prices);
  auto b = backend::make_ready_backend(a.backend);
  const machine::Environment env = capture_and_warn();
  const int threads = machine::resolve_threads(a.options.threads);
  a.who = train::with_defaults(a.who);
  if (a.who.platform.empty())
    a.who.platform = fmt::format("{} ({}{} threads)", env.cpu.name,
                                 env.cpu.microarchitecture.empty()
                                     ? ""
                                     : env.cpu.microarchitecture + ", ",
                                 threads);
  train::check_submitter(a.who);  // before any long work
  check_outputs(a);
  const auto price =
      cost::asked_price(a.price_per_hour, a.instance, a.prices, threads);
  const auto t0 = util::Clock::now();
  data::DatasetOptions dopt;
  dopt.seq_len = task.seq_len;
  const data::Dataset d = data::load_dataset(task.dataset, a.data, dopt);
  const double load_seconds = util::seconds_since(t0);
  fmt::print(stderr, "nnbench: {} ({} train, {} test) loaded in {:.2f} s\n",
             d.name, d.train.size, d.test.size, load_seconds);
  std::vector<train::TrainRun> runs;
  // Each run's epochs as it ends, the summary and --out's file at the end.
  const reporters::TrainingSetup setup{&task, &d, load_seconds, a.options,
                                       price};
  reporters::TrainingConsole console(setup);
  std::optional<reporters::TrainingFile> file;
  if (!a.out.empty()) file.emplace(a.out, setup);
  results::Reporters report;
  report.add(&console);
  report.add(file ? &*file : nullptr);
  report.begin(report_context(env, machine::Peak{}));
  const auto training = scenarios::make_scenario("training");
  scenarios::Context ctx;
  ctx.dataset = &d;  // loaded once for every seed
  // Progress for a person watching; logs and captured output stay quiet.
  ctx.progress = ::isatty(STDERR_FILENO) == 1;
  for (uint64_t seed : train::seeds_for(a.seed, a.seeds)) {
    train::TrainOptions o = a.options;
    o.seed = seed;
    // Through the training scenario, as a suite runs it.
    auto rec = training->run(*b, training_case(a, o), ctx);
    runs.push_back(results::as<train::TrainRun>(*rec));
    results::Entry entry;
    entry.record = rec.get();
    report.record(entry);
    if (!runs.back().validity.valid() && o.on_contention == "fail") {
      fmt::print(stderr,
                 "nnbench: stopping after seed {} (--on-contention fail)\n",
                 seed);
      break;
    }
  }
  report.end({});
  write_exports(a, task, d, runs, price);
  // Parameters the trainer could not write: the results above stand and
  // are written, the lost file is exit 3, as --out's would be.
  if (!a.options.save_weights.empty())
    for (const auto& r : runs)
      if (!results::is_failure(r.state) &&
          !r.effective.extras.count("saved_weights"))
        throw IoError("--save-weights " + a.options.save_weights + ": " +
                      r.message);
  for (const auto& r : runs) {
    if (results::is_failure(r.state)) return kExitRunNotOk;
    if (!r.validity.valid() && a.options.on_contention == "fail")
      return kExitRunNotOk;
  }
  return kExitOk;
}

}  // namespace

Action add_train(CLI::App& app) {
  auto a = std::make_shared<TrainArgs>();
  auto& o = a->options;
  app.add_option("--task", a->task, "Task name (see --list)");
  app.add_flag("--list", a->list, "List the tasks");
  add_shared_options(
      app, {&a->backend, &o.device, &o.threads, &a->seed, &o.precision});
  app.add_option("--data", a->data,
                 "Dataset directory or file (Fashion-MNIST defaults to the "
                 "Debian package's files); `synthetic`: the real set's shapes "
                 "and sizes with seeded values, for timing fixed-epoch tasks "
                 "(accuracy not measured)");
  app.add_option("--seeds", a->seeds,
                 "Runs with distinct seeds (MLPerf "
                 "aggregation from 3)")
      ->check(positive(results::kMaxRepetitions))
      ->capture_default_str();
  app.add_option("--epochs", o.epochs, "Override the task's epoch budget")
      ->check(positive(results::kMaxEpochs));
  app.add_option("--target", o.target,
                 "Override the target validation accuracy, in (0, 1]")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--max-time", o.max_seconds,
                 "Training-time budget in seconds, checked at each epoch's "
                 "end: then a target not reached is not_converged, fixed "
                 "epochs cut short are stopped")
      ->check(positive(results::kMaxSeconds));
  app.add_flag("--include-eval-time", o.include_eval_time,
               "Count evaluation time as training time (DAWNBench excludes "
               "it by default)");
  app.add_option("--on-contention", o.on_contention,
                 "When a run's threads did not get their CPUs (other "
                 "processes, hypervisor steal): fail (record it invalid, "
                 "stop, exit 1) or warn (record it invalid, go on)")
      ->check(CLI::IsMember({"warn", "fail"}))
      ->capture_default_str();
  add_contention_rule(app, o.contention);
  app.add_flag("--latency", o.latency,
               "Measure batch-1 inference latency on the trained model over "
               "the validation set");
  app.add_option("--latency-items", o.latency_items,
                 "Limit the latency measurement to this many items (default: "
                 "the whole validation set)")
      ->check(positive(results::kMaxSamples));
  app.add_option("--instance", a->instance,
                 "The cloud instance this machine is: recorded, and the "
                 "run priced as it");
  app.add_option("--price-per-hour", a->price_per_hour,
                 "Price the run at this many dollars per hour")
      ->check(positive(1e6));
  app.add_option("--prices", a->prices, "Price catalog file")
      ->capture_default_str();
  app.add_option("--loop", o.loop,
                 "steps: the harness stages each batch and times the "
                 "engine's step; framework: each epoch through the "
                 "framework's own training idiom (Keras Model.fit, a Gluon "
                 "loop, a plain PyTorch loop), as users' scripts train")
      ->check(CLI::IsMember({"steps", "framework"}))
      ->capture_default_str();
  app.add_option("--save-weights", o.save_weights,
                 "Write the trained parameters to this file (one seed), for "
                 "nnbench infer --weights");
  app.add_option("--out", a->out, "Write the runs as JSON");
  app.add_option("--dawnbench", a->dawnbench_dir,
                 "Write DAWNBench entry files here: <task>.json and "
                 "<task>.tsv (training), <task>-inference.json (with "
                 "--latency)");
  app.add_option("--mllog", a->mllog_file,
                 "Write each run's MLPerf :::MLLOG log here (several runs: "
                 "FILE's name numbered _0, _1 ...)");
  auto& who = a->who;
  app.add_option("--author", who.author,
                 "Exports: author (default: the login name)");
  app.add_option("--author-email", who.email,
                 "Exports: author's email (default: login@hostname)");
  app.add_option("--org", who.org,
                 "MLLOG submission_org (default: the author)");
  app.add_option("--platform", who.platform,
                 "Exports: hardware / submission_platform (default: the CPU "
                 "model and threads)");
  app.add_option("--division", who.division,
                 "MLLOG submission_division: open or closed")
      ->capture_default_str();
  app.add_option("--status", who.status,
                 "MLLOG submission_status: cloud, onprem, preview or research")
      ->capture_default_str();
  return [a] { return train_command(*a); };
}

}  // namespace nnbench::cli
