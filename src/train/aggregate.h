#pragma once
// MLPerf's rule for a time-to-train result over several seeds: drop the
// fastest and the slowest run and average the rest. One run that did not
// converge may be dropped as the slowest; more than one makes the result
// invalid.
#include <string>
#include <vector>

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
Aggregate aggregate(const std::vector<TrainRun>& runs);

// N distinct seeds derived from a base seed, recorded with the results.
std::vector<uint64_t> seeds_for(uint64_t base, int n);

}  // namespace nnbench::train
