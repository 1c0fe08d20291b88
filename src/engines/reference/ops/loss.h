#pragma once
// The two losses of the description, each returning its value and the
// gradient with respect to the logits. Sums run in double so the loss does
// not depend on the summation order.
#include <algorithm>
#include <cmath>
#include <string>

#include "engines/reference/tensor.h"
#include "util/error.h"

namespace nnbench::engines::reference::ops {

// Log-softmax over the last dim, averaged over every label position:
// logits [N, ..., K], labels [N, ...] with ids in [0, K).
template <typename T>
double softmax_cross_entropy(const Tensor<T>& logits,
                             const Tensor<int64_t>& labels, Tensor<T>& grad) {
  const int64_t k = logits.shape.back(), rows = logits.numel() / k;
  if (labels.numel() != rows)
    throw Error("labels hold " + std::to_string(labels.numel()) +
                " values for " + std::to_string(rows) + " predictions");
  grad.reset(logits.shape);
  double total = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const T* z = logits.ptr() + r * k;
    const int64_t label = labels[r];
    if (label < 0 || label >= k)
      throw Error("label " + std::to_string(label) + " outside [0, " +
                  std::to_string(k) + ")");
    const double top = *std::max_element(z, z + k);
    double sum = 0;
    for (int64_t j = 0; j < k; ++j) sum += std::exp(double(z[j]) - top);
    const double log_sum = top + std::log(sum);
    total += log_sum - z[label];
    for (int64_t j = 0; j < k; ++j)
      grad[r * k + j] = T((std::exp(z[j] - log_sum) - (j == label)) / rows);
  }
  return total / rows;
}

// Sigmoid and binary cross-entropy averaged over all elements, in the
// overflow-free form max(z, 0) - z*y + log(1 + exp(-|z|)).
template <typename T>
double sigmoid_binary_cross_entropy(const Tensor<T>& logits,
                                    const Tensor<int64_t>& labels,
                                    Tensor<T>& grad) {
  const int64_t n = logits.numel();
  if (labels.numel() != n)
    throw Error("labels hold " + std::to_string(labels.numel()) +
                " values for " + std::to_string(n) + " outputs");
  grad.reset(logits.shape);
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double z = logits[i], y = double(labels[i]);
    total += std::max(z, 0.0) - z * y + std::log1p(std::exp(-std::abs(z)));
    grad[i] = T((1 / (1 + std::exp(-z)) - y) / n);
  }
  return total / n;
}

}  // namespace nnbench::engines::reference::ops
