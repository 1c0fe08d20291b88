#pragma once
// The studies' question asked of one run: which engine is fastest here, per
// model? In each cell (model, mode, precision, batch, threads) the engines
// that measured a valid time are ranked by median and the fastest is
// compared with the runner-up by compare_case (ratio of medians, bootstrap
// interval, Mann-Whitney); each model then gets one verdict line from its
// headline cell (one two engines ran in; training at the most threads, the
// studies' figure) and a count over its other cells. A difference the
// statistics cannot support is called a tie.
#include <map>
#include <string>
#include <vector>

#include "compare/compare.h"
#include "results/result.h"

namespace nnbench::compare {

// One process per engine measures only that process's noise; on this
// machine processes of one case differed by 3-13 % (docs/compare.md), so a
// smaller difference between engines is a tie.
inline Options engine_options() {
  Options o;
  o.min_repetitions = 1;
  o.noise = 0.10;
  return o;
}

struct Cell {
  std::string name;                // "train b64 t2"
  std::string fastest, runner_up;  // "" when fewer than two engines ran
  double speedup = 0;              // runner-up's median / fastest's
  results::Interval speedup_ci;    // 95 %, bootstrap
  bool tie = false;
  std::string why;  // compare's reason
};

struct ModelVerdict {
  std::string model;
  Cell headline;
  int cells = 0, wins = 0, ties = 0;   // over cells with two engines or more
  std::map<std::string, int> wins_by;  // cells each engine won outright
  std::vector<std::string> engines;    // that measured any valid time
  // Engines that ran no valid time in the headline cell: "onednn:
  // unimplemented (layer 'lstm_1' (lstm))".
  std::vector<std::string> missing;
  std::string line;  // the sentence for tables and the report
};

std::vector<ModelVerdict> fastest_engines(
    const std::vector<results::RunResult>& runs,
    const Options& o = engine_options());

}  // namespace nnbench::compare
