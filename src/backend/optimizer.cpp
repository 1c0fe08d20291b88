#include "backend/optimizer.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "util/error.h"

namespace nnbench::backend {

const std::vector<std::string>& known_optimizers() {
  static const std::vector<std::string> names = {"sgd", "adam", "rmsprop",
                                                 "adadelta"};
  return names;
}

nlohmann::json optimizer_json(const Options& o) {
  return {{"name", o.optimizer},
          {"learning_rate", o.learning_rate},
          {"momentum", o.momentum},
          {"nesterov", o.nesterov},
          {"weight_decay", o.weight_decay},
          {"beta1", o.beta1},
          {"beta2", o.beta2},
          {"alpha", o.alpha},
          {"rho", o.rho},
          {"eps", o.eps}};
}

std::string describe_optimizer(const Options& o) {
  const std::string wd = o.weight_decay != 0
                             ? fmt::format(" weight_decay {}", o.weight_decay)
                             : "";
  if (o.optimizer == "sgd")
    return fmt::format("SGD lr {} momentum {}{}{}", o.learning_rate, o.momentum,
                       o.nesterov ? " nesterov" : "", wd);
  if (o.optimizer == "adam")
    return fmt::format("Adam lr {} betas ({}, {}) eps {}{}", o.learning_rate,
                       o.beta1, o.beta2, o.eps, wd);
  if (o.optimizer == "rmsprop")
    return fmt::format("RMSprop lr {} alpha {} eps {} momentum {}{}",
                       o.learning_rate, o.alpha, o.eps, o.momentum, wd);
  return fmt::format("Adadelta lr {} rho {} eps {}{}", o.learning_rate, o.rho,
                     o.eps, wd);
}

HostOptimizer::HostOptimizer(const Options& o) : o_(o) {
  const auto& known = known_optimizers();
  if (std::find(known.begin(), known.end(), o.optimizer) == known.end())
    throw Unimplemented(fmt::format("optimizer '{}' (known: {})", o.optimizer,
                                    fmt::join(known, " ")));
  if (o.optimizer == "sgd" && o.nesterov && o.momentum <= 0)
    throw Error("SGD with nesterov needs a momentum > 0 (as torch.optim.SGD)");
}

int HostOptimizer::state_arrays() const {
  if (o_.optimizer == "sgd") return 1;
  if (o_.optimizer == "rmsprop") return o_.momentum > 0 ? 2 : 1;
  return 2;
}

void HostOptimizer::update(float* p, const float* g, float* s1, float* s2,
                           int64_t n) const {
  if (o_.optimizer == "sgd") return sgd(p, g, s1, n);
  if (o_.optimizer == "adam") return adam(p, g, s1, s2, n);
  if (o_.optimizer == "rmsprop") return rmsprop(p, g, s1, s2, n);
  adadelta(p, g, s1, s2, n);
}

// torch.optim.SGD: d = g + wd p; buf = mu buf + d (buf = d on the first
// step, which a zero buffer gives too); d = nesterov ? d + mu buf : buf.
void HostOptimizer::sgd(float* p, const float* g, float* buf, int64_t n) const {
  const float lr = float(o_.learning_rate), mu = float(o_.momentum),
              wd = float(o_.weight_decay);
  const bool nesterov = o_.nesterov;
  for (int64_t i = 0; i < n; ++i) {
    float d = g[i] + wd * p[i];
    if (mu != 0) {
      buf[i] = mu * buf[i] + d;
      d = nesterov ? d + mu * buf[i] : buf[i];
    }
    p[i] -= lr * d;
  }
}

// torch.optim.Adam (L2 weight decay added to the gradient, bias-corrected
// moments, eps added after the square root).
void HostOptimizer::adam(float* p, const float* g, float* m, float* v,
                         int64_t n) const {
  const double t = double(step_);
  const float b1 = float(o_.beta1), b2 = float(o_.beta2),
              wd = float(o_.weight_decay), eps = float(o_.eps);
  const float step_size = float(o_.learning_rate / (1 - std::pow(o_.beta1, t)));
  const float bc2_sqrt = float(std::sqrt(1 - std::pow(o_.beta2, t)));
  for (int64_t i = 0; i < n; ++i) {
    const float d = g[i] + wd * p[i];
    m[i] = b1 * m[i] + (1 - b1) * d;
    v[i] = b2 * v[i] + (1 - b2) * d * d;
    p[i] -= step_size * m[i] / (std::sqrt(v[i]) / bc2_sqrt + eps);
  }
}

// torch.optim.RMSprop, not centered: avg = sqrt(square_avg) + eps.
void HostOptimizer::rmsprop(float* p, const float* g, float* sq, float* buf,
                            int64_t n) const {
  const float lr = float(o_.learning_rate), a = float(o_.alpha),
              mu = float(o_.momentum), wd = float(o_.weight_decay),
              eps = float(o_.eps);
  for (int64_t i = 0; i < n; ++i) {
    const float d = g[i] + wd * p[i];
    sq[i] = a * sq[i] + (1 - a) * d * d;
    const float step = d / (std::sqrt(sq[i]) + eps);
    if (mu > 0) {
      buf[i] = mu * buf[i] + step;
      p[i] -= lr * buf[i];
    } else {
      p[i] -= lr * step;
    }
  }
}

// torch.optim.Adadelta: the step is sqrt(acc_delta + eps) /
// sqrt(square_avg + eps) * d, scaled by the learning rate.
void HostOptimizer::adadelta(float* p, const float* g, float* sq, float* acc,
                             int64_t n) const {
  const float lr = float(o_.learning_rate), rho = float(o_.rho),
              wd = float(o_.weight_decay), eps = float(o_.eps);
  for (int64_t i = 0; i < n; ++i) {
    const float d = g[i] + wd * p[i];
    sq[i] = rho * sq[i] + (1 - rho) * d * d;
    const float delta = std::sqrt(acc[i] + eps) / std::sqrt(sq[i] + eps) * d;
    acc[i] = rho * acc[i] + (1 - rho) * delta * delta;
    p[i] -= lr * delta;
  }
}

}  // namespace nnbench::backend
