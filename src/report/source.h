#pragma once
// What a report or a comparison reads: one run from the results store or
// one results file, as records.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "results/inference.h"
#include "results/result.h"

namespace nnbench::report {

// A derived figure stored with a run (study/store.h's DerivedRow, copied so
// the report needs no store).
struct Figure {
  std::string name, group;
  double x = 0, value = 0;
};

struct Source {
  std::string name;   // the run id or file as given
  std::string label;  // "run ID (suite)" or the file name
  nlohmann::json environment;
  std::vector<results::RunResult> runs;
  std::vector<results::TrainRun> training;
  std::vector<results::InferenceRun> inference;  // LoadGen's scenarios
  std::vector<Figure> derived;  // a suite's (its run or its --out file)
  std::string price_note;       // how costs were priced, when they were
};

}  // namespace nnbench::report
