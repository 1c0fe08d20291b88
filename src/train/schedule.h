#pragma once
// Learning-rate schedules, as functions of training progress in epochs
// (fractional: schedules update every step, not only between epochs).
#include <string>

namespace nnbench::train {

struct Schedule {
  // "constant"; "step": lr * gamma^floor(epoch / step_epochs); "cosine":
  // from lr to lr * final_fraction over total_epochs; "one-cycle": linear
  // warm-up from lr * final_fraction to lr over warmup_fraction of the run,
  // then linear decay back to lr * final_fraction (the super-convergence
  // recipe of DAWNBench's fast CIFAR-10 entries).
  std::string kind = "constant";
  double lr = 0.01;
  double gamma = 0.1;
  double step_epochs = 30;
  double warmup_fraction = 0.25;
  double final_fraction = 0.01;
};

// Throws nnbench::Error on an unknown kind.
double learning_rate(const Schedule& s, double epoch, double total_epochs);

}  // namespace nnbench::train
