#include "train/schedule.h"

#include <algorithm>
#include <cmath>

#include "util/error.h"

namespace nnbench::train {

double learning_rate(const Schedule& s, double epoch, double total_epochs) {
  const double t =
      total_epochs > 0 ? std::clamp(epoch / total_epochs, 0.0, 1.0) : 0.0;
  const double low = s.lr * s.final_fraction;
  if (s.kind == "constant") return s.lr;
  if (s.kind == "step")
    return s.lr * std::pow(s.gamma, std::floor(epoch / s.step_epochs));
  if (s.kind == "cosine")
    return low + (s.lr - low) * 0.5 * (1 + std::cos(M_PI * t));
  if (s.kind == "one-cycle") {
    if (t < s.warmup_fraction)
      return low + (s.lr - low) * t / s.warmup_fraction;
    return s.lr -
           (s.lr - low) * (t - s.warmup_fraction) / (1 - s.warmup_fraction);
  }
  throw Error("unknown learning-rate schedule '" + s.kind +
              "'; known: constant step cosine one-cycle");
}

}  // namespace nnbench::train
