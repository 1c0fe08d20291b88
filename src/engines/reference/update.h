#pragma once
// The optimizer step of the reference backend: backend::HostOptimizer's
// rule (PyTorch semantics) over each parameter, with zero-initialised state
// tensors created on the first step.
#include <algorithm>
#include <vector>

#include "backend/optimizer.h"
#include "engines/reference/ops/parallel.h"
#include "engines/reference/tensor.h"

namespace nnbench::engines::reference {

class Update {
 public:
  explicit Update(const backend::Options& o) : rule_(o) {}

  void set_learning_rate(double lr) { rule_.set_learning_rate(lr); }
  const backend::HostOptimizer& rule() const { return rule_; }

  void step(std::vector<Tensor<float>>& params,
            const std::vector<Tensor<float>>& grads) {
    if (state_.empty())
      for (const auto& p : params)
        for (int k = 0; k < rule_.state_arrays(); ++k) {
          Tensor<float> zero = p;
          std::fill(zero.data.begin(), zero.data.end(), 0.f);
          state_.push_back(std::move(zero));
        }
    rule_.begin_step();
    const int arrays = rule_.state_arrays();
    for (size_t i = 0; i < params.size(); ++i) {
      float* s1 = state_[i * arrays].ptr();
      float* s2 = arrays > 1 ? state_[i * arrays + 1].ptr() : nullptr;
      const int64_t n = params[i].numel();
      const int64_t chunk = 1 << 16;
#pragma omp parallel for if (n >= ops::kParallelWork)
      for (int64_t b = 0; b < n; b += chunk)
        rule_.update(params[i].ptr() + b, grads[i].ptr() + b, s1 + b,
                     s2 ? s2 + b : nullptr, std::min(chunk, n - b));
    }
  }

 private:
  backend::HostOptimizer rule_;
  std::vector<Tensor<float>> state_;
};

}  // namespace nnbench::engines::reference
