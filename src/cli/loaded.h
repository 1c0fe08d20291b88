#pragma once
// Results named on the command line as run ids (the results store) or
// results files (JSON): what compare and report read.
#include <string>
#include <vector>

#include "results/result.h"

namespace nnbench::cli {

struct Loaded {
  std::string name;  // the run id or file as given
  std::string label;  // "run ID (suite)" or the file name
  nlohmann::json environment;
  std::vector<results::RunResult> runs;
  std::vector<results::TrainRun> training;
};

// A path to an existing file is read as results JSON (any readable
// schema); anything else is a run id in `db` (empty: the default store).
// Errors name the file or the id.
Loaded load_results(const std::string& name, const std::string& db);

// "model backend precision mode b32 t2" (+ the kind when not throughput):
// the case a result measured, with the threads it effectively ran.
std::string case_key(const results::RunResult& r);

}  // namespace nnbench::cli
