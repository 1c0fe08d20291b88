#pragma once
// SGD with momentum exactly as torch.optim.SGD (no dampening, no Nesterov,
// no weight decay): buf = momentum * buf + grad, starting from buf = grad
// on the first step; p -= lr * buf.
#include <vector>

#include "backends/reference/ops/parallel.h"
#include "backends/reference/tensor.h"

namespace nnbench::backends::reference {

template <typename T>
class Sgd {
 public:
  Sgd(double learning_rate, double momentum)
      : lr_(learning_rate), momentum_(momentum) {}

  void set_learning_rate(double lr) { lr_ = lr; }

  void step(std::vector<Tensor<T>>& params,
            const std::vector<Tensor<T>>& grads) {
    const bool first = buffers_.empty();
    if (first) buffers_ = grads;
    const T lr = T(lr_), mu = T(momentum_);
    for (size_t i = 0; i < params.size(); ++i) {
      T* p = params[i].ptr();
      T* buf = buffers_[i].ptr();
      const T* g = grads[i].ptr();
      const int64_t n = params[i].numel();
#pragma omp parallel for simd if (n >= ops::kParallelWork)
      for (int64_t k = 0; k < n; ++k) {
        if (!first) buf[k] = mu * buf[k] + g[k];
        p[k] -= lr * buf[k];
      }
    }
  }

 private:
  double lr_, momentum_;
  std::vector<Tensor<T>> buffers_;
};

}  // namespace nnbench::backends::reference
