#pragma once
// Optimizer updates on host memory with PyTorch's semantics (torch.optim
// SGD, Adam, RMSprop, Adadelta; no dampening, not centered, no amsgrad).
// Backends whose parameters live in host buffers (reference, oneDNN) apply
// these rules; LibTorch runs torch::optim itself, and the conformance tests
// check both sides against each other.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace nnbench::backend {

// "SGD lr 0.01 momentum 0.9 nesterov weight_decay 0.0005", from the
// settings that the optimizer named in `o` uses, and only those.
std::string describe_optimizer(const Options& o);
// The optimizer and its settings as JSON: {"name", "learning_rate",
// "momentum", ...} (records, and the framework workers' options).
nlohmann::json optimizer_json(const Options& o);
// The optimizers HostOptimizer applies (and LibTorch's backend too):
// sgd adam rmsprop adadelta.
const std::vector<std::string>& known_optimizers();

class HostOptimizer {
 public:
  // Throws Unimplemented for an unknown optimizer and nnbench::Error for
  // settings PyTorch refuses (nesterov without momentum).
  explicit HostOptimizer(const Options& o);

  // Zero-initialised state arrays the rule needs per parameter element:
  // SGD 1 (momentum), Adam 2 (exp_avg, exp_avg_sq), RMSprop 1 or 2
  // (square_avg, momentum buffer), Adadelta 2 (square_avg, acc_delta).
  int state_arrays() const;
  void set_learning_rate(double lr) { o_.learning_rate = lr; }
  const Options& options() const { return o_; }
  // Call once per training step, before its update() calls.
  void begin_step() { ++step_; }
  int64_t steps() const { return step_; }
  // Updates n elements of parameter p in place from gradient g; s1 and s2
  // are the element's state arrays (s2 may be null when unused). Elements
  // are independent, so callers may split the range across threads.
  void update(float* p, const float* g, float* s1, float* s2, int64_t n) const;

 private:
  void sgd(float* p, const float* g, float* buf, int64_t n) const;
  void adam(float* p, const float* g, float* m, float* v, int64_t n) const;
  void rmsprop(float* p, const float* g, float* sq, float* buf,
               int64_t n) const;
  void adadelta(float* p, const float* g, float* sq, float* acc,
                int64_t n) const;

  Options o_;
  int64_t step_ = 0;
};

}  // namespace nnbench::backend
