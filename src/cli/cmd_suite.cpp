// `nnbench suite`: a named set of runs; one failure never stops the rest.
#include <fmt/core.h>

#include "backend/registry.h"
#include "bench/runner.h"
#include "bench/suites.h"
#include "cli/app.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/session.h"
#include "cli/table.h"
#include "machine/threads.h"
#include "model/zoo/zoo.h"
#include "scenarios/scenario.h"
#include "util/atomic_file.h"

namespace nnbench::cli {
namespace {

struct SuiteArgs {
  std::string name = "quick", out;
  results::RunRequest request;
  bool list = false;
};

int list_suites() {
  for (const auto& s : bench::suites()) {
    fmt::print("{}: {}\n", s.name, s.description);
    for (const auto& e : s.entries)
      fmt::print("  {} {} batch {}\n", e.model, backend::mode_name(e.mode),
                 e.batch);
  }
  return kExitOk;
}

int suite_command(SuiteArgs& a) {
  if (a.list) return list_suites();
  const bench::Suite& suite = bench::suite(a.name);
  auto b = backend::make_backend(a.request.backend);
  if (!a.out.empty()) util::check_writable(a.out);

  const machine::Environment env = capture_and_warn();
  const int threads = machine::resolve_threads(a.request.options.threads);
  const machine::Peak peak = machine::measure_gemm_peak(threads);
  fmt::print(stderr,
             "nnbench: suite {} on {} ({} threads), peak {:.0f} GFLOP/s\n",
             suite.name, b->name(), threads, peak.gflops);
  const auto throughput = scenarios::make_scenario("throughput");
  std::vector<results::RunResult> runs;
  for (const auto& e : suite.entries) {
    scenarios::Case c;
    c.model = e.model;
    c.request = a.request;
    c.request.mode = e.mode;
    c.request.batch = e.batch;
    auto rec = throughput->run(*b, c, {peak});
    runs.push_back(dynamic_cast<results::RunResult&>(*rec));
    const results::RunRequest& r = c.request;
    print_progress(runs.back());
    if (!runs.back().validity.valid() &&
        r.contention.action == results::ContentionPolicy::Action::kFail) {
      fmt::print(stderr,
                 "nnbench: stopping the suite (--on-contention fail)\n");
      break;
    }
  }
  fmt::print("{}", results_table(runs));
  if (!a.out.empty()) {
    write_report(a.out, env, peak, runs);
    fmt::print(stderr, "nnbench: wrote {}\n", a.out);
  }
  // An oom or unimplemented cell is a result, as in the studies' tables;
  // a failed run, invalid arguments or a contended run (unless only
  // warned about) is not.
  for (const auto& r : runs)
    if (r.state == results::State::kFailed ||
        r.state == results::State::kInvalidArgs || invalid_counts(r))
      return kExitRunNotOk;
  return kExitOk;
}

}  // namespace

Action add_suite(CLI::App& app) {
  auto a = std::make_shared<SuiteArgs>();
  app.add_option("name", a->name, "Suite name (see --list)")
      ->capture_default_str();
  app.add_flag("--list", a->list, "List the suites and their runs");
  a->request.backend = backend::default_backend();
  app.add_option("--out", a->out, "Write the results as JSON to this file");
  add_measurement_options(app, a->request);
  return [a] { return suite_command(*a); };
}

}  // namespace nnbench::cli
