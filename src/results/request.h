#pragma once
// What the user asked a run to do. What actually ran is recorded beside it
// (RunResult::effective), never overwritten into it.
#include <cstdint>
#include <map>
#include <string>

#include "backend/backend.h"
#include "results/distributed.h"

namespace nnbench::results {

// Warm-up runs the same code path as measurement and is then discarded.
struct WarmupRule {
  int min_iterations = 5;
  double min_seconds = 1.0;
  double max_seconds = 30.0;  // stop warming up a very slow step early
};

// Measurement stops when every minimum holds and the criterion, chosen by
// name with its own parameters (bench/stopping/registry.h), is met; or when
// a maximum is reached, whatever the criterion says.
struct StopRule {
  int min_iterations = 10;
  double min_seconds = 2.0;
  int max_iterations = 1000000;
  double max_seconds = 60.0;
  // "minimums" (the minimums are enough), "median-ci" (max_rel: the 95 %
  // CI of the median within +-max_rel of it), or one registered later.
  std::string criterion = "minimums";
  // As asked; a parameter left out takes the criterion's default.
  std::map<std::string, double> parameters;
};
// The median-ci criterion with max_rel = fraction (the --max-rel-ci and
// max_relative_ci shorthand); 0 sets the minimums criterion back.
void set_max_relative_ci(StopRule& s, double fraction);

// Thresholds, justified in docs/performance.md ("Contention"): a co-runner
// busy 10 % of the time (0.1 CPU) slowed ResNet-56 steps by 6-20 %, while
// idle runs showed 0.000-0.030 CPU of other load (AMD EPYC, 2 vCPU).
struct ContentionRule {
  // Others may use the CPUs the run leaves spare, plus this many CPUs on
  // average (plus the resolution of /proc/stat, see load_resolution) before
  // the run's threads must have waited for a CPU.
  double max_excess_load = 0.05;
  double max_steal_fraction = 0.05;
  // Intervals shorter than this are not judged: /proc/stat counts in
  // 10 ms ticks.
  double min_wall_seconds = 0.25;
};

// What to do with a run whose threads did not get their CPUs (cpu_usage.h):
// warn: record it invalid and go on; fail: record it invalid and stop;
// retry: pause, rerun up to `retries` times, then record it invalid.
struct ContentionPolicy {
  enum class Action { kWarn, kFail, kRetry };
  Action action = Action::kRetry;
  int retries = 2;
  double pause_seconds = 5;
  ContentionRule rule;
};
std::string action_name(ContentionPolicy::Action a);

// "" when the rules can be met, else what contradicts (a negative minimum,
// a maximum below its minimum), naming each field as a suite file spells it
// and as the command line does: "[stop] max_seconds (--max-time) 0.001 is
// below min_seconds (--min-time) 2".
std::string rule_problem(const WarmupRule& w, const StopRule& s);
ContentionPolicy::Action action_from_name(const std::string& s);  // throws

struct RunRequest {
  std::string backend;  // the CLI defaults it to backend::default_backend()
  backend::Mode mode = backend::Mode::kTrain;
  int64_t batch = 32;
  backend::Options options;
  WarmupRule warmup;
  StopRule stop;
  int distinct_batches = 4;  // synthetic batches cycled through
  bool memory_check = true;  // refuse runs estimated not to fit in memory
  ContentionPolicy contention;
  DistributedRequest distributed;  // engine "": one process
};

}  // namespace nnbench::results
