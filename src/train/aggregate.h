#pragma once
// MLPerf's rule for a time-to-train result over several seeds: drop the
// fastest and the slowest run and average the rest. One run that did not
// converge may be dropped as the slowest; more than one makes the result
// invalid.
#include <optional>
#include <string>
#include <vector>

#include "cost/catalog.h"
#include "train/trainer.h"

namespace nnbench::train {

struct Aggregate {
  bool valid = false;
  std::string reason;  // why not valid
  int runs = 0, converged = 0;
  double mean_time_to_target = 0;  // of the runs kept
  std::vector<uint64_t> kept_seeds, dropped_seeds;
};

// With fewer than 3 runs nothing is dropped (and a non-converged run makes
// the result invalid): the rule needs a fastest and a slowest to drop.
// Every state other than converged (not_converged, failed, oom,
// unimplemented) is a run that did not converge. Equal times are ordered by
// seed, so the same runs always give the same kept and dropped seeds. Any
// invalid run (e.g. contended) makes the result invalid: its time is not the
// backend's.
Aggregate aggregate(const std::vector<TrainRun>& runs);

// N distinct seeds derived from a base seed, recorded with the results.
std::vector<uint64_t> seeds_for(uint64_t base, int n);

// The training time a price applies to: for a task with a target, the
// aggregate time to target when it is valid; for a fixed-epoch task, the
// mean training time of its runs when every run completed; never when a run
// is invalid. Times are as the
// runs counted them (evaluation included when `eval_counted`, i.e. with
// --include-eval-time). Otherwise nullopt and `why_not` says why: the time
// of a run that missed its target is not a cost of training.
std::optional<cost::PricedTime> priced_training_time(
    const std::vector<TrainRun>& runs, const Aggregate& agg, bool eval_counted,
    std::string* why_not);

}  // namespace nnbench::train
