#pragma once
// Results named on the command line as run ids (the results store) or
// results files (JSON): what compare and report read.
#include <string>
#include <vector>

#include "report/source.h"
#include "results/result.h"

namespace nnbench::cli {

using Loaded = report::Source;

// A path to an existing file is read as results JSON (any readable
// schema); anything else is a run id in `db` (empty: the default store),
// with its derived figures and how its costs were priced.
// Errors name the file or the id.
Loaded load_results(const std::string& name, const std::string& db);

// "model backend precision mode p2 gloo b32 t2" (the scenario for the
// mode when not throughput; the ranks only when more than one): the case a
// result measured, results::CaseKey's name, with the threads it effectively
// ran. Without threads when `with_threads` is false (comparing a 1-thread
// run with a 2-thread run of the same cases).
std::string case_key(const results::RunResult& r, bool with_threads = true);
std::string case_key(const results::TrainRun& r, bool with_threads = true);

}  // namespace nnbench::cli
