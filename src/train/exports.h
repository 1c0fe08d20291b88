#pragma once
// Exports of training runs in the formats the studies' communities read:
// DAWNBench entries (a JSON file and the per-epoch TSV) and MLPerf-style
// `:::MLLOG` lines.
#include <string>

#include "cost/catalog.h"
#include "train/trainer.h"

namespace nnbench::train {

// The per-epoch TSV of a DAWNBench training entry: epoch, hours of training
// time (as counted for time-to-accuracy), top-1 accuracy in percent.
std::string dawnbench_tsv(const TrainRun& r);

// The entry's JSON: model, framework, hardware, cost per hour and the result.
nlohmann::json dawnbench_entry(const TrainRun& r, const std::string& hardware,
                               const cost::Price* price);

// One `:::MLLOG {json}` line per event: submission, seed, run_start,
// epoch_start/stop, eval_accuracy, run_stop with its status.
std::string mllog(const TrainRun& r);

}  // namespace nnbench::train
