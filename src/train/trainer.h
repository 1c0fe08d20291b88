#pragma once
// Training runs on real data with DAWNBench's timing rules: the training
// time is read at the end of the first epoch whose evaluation on the full
// validation set reaches the target; model initialisation (compile, weight
// upload) and evaluation are timed apart and excluded unless asked.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "bench/cpu_usage.h"
#include "data/dataset.h"
#include "results/validity.h"
#include "train/task.h"

namespace nnbench::train {

struct TrainOptions {
  uint64_t seed = 1;
  int threads = 0;
  std::string precision = "fp32";
  bool include_eval_time = false;  // DAWNBench excludes it by default
  double max_seconds = 0;          // time budget; 0: only the epoch budget
  int epochs = 0;                  // override the task's epoch budget
  double target = -1;              // override the task's target (-1: keep)
  bool latency = false;       // measure DAWNBench latency on the trained model
  int64_t latency_items = 0;  // 0: the full validation set
  results::ContentionRule contention;
  // What the CLI does with a contended run: "fail" (stop, exit 1) or
  // "warn" (record it invalid, go on). Either way it is recorded invalid.
  std::string on_contention = "fail";
};

struct EpochRow {
  int epoch = 0;
  double lr = 0;                  // at the end of the epoch
  double train_seconds = 0;       // cumulative, as counted for time-to-target
  double epoch_seconds = 0;       // this epoch's training loop
  double eval_seconds = 0;        // this epoch's evaluation
  double data_wait_seconds = 0;   // training loop time spent waiting for data
  double loss = 0, accuracy = 0;  // training, mean over the epoch
  double val_loss = 0, val_accuracy = 0;  // full validation set
  double wall_seconds = 0;  // since run start (after init), at eval end
};

struct TrainRun {
  std::string task, backend, backend_version, model, model_hash;
  uint64_t seed = 0;
  // converged | not_converged (target not reached within the budget) |
  // completed (fixed epochs, all run) | stopped (fixed epochs, cut short by
  // the time budget) | failed | invalid_args | unimplemented | oom
  std::string state;
  std::string message;
  double target = 0;
  double init_seconds = 0;    // compile + first weights, excluded
  int64_t start_unix_ms = 0;  // wall clock at run start (after init)
  double time_to_target = 0;  // seconds at the converging epoch
  double total_train_seconds = 0, total_eval_seconds = 0;
  double final_val_accuracy = 0;
  std::vector<EpochRow> epochs;
  nlohmann::json effective;
  nlohmann::json latency;  // train::to_json(Latency) when measured
  // The training loops' CPU usage over all epochs, judged for contention:
  // a converged run whose threads did not get their CPUs is invalid.
  results::CpuUsage cpu_usage;
  results::Validity validity;
};

// Never throws for failures of the run: they become its state.
TrainRun train_task(backend::Backend& b, const Task& task,
                    const data::Dataset& data, const TrainOptions& o);

nlohmann::json to_json(const TrainRun& r);

// Accuracy and mean loss of logits against labels (host arithmetic, so
// every backend is scored the same way).
struct Score {
  double loss_sum = 0;
  int64_t correct = 0, count = 0;
};
void score(const host::Tensor& logits, const host::Tensor& labels, bool binary,
           Score& s);

}  // namespace nnbench::train
