#pragma once
// How `nnbench train` shows and writes its runs.
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "cost/catalog.h"
#include "data/dataset.h"
#include "machine/environment.h"
#include "train/aggregate.h"
#include "train/task.h"
#include "train/trainer.h"

namespace nnbench::cli {

// The per-epoch table of one run and its outcome, on stdout. `o` says how
// its time was counted (--include-eval-time).
void print_run(const train::TrainRun& r, const train::TrainOptions& o);

// Time-to-accuracy over the seeds, latency and costs, on stdout.
void print_summary(const std::vector<train::TrainRun>& runs,
                   const train::Aggregate& agg,
                   const std::optional<cost::Price>& price,
                   const train::TrainOptions& o);

nlohmann::json train_report(const train::Task& task, const data::Dataset& d,
                            double load_seconds,
                            const machine::Environment& env,
                            const std::vector<train::TrainRun>& runs,
                            const train::Aggregate& agg,
                            const std::optional<cost::Price>& price,
                            const train::TrainOptions& o);

}  // namespace nnbench::cli
