#pragma once
// What a report or a comparison reads: one run from the results store or
// one results file, as records.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "results/generation.h"
#include "results/inference.h"
#include "results/reporter.h"
#include "results/result.h"

namespace nnbench::report {

// A derived figure stored with a run or a suite's results file.
using Figure = results::Figure;

struct Source {
  std::string name;   // the run id or file as given
  std::string label;  // "run ID (suite)" or the file name
  nlohmann::json environment;
  std::vector<results::RunResult> runs;
  std::vector<results::TrainRun> training;
  std::vector<results::InferenceRun> inference;  // LoadGen's scenarios
  std::vector<results::GenerationRun> generation;
  std::vector<Figure> derived;  // a suite's (its run or its --out file)
  std::string price_note;       // how costs were priced, when they were
};

// Files the record into the source's list for its measure (a kind of no
// list the report draws is left out).
void add_record(Source& s, const results::Record& r);

}  // namespace nnbench::report
