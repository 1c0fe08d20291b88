// `nnbench suite`: a study from a TOML suite file, each case in its own
// process by default, every record committed to the results store as soon
// as it ends; one failure never stops the rest.
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "backend/registry.h"
#include "bench/stopping/registry.h"
#include "cli/app.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/session.h"
#include "engines/worker/zygote.h"
#include "machine/instance.h"
#include "machine/threads.h"
#include "reporters/console.h"
#include "reporters/html.h"
#include "reporters/json_file.h"
#include "reporters/sqlite.h"
#include "results/limits.h"
#include "results/result.h"
#include "scenarios/scenario.h"
#include "study/plan.h"
#include "study/suite_file.h"
#include "study/suite_runner.h"
#include "util/atomic_file.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/lifeline.h"

namespace nnbench::cli {
namespace {

struct SuiteArgs {
  std::string name = "quick", out, db, resume;
  results::RunRequest request;
  bool list = false, check = false, in_process = false, no_store = false,
       fresh_workers = false;
  bool find_max_batch = false;
  int64_t max_batch_cap = 4096;
  std::optional<uint64_t> interleave;
  std::optional<int> repetitions;
  std::optional<double> timeout, memory_limit;
  std::string html;          // the HTML report of this run
  std::string instance;      // replaces the suite's [cost] instance
  std::string shard, study;  // study/shard.h
  std::optional<int> baseline_threads;
  std::vector<std::string> sets;  // --set KEY=VALUE over the suite's settings
  std::vector<std::string> argv;  // for the run's record
};

// The suite file with --set's settings over its own, checked by its
// scenario as the file's are; an error names the --set at fault.
study::SuiteSpec with_settings(study::SuiteSpec spec,
                               const std::vector<std::string>& sets) {
  if (sets.empty()) return spec;
  std::set<std::string> given;
  for (const auto& kv : sets) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error("--set " + kv + ": not KEY=VALUE (e.g. data=synthetic)");
    spec.settings[kv.substr(0, eq)] = kv.substr(eq + 1);
    given.insert(kv.substr(0, eq));
  }
  std::string which;
  const std::string why = scenarios::make_scenario(spec.scenario)
                              ->settings_problem(spec.settings, &which);
  if (!why.empty() && given.count(which))
    throw Error("--set " + which + ": " + why);
  return spec;
}

study::PlanOptions plan_options(const SuiteArgs& a, const CLI::App& app) {
  study::PlanOptions o;
  o.default_backend = a.request.backend;
  for (const auto& b : backend::backend_names())
    // "all": every engine that can run here (a framework whose
    // environment is missing is left out; naming it runs it, and fails).
    if (b != backend::kOracle) {
      const auto d = backend::make_backend(b)->describe();
      if (!d.unavailable.empty()) continue;
      o.all_backends.push_back(b);
      if (!d.can.training) o.inference_only.push_back(b);
    }
  o.base = a.request;
  // Rules given on the command line replace the suite file's.
  for (const char* w : {"--warmup-iters", "--warmup-time"})
    if (app.count(w)) o.warmup = a.request.warmup;
  for (const char* s : {"--min-iters", "--min-time", "--max-iters",
                        "--max-time", "--max-rel-ci", "--criterion"})
    if (app.count(s)) o.stop = a.request.stop;
  if (app.count("--threads")) o.threads = a.request.options.threads;
  if (app.count("--precision")) o.precision = a.request.options.precision;
  if (app.count("--device")) o.device = a.request.options.device;
  o.repetitions = a.repetitions;
  o.interleave_seed = a.interleave;
  o.usable_cpus = machine::resolve_threads(0);
  return o;
}

std::string duration(double s) {
  if (s < 0) return "unknown";
  if (s < 90) return fmt::format("{:.0f} s", s);
  if (s < 5400) return fmt::format("{:.0f} min", s / 60);
  return fmt::format("{:.1f} h", s / 3600);
}

// -1 when any case has no estimate.
double estimate(const std::vector<study::PlannedCase>& cases) {
  double t = 0;
  for (const auto& c : cases) {
    const double e = study::estimate_seconds(c);
    if (e < 0) return -1;
    t += e;
  }
  return t;
}

std::string when(double s) {
  return s < 0 ? "time unknown" : "about " + duration(s);
}

int list_suites(const SuiteArgs& a, const CLI::App& app) {
  const auto o = plan_options(a, app);
  fmt::print("Suites in {}:\n", study::suites_dir());
  for (const auto& name : study::shipped_suites()) {
    const auto spec = study::load_suite(name);
    const auto cases = study::plan(spec, o);
    fmt::print("  {:<16} {:>4} cases, {:<14} {}\n", name, cases.size(),
               when(estimate(cases)), spec.description);
  }
  return kExitOk;
}

// One line per case: a progress line redrawn in place on a terminal,
// plain lines otherwise.
class Progress {
 public:
  Progress(size_t total, double estimate)
      : total_(total), estimate_(estimate), tty_(isatty(STDERR_FILENO)) {}
  void start(size_t i, const study::PlannedCase& c, double est) {
    const double elapsed = util::seconds_since(t0_);
    const double left = std::max(0.0, estimate_ - done_estimate_);
    const double rate = done_estimate_ > 0 ? elapsed / done_estimate_ : 1.0;
    fmt::print(stderr, "{}[{}/{}] {} (elapsed {}, ETA {}){}",
               tty_ ? "\r\033[K" : "", i + 1, total_, c.label(),
               duration(elapsed), duration(estimate_ < 0 ? -1 : left * rate),
               tty_ ? "" : "\n");
    current_ = est;
  }
  void finish(const study::PlannedCase& c, const results::Record& r) {
    done_estimate_ += current_;
    if (tty_) fmt::print(stderr, "\r\033[K");
    fmt::print(stderr, "  {}: {}{}{}\n", c.label(),
               results::state_name(r.state),
               r.validity.valid() ? "" : " (" + r.validity.summary() + ")",
               r.message.empty() ? "" : " - " + r.message.substr(0, 160));
  }

 private:
  size_t total_;
  double estimate_, done_estimate_ = 0, current_ = 0;
  bool tty_;
  util::Clock::time_point t0_ = util::Clock::now();
};

// The suite's [cost] with the command line's replacements; none when
// neither asks for prices.
std::optional<study::CostRule> cost_rule(const SuiteArgs& a,
                                         const study::SuiteSpec& spec) {
  std::optional<study::CostRule> c = spec.cost;
  if (!a.instance.empty()) {
    if (!c) c.emplace();
    c->instance = a.instance;
  }
  if (a.baseline_threads) {
    if (!c) throw Error("--baseline-threads needs a price: --instance NAME");
    c->baseline_threads = *a.baseline_threads;
  }
  return c;
}

// Rules that cannot be met are usage errors before anything runs.
void check_rules(const std::vector<study::PlannedCase>& cases,
                 const study::SuiteSpec& spec) {
  for (const auto& c : cases) {
    const auto why =
        bench::stopping::rules_problem(c.c.request.warmup, c.c.request.stop);
    if (!why.empty())
      throw Error(spec.file + " with the command line's rules: " + why);
  }
}

// Where a suite's results go when the store fails mid-run and no --out was
// given: a file named after the run in the current folder, or in the
// temporary folder when the current one cannot be written.
std::string fallback_out(const std::string& run_id) {
  const std::string name = "nnbench-suite-" +
                           (run_id.empty() ? std::string("unstored") : run_id) +
                           ".json";
  try {
    util::check_writable(name);
    return name;
  } catch (const Error&) {
    return (std::filesystem::temp_directory_path() / name).string();
  }
}

// How the suite runs: its cost rule, isolation limits and the command.
study::SuiteRunOptions run_options(const SuiteArgs& a,
                                   const study::SuiteSpec& spec) {
  study::SuiteRunOptions o;
  o.pricing = cost_rule(a, spec);
  if (o.pricing)
    o.instance = cost::find_instance(
        cost::load_catalog(cost::default_catalog_path()), o.pricing->instance);
  o.in_process = a.in_process;
  o.find_max_batch = a.find_max_batch;
  o.max_batch_cap = a.max_batch_cap;
  o.limits = {a.timeout.value_or(spec.isolation.timeout_seconds),
              a.memory_limit.value_or(spec.isolation.memory_limit_gib)};
  o.resume = a.resume;
  for (const auto& s : a.argv) o.command += (o.command.empty() ? "" : " ") + s;
  o.interleave_seed = a.interleave;
  return o;
}

// What the suite says as it goes: its first line, each case's progress,
// notes, and what happens when the store fails mid-run. `run_id` is set
// when the run begins.
study::SuiteEvents suite_events(SuiteArgs& a, const study::SuiteSpec& spec,
                                size_t cases, size_t stored, int threads,
                                const machine::Peak& peak, Progress& progress,
                                std::string& run_id) {
  study::SuiteEvents ev;
  ev.began = [&a, &spec, &run_id, cases, stored, threads,
              gflops = peak.gflops](const std::string& id) {
    run_id = id;
    fmt::print(stderr,
               "nnbench: suite {} ({} cases{}), {} threads, peak {:.0f} "
               "GFLOP/s, run {}\n",
               spec.name, cases,
               stored == 0 ? "" : fmt::format(", {} already stored", stored),
               threads, gflops, id.empty() ? "(not stored)" : id);
    // An interrupt ends the case in flight (and its processes) and says
    // how to go on.
    util::lifeline::install();
    util::lifeline::set_note(
        id.empty() ? "nnbench: interrupted; nothing was stored (--no-store)"
        : a.find_max_batch
            ? "nnbench: interrupted; the probes so far are stored in run " +
                  id + " (a max-batch search starts over)"
            : "nnbench: interrupted; the finished cases are stored in run " +
                  id + ": rerun the same command with --resume " + id);
  };
  ev.started = [&progress](size_t i, const study::PlannedCase& c, double est) {
    progress.start(i, c, est);
  };
  ev.finished = [&progress](const study::PlannedCase& c,
                            const results::Record& r) {
    progress.finish(c, r);
  };
  ev.note = [](const std::string& s) {
    fmt::print(stderr, "nnbench: {}\n", s);
  };
  ev.line = [](const std::string& s) { fmt::print("{}\n", s); };
  // A store that fails mid-run (read-only, full, damaged) never costs a
  // finished case: every record goes to --out, or a file named after the
  // run, and the exit code is 3.
  ev.error = [&a, &run_id](const std::string& why) {
    if (a.out.empty()) a.out = fallback_out(run_id);
    util::lifeline::set_note(
        "nnbench: interrupted; the results store failed (" + why +
        "): the cases since are not stored");
    fmt::print(stderr,
               "nnbench: error: {}; going on without the store: every result "
               "of this invocation goes to {}\n",
               why, a.out);
  };
  return ev;
}

// The reporters a suite feeds as it goes: the store, the tables, --out (or
// the file a failing store chose) and --html. The store comes first: when
// it fails at the end, the file it chose is named before the results file
// is written, and a results file that cannot be written does not keep the
// run from being finished in the store.
struct Feeds {
  // Wraps `ev`'s error: whoever finds the store failing (the runner reading
  // a resumed run back, or the store's reporter), the store takes nothing
  // more and every result goes to --out or the file chosen then.
  Feeds(SuiteArgs& a, study::Store* store, study::SuiteEvents& ev)
      : json(a.out) {
    ev.error = [this, &a, say = ev.error](const std::string& why) {
      say(why);  // chooses a.out when none was given
      json.set_path(a.out);
      if (sqlite) sqlite->give_up(why);
    };
    if (store) sqlite.emplace(*store, ev.error);
    if (!a.html.empty()) html.emplace(a.html);
    all.add(sqlite ? &*sqlite : nullptr);
    all.add(&console);
    all.add(&json);
    all.add(html ? &*html : nullptr);
  }
  Feeds(const Feeds&) = delete;
  Feeds& operator=(const Feeds&) = delete;

  reporters::Console console;
  reporters::JsonFile json;
  std::optional<reporters::Sqlite> sqlite;
  std::optional<reporters::Html> html;
  results::Reporters all;
};

// After the reporters: where the results went, and the exit code.
int report_suite(const SuiteArgs& a, const study::SuiteOutcome& r,
                 const study::Store* store, const std::string& store_error) {
  if (!a.out.empty())
    fmt::print(
        stderr, "nnbench: wrote {}{}\n", a.out,
        store_error.empty() ? "" : " (the results the store could not take)");
  if (!a.html.empty()) fmt::print(stderr, "nnbench: wrote {}\n", a.html);
  if (store && store_error.empty())
    fmt::print(stderr, "nnbench: stored as run {} in {}\n", r.run_id,
               store->path());
  if (!store_error.empty()) return kExitIo;
  return r.failures ? kExitRunNotOk : kExitOk;
}

int suite_command(SuiteArgs& a, const CLI::App& app) {
  if (a.list) return list_suites(a, app);
  // The file checked as written (its errors name their lines), then
  // --set's settings over it, checked in turn.
  study::SuiteSpec file = study::load_suite(a.name);
  study::check_names(file, backend::backend_names());
  const study::SuiteSpec spec = with_settings(std::move(file), a.sets);
  if (!a.instance.empty()) machine::name_instance(a.instance, "");
  const auto all = study::plan(spec, plan_options(a, app));
  const auto shard =
      study::resolve_shard(a.shard, a.study, study::process_env());
  const auto cases = shard ? study::share(all, *shard) : all;
  check_rules(cases, spec);
  // Before the first case (and with --check): not 36 cases failing alike.
  study::check_datasets(cases);
  study::SuiteRunOptions o = run_options(a, spec);
  if (shard) {
    o.shard = shard;
    o.study_plan_sha256 = study::plan_hash(all);
    o.study_cases = static_cast<int>(all.size());
    fmt::print(stderr,
               "nnbench: study {}, shard {} of {} ({}): {} of {} cases\n",
               shard->study, shard->index, shard->count, shard->from,
               cases.size(), all.size());
  }
  if (a.check) {
    fmt::print("{}: ok, {} cases, {}\n", spec.file, cases.size(),
               when(estimate(cases)));
    return kExitOk;
  }
  if (!a.out.empty()) util::check_writable(a.out);
  if (!a.html.empty()) util::check_writable(a.html);
  std::optional<study::Store> store;
  if (!a.no_store) store.emplace(study::Store::path_or_default(a.db));
  const auto done =
      study::resumable(store ? &*store : nullptr, a.resume, spec, cases);

  const machine::Environment env = capture_and_warn();
  const int threads = machine::resolve_threads(a.request.options.threads);
  const machine::Peak peak = measure_peak(threads, &env.cpu);
  Progress progress(cases.size(), estimate(cases));
  std::string run_id;
  study::SuiteEvents ev = suite_events(a, spec, cases.size(), done.size(),
                                       threads, peak, progress, run_id);
  // Framework workers forked from one zygote per engine and environment,
  // its import done once (engines/worker/zygote.h). Not while searching
  // for the largest batch that fits: the idle zygotes' memory would move
  // where a case runs out of it.
  std::optional<engines::worker::zygote::Zygotes> zygotes;
  if (!a.fresh_workers && !a.find_max_batch) zygotes.emplace();
  Feeds feeds(a, store ? &*store : nullptr, ev);
  const study::SuiteOutcome r =
      study::run_suite(spec, cases, store ? &*store : nullptr, done, env, peak,
                       o, ev, feeds.all);
  const std::string store_error =
      !r.store_error.empty()
          ? r.store_error
          : (feeds.sqlite ? feeds.sqlite->error() : std::string());
  if (r.interrupted) {
    // What finished reached --out (or the file the store's failure
    // chose); the note says how to go on.
    if (!a.out.empty())
      fmt::print(stderr, "nnbench: wrote the finished cases to {}\n", a.out);
    fmt::print(stderr, "{}\n", util::lifeline::note());
    return 128 + r.interrupted;
  }
  util::lifeline::set_note("");
  return report_suite(a, r, store ? &*store : nullptr, store_error);
}

}  // namespace

Action add_suite(CLI::App& app) {
  auto a = std::make_shared<SuiteArgs>();
  app.add_option("name", a->name,
                 "A shipped suite (see --list) or a suite file (.toml)")
      ->capture_default_str();
  app.add_flag("--list", a->list,
               "List the shipped suites, their case counts and estimated "
               "times");
  app.add_flag("--check", a->check,
               "Validate the suite file and count its cases; run nothing");
  a->request.backend = backend::default_backend();
  app.add_option("--out", a->out,
                 "Also write the results as JSON to this file");
  app.add_option("--html", a->html,
                 "Also write the HTML report of this run (as nnbench report "
                 "makes) to this file");
  app.add_option("--db", a->db,
                 "Results store (SQLite; default $NNBENCH_DB, else "
                 "~/.local/share/nnbench/results.db)");
  app.add_flag("--no-store", a->no_store, "Do not write to the results store");
  app.add_option("--resume", a->resume,
                 "Continue a stored run: cases already stored are skipped");
  app.add_option("--repetitions", a->repetitions,
                 "Run every case this many times, each in its own process "
                 "(replaces the suite's repetitions)")
      ->check(positive(results::kMaxRepetitions));
  app.add_option("--set", a->sets,
                 "KEY=VALUE over the suite's [settings] (repeatable), e.g. "
                 "--set data=synthetic --set epochs=1 for a training suite")
      ->allow_extra_args(false);
  app.add_option("--interleave", a->interleave,
                 "Shuffle the case order with this seed (recorded), so slow "
                 "drift of a shared machine spreads over all cases (0 to "
                 "2^64-1)");
  app.add_option("--shard", a->shard,
                 "Run one shard of the study split over machines: I/N "
                 "(0 <= I < N <= 10000), auto (a Slurm job array's task), or "
                 "auto/N (a Kubernetes Indexed Job's JOB_COMPLETION_INDEX of "
                 "N); every N-th case by key, the same split on every machine");
  app.add_option("--study", a->study,
                 "With --shard: the study's name, shared by its shards "
                 "(default in a Slurm array: slurm-JOBID)");
  app.add_flag("--fresh-workers", a->fresh_workers,
               "Start every case's framework worker as a new process that "
               "imports its framework, instead of forking it from the "
               "suite's zygote of that engine (recorded as worker_start)");
  app.add_flag("--in-process", a->in_process,
               "Run every case in this process (no isolation: a crash ends "
               "the suite)");
  app.add_flag("--find-max-batch", a->find_max_batch,
               "For each case without its batch: the largest batch that "
               "fits (doubling, then bisection; each probe isolated and "
               "stored, OOM probes included)");
  app.add_option("--max-batch-cap", a->max_batch_cap,
                 "Largest batch --find-max-batch tries")
      ->check(positive(results::kMaxBatch))
      ->capture_default_str();
  app.add_option("--timeout", a->timeout,
                 "Wall-clock seconds per case before it is killed (default: "
                 "the suite's, 600; 0: no limit)")
      ->check(non_negative(results::kMaxSeconds));
  app.add_option("--memory-limit", a->memory_limit,
                 "Address space per case in GiB (default: the suite's; 0: "
                 "none)")
      ->check(non_negative(65536));
  app.add_option("--instance", a->instance,
                 "The cloud instance this machine is (data/prices.json), "
                 "recorded with every case; prices training cases as it "
                 "(replaces the suite's [cost] instance)");
  app.add_option("--baseline-threads", a->baseline_threads,
                 "The thread count whose case time and cost are 1.0 (0: the "
                 "most threads of each task)")
      ->check(non_negative(results::kMaxThreads));
  add_measurement_options(app, a->request);
  return [a, &app] {
    a->argv = {"nnbench", "suite", a->name};
    return suite_command(*a, app);
  };
}

}  // namespace nnbench::cli
