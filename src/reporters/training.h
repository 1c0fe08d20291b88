#pragma once
// What `nnbench train` reports, as reporters (results/reporter.h): each
// run's epochs on stdout as it ends and, at the end, time to accuracy over
// the seeds (MLPerf's aggregation) with its costs; and the training results
// file: the task, the data set, the timing rules, every run and the
// aggregate. A suite's training records go through the suite's reporters
// (the console's training table, the results file, the store).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cost/catalog.h"
#include "data/dataset.h"
#include "results/reporter.h"
#include "train/aggregate.h"
#include "train/task.h"
#include "train/trainer.h"

namespace nnbench::reporters {

// What the runs were asked: the task, the data set they read (loaded in
// `load_seconds`), the options (`include_eval_time` says how time was
// counted) and the price asked for, if any.
struct TrainingSetup {
  const train::Task* task = nullptr;
  const data::Dataset* dataset = nullptr;
  double load_seconds = 0;
  train::TrainOptions options;
  std::optional<cost::Price> price;
};

class TrainingConsole : public results::Reporter {
 public:
  explicit TrainingConsole(TrainingSetup s) : setup_(std::move(s)) {}
  // The run's per-epoch table and outcome, on stdout.
  void record(const results::Entry& e) override;
  // Time to accuracy over the runs, latency and costs, on stdout.
  void end(const results::Ending& e) override;

 private:
  TrainingSetup setup_;
  std::vector<train::TrainRun> runs_;
};

class TrainingFile : public results::Reporter {
 public:
  TrainingFile(std::string path, TrainingSetup s)
      : path_(std::move(path)), setup_(std::move(s)) {}
  void begin(const results::ReportContext& c) override {
    environment_ = c.environment;
  }
  void record(const results::Entry& e) override;
  // Written atomically (an interrupt ends `nnbench train` before it).
  void end(const results::Ending& e) override;

 private:
  std::string path_;
  TrainingSetup setup_;
  nlohmann::json environment_;
  std::vector<train::TrainRun> runs_;
};

}  // namespace nnbench::reporters
