#pragma once
// Training runs on real data with DAWNBench's timing rules: the training
// time is read at the end of the first epoch whose evaluation on the full
// validation set reaches the target; model initialisation (compile, weight
// upload) and evaluation are timed apart and excluded unless asked.
#include <string>
#include <vector>

#include "backend/backend.h"
#include "bench/cpu_usage.h"
#include "data/dataset.h"
#include "results/training.h"
#include "train/task.h"

namespace nnbench::train {

struct TrainOptions {
  uint64_t seed = 1;
  std::string device = "cpu";
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
  // Where to write the trained parameters (a tensor file, by canonical
  // name) after the run, for inference on the trained model; "": nowhere.
  std::string save_weights;
  // "steps": the harness stages each batch and times the engine's step
  // (DLBench's time per mini-batch); "framework": each epoch runs through
  // the framework's own training idiom (Keras Model.fit, a Gluon loop, a
  // plain PyTorch loop; backend.h framework_epoch), as users' scripts and
  // the CPU-vs-GPU study train. Framework engines only; the rate must be
  // constant within an epoch.
  std::string loop = "steps";
  // A progress line on stderr, rewritten in place (train/progress.h); the
  // CLI turns it on when stderr is a terminal.
  bool progress = false;
};

// The records live with the other results (results/training.h).
using results::EpochRow;
using results::TrainRun;

// Never throws for failures of the run: they become its state.
TrainRun train_task(backend::Backend& b, const Task& task,
                    const data::Dataset& data, const TrainOptions& o);

// Accuracy and mean loss of logits against labels (host arithmetic, so
// every backend is scored the same way).
struct Score {
  double loss_sum = 0;
  int64_t correct = 0, count = 0;
};
void score(const host::Tensor& logits, const host::Tensor& labels, bool binary,
           Score& s);

}  // namespace nnbench::train
