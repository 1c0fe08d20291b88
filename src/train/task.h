#pragma once
// End-to-end training tasks: a dataset, a model, a recipe (optimizer,
// schedule, batch, augmentation) and either a target validation accuracy
// (time-to-accuracy, DAWNBench) or a fixed number of epochs (the
// CPU-vs-GPU study's whole training runs).
#include <string>
#include <vector>

#include "backend/backend.h"
#include "train/schedule.h"

namespace nnbench::train {

struct Task {
  std::string name, description, source;
  std::string dataset;  // data::load_dataset name
  int64_t seq_len = 0;  // for sequence datasets (0: the dataset's default)
  std::string model;    // zoo model name
  int64_t batch = 128;
  int64_t eval_batch = 1000;   // must divide the validation set
  backend::Options optimizer;  // optimizer fields only; lr from schedule
  Schedule schedule;
  double target = 0;  // validation accuracy in (0, 1]; 0: fixed epochs
  int epochs = 1;     // the budget when target > 0, else the run length
  bool augment = false;
};

const std::vector<Task>& tasks();

// Why `--data synthetic` cannot time `task` to an accuracy target.
std::string time_to_accuracy_needs_real_data(const std::string& task);
const Task& task(const std::string& name);  // throws nnbench::Error

}  // namespace nnbench::train
