#pragma once
// The record of training to a target on real data (train/trainer.h runs it)
// with DAWNBench's timing rules: the time is read at the end of the first
// epoch whose full validation reaches the target.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "results/latency.h"
#include "results/record.h"

namespace nnbench::results {

struct EpochRow {
  int epoch = 0;
  double lr = 0;                 // at the end of the epoch
  double train_seconds = 0;      // cumulative, as counted for time-to-target
  double epoch_seconds = 0;      // this epoch's training loop
  double eval_seconds = 0;       // this epoch's evaluation
  double data_wait_seconds = 0;  // training loop time spent waiting for data
  // Training, mean over the epoch; accuracy NaN where it was not counted
  // (written null).
  double loss = 0, accuracy = 0;
  double val_loss = 0, val_accuracy = 0;  // full validation set
  double wall_seconds = 0;  // since run start (after init), at eval end
};

// State: converged | not_converged (target not reached within the budget) |
// completed (fixed epochs, all run) | stopped (fixed epochs, cut short by
// the time budget) | a failure. cpu_usage covers the training loops of all
// epochs: a converged run whose threads did not get their CPUs is invalid.
struct TrainRun : Record {
  TrainRun() { kind = "training"; }
  nlohmann::json serialize() const override;
  void file_into(Report& r) const override;

  std::string task;
  uint64_t seed = 0;
  double target = 0;
  double init_seconds = 0;    // compile + first weights, excluded
  int64_t start_unix_ms = 0;  // wall clock at run start (after init)
  double time_to_target = 0;  // seconds at the converging epoch
  double total_train_seconds = 0, total_eval_seconds = 0;
  double final_val_accuracy = 0;
  // Trained on `--data synthetic` (data/dataset.h): the times stand, the
  // accuracies are not measurements and are written as null.
  bool synthetic_data = false;
  // "steps" (the harness's staged steps) or "framework" (the framework's
  // own loop, described in effective.extras["training_loop"]); a key of the
  // case, so both ways can stand side by side.
  std::string loop = "steps";
  std::vector<EpochRow> epochs;
  std::optional<Latency> latency;  // when measured
};

// The seconds one training run is charged for: its time to target when it
// converged, all its fixed epochs when it completed them; none when it
// stopped short, missed its target, failed or is invalid (that time is not
// the cost of a training run). The per-run rule; train/aggregate.h prices a
// task's set of runs (MLPerf's means) with the same states.
std::optional<double> priced_seconds(State state, bool valid,
                                     double time_to_target,
                                     double total_train_seconds);
std::optional<double> priced_seconds(const TrainRun& r);

// The engine as tables, charts and cost groups name it: "mxnet", or
// "mxnet (framework loop)" for a run through the framework's own loop.
std::string engine_label(const std::string& backend, const std::string& loop);
std::string engine_label(const TrainRun& r);

nlohmann::json to_json(const TrainRun& r);
TrainRun train_run_from_json(const nlohmann::json& j);

}  // namespace nnbench::results
