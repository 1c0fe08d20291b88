#include "cli/options.h"

#include <fmt/core.h>

#include <cmath>

#include "bench/stopping/registry.h"
#include "results/limits.h"
#include "util/text.h"

namespace nnbench::cli {
namespace {

// 65536, 0.5, 1e+07: whole numbers as integers, so --help reads plainly.
std::string shown(double v) {
  return v == std::floor(v) && std::fabs(v) < 1e15
             ? fmt::format("{}", static_cast<int64_t>(v))
             : fmt::format("{:g}", v);
}

}  // namespace

CLI::Validator bounded(double lo, double hi, bool lo_open) {
  // The range as --help shows it after the type: INT:[0, 1024].
  const std::string range =
      (lo_open ? "(" : "[") + shown(lo) + ", " + shown(hi) + "]";
  return CLI::Validator(
      [lo, hi, lo_open](std::string& text) -> std::string {
        size_t used = 0;
        double v = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::out_of_range&) {
          // Beyond a double (1e999): above any bound, not "not a number".
          const bool negative = !text.empty() && text[0] == '-';
          return negative ? "must be at least " + shown(lo) + ", not " + text
                          : "must be at most " + shown(hi) + ", not " + text;
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != text.size() || text.empty() || std::isnan(v))
          return "must be a number, not '" + text + "'";
        if (lo_open && v <= lo)
          return "must be > " + shown(lo) + ", not " + text;
        if (v < lo) return "must be at least " + shown(lo) + ", not " + text;
        if (v > hi)
          return "must be at most " + shown(hi) + " (the bound), not " + text;
        return "";
      },
      range);
}

CLI::Validator positive(double hi) { return bounded(0, hi, true); }

CLI::Validator non_negative(double hi) { return bounded(0, hi, false); }

void add_contention_rule(CLI::App& app, results::ContentionRule& rule) {
  app.add_option("--contention-max-load", rule.max_excess_load,
                 "CPUs others may keep busy on average beyond those the run "
                 "leaves spare before it is contended (recorded with the "
                 "result)")
      ->check(non_negative(results::kMaxThreads))
      ->capture_default_str();
  app.add_option("--contention-max-steal", rule.max_steal_fraction,
                 "Fraction of CPU time the hypervisor may steal before a run "
                 "is contended (recorded with the result)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
}

void add_shared_options(CLI::App& app, const SharedOptions& s) {
  if (s.backend)
    app.add_option("--backend", *s.backend,
                   "Backend (nnbench env lists the built ones)")
        ->capture_default_str();
  if (s.device)
    app.add_option("--device", *s.device,
                   "cpu, or a device the backend lists in nnbench env (e.g. "
                   "cuda:0)")
        ->capture_default_str();
  if (s.threads)
    app.add_option("--threads", *s.threads,
                   "Intra-op threads (0: every CPU this process may use; "
                   "recorded as asked, the count used as effective; at most "
                   "1024)")
        ->check(non_negative(results::kMaxThreads))
        ->capture_default_str();
  if (s.seed)
    app.add_option(
           "--seed", *s.seed,
           "Seed for weights, data order and synthetic data (with "
           "several runs, the first run's; each next run adds 1; 0 to 2^64-1)")
        ->capture_default_str();
  if (s.precision)
    app.add_option("--precision", *s.precision,
                   "fp32, or bf16 where the backend has it (nnbench env "
                   "lists each backend's precisions)")
        ->capture_default_str();
}

void add_measurement_options(CLI::App& app, results::RunRequest& r) {
  auto& o = r.options;
  add_shared_options(
      app, {&r.backend, &o.device, &o.threads, &o.seed, &o.precision});
  app.add_option("--lr", o.learning_rate, "SGD learning rate")
      ->check(positive(1000))
      ->capture_default_str();
  app.add_option("--momentum", o.momentum, "SGD momentum")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--warmup-iters", r.warmup.min_iterations,
                 "Minimum warm-up iterations")
      ->check(non_negative(results::kMaxIterations))
      ->capture_default_str();
  app.add_option("--warmup-time", r.warmup.min_seconds,
                 "Minimum warm-up seconds")
      ->check(non_negative(results::kMaxSeconds))
      ->capture_default_str();
  app.add_option("--min-iters", r.stop.min_iterations,
                 "Minimum measured iterations")
      ->check(positive(results::kMaxIterations))
      ->capture_default_str();
  app.add_option("--min-time", r.stop.min_seconds, "Minimum measured seconds")
      ->check(non_negative(results::kMaxSeconds))
      ->capture_default_str();
  app.add_option("--max-iters", r.stop.max_iterations,
                 "Stop after this many measured iterations")
      ->check(positive(results::kMaxIterations))
      ->capture_default_str();
  app.add_option("--max-time", r.stop.max_seconds,
                 "Stop measuring after this many seconds")
      ->check(positive(results::kMaxSeconds))
      ->capture_default_str();
  auto* crit =
      app.add_option("--criterion", r.stop.criterion,
                     "Stopping criterion once the minimums hold, by name; "
                     "its parameters with --criterion-param:\n" +
                         bench::stopping::describe_criteria())
          ->capture_default_str();
  app.add_option_function<std::vector<std::string>>(
         "--criterion-param",
         [&r](const std::vector<std::string>& kvs) {
           for (const auto& kv : kvs) {
             const auto eq = kv.find('=');
             double v = 0;
             if (eq == std::string::npos || eq == 0 ||
                 !util::parse_number(kv.substr(eq + 1), v))
               throw CLI::ValidationError(
                   "--criterion-param",
                   "'" + kv + "' is not NAME=NUMBER (e.g. max_rel=0.02)");
             r.stop.parameters[kv.substr(0, eq)] = v;
           }
         },
         "A parameter of the criterion, NAME=NUMBER (repeatable)")
      ->needs(crit);
  app.add_option_function<double>(
         "--max-rel-ci",
         [&r](double x) { results::set_max_relative_ci(r.stop, x); },
         "Shorthand for --criterion median-ci --criterion-param max_rel=X: "
         "measure until the 95% CI of the median is within this fraction of "
         "it (e.g. 0.01); 0 sets the minimums criterion")
      ->check(CLI::Range(0.0, 1.0))
      ->excludes(crit);
  auto& c = r.contention;
  app.add_option_function<std::string>(
         "--on-contention",
         [&c](const std::string& s) {
           c.action = results::action_from_name(s);
         },
         "When a run's threads did not get their CPUs (other processes, "
         "hypervisor steal): warn (record it invalid), fail (record it "
         "invalid and stop), retry (pause, rerun, then record it invalid)")
      ->check(CLI::IsMember({"warn", "fail", "retry"}))
      ->default_str("retry");
  app.add_option("--contention-retries", c.retries,
                 "Reruns of a contended run with --on-contention retry")
      ->check(non_negative(results::kMaxRepetitions))
      ->capture_default_str();
  app.add_option("--contention-pause", c.pause_seconds,
                 "Seconds to wait before rerunning a contended run")
      ->check(non_negative(results::kMaxSeconds))
      ->capture_default_str();
  add_contention_rule(app, c.rule);
  app.add_flag("!--no-memory-check", r.memory_check,
               "Run even when the memory estimate exceeds available memory");
}

}  // namespace nnbench::cli
