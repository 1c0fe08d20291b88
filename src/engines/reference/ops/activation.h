#pragma once
// Elementwise activations, softmax over the last dim, and dropout. Backward
// functions read the forward output y where that is cheapest.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "engines/reference/ops/parallel.h"
#include "engines/reference/tensor.h"

namespace nnbench::engines::reference::ops {

enum class Activation { kRelu, kSigmoid, kTanh };

template <typename T>
T sigmoid(T v) {
  return T(1) / (T(1) + std::exp(-v));
}

// y[i] = f(x[i]) with the op chosen outside the loop, so it vectorises.
template <typename T, typename F>
void map(const Tensor<T>& x, Tensor<T>& y, F f) {
  const int64_t n = x.numel();
  const T* in = x.ptr();
  T* out = y.ptr();
#pragma omp parallel for simd if (n >= kParallelWork)
  for (int64_t i = 0; i < n; ++i) out[i] = f(in[i]);
}

template <typename T>
void activation_forward(Activation a, const Tensor<T>& x, Tensor<T>& y) {
  y.reset(x.shape);
  switch (a) {
    case Activation::kRelu:
      return map(x, y, [](T v) { return v > T(0) ? v : T(0); });
    case Activation::kSigmoid:
      return map(x, y, [](T v) { return sigmoid(v); });
    case Activation::kTanh:
      return map(x, y, [](T v) { return std::tanh(v); });
  }
}

// dx[i] += f(y[i]) * dy[i]: each derivative is written in terms of the
// output y.
template <typename T, typename F>
void map_backward(const Tensor<T>& y, const Tensor<T>& dy, Tensor<T>& dx, F f) {
  const int64_t n = y.numel();
  const T *out = y.ptr(), *d_out = dy.ptr();
  T* d_in = dx.ptr();
#pragma omp parallel for simd if (n >= kParallelWork)
  for (int64_t i = 0; i < n; ++i) d_in[i] += f(out[i]) * d_out[i];
}

template <typename T>
void activation_backward(Activation a, const Tensor<T>& y, const Tensor<T>& dy,
                         Tensor<T>& dx) {
  switch (a) {
    case Activation::kRelu:
      return map_backward(y, dy, dx,
                          [](T v) { return v > T(0) ? T(1) : T(0); });
    case Activation::kSigmoid:
      return map_backward(y, dy, dx, [](T v) { return v * (T(1) - v); });
    case Activation::kTanh:
      return map_backward(y, dy, dx, [](T v) { return T(1) - v * v; });
  }
}

template <typename T>
void softmax_forward(const Tensor<T>& x, Tensor<T>& y) {
  y.reset(x.shape);
  const int64_t k = x.shape.back(), rows = x.numel() / k;
  for (int64_t r = 0; r < rows; ++r) {
    const T* in = x.ptr() + r * k;
    T* out = y.ptr() + r * k;
    T top = in[0];
    for (int64_t j = 1; j < k; ++j) top = std::max(top, in[j]);
    T sum = 0;
    for (int64_t j = 0; j < k; ++j) {
      out[j] = std::exp(in[j] - top);
      sum += out[j];
    }
    for (int64_t j = 0; j < k; ++j) out[j] /= sum;
  }
}

// dx = y * (dy - <dy, y>) row by row.
template <typename T>
void softmax_backward(const Tensor<T>& y, const Tensor<T>& dy, Tensor<T>& dx) {
  const int64_t k = y.shape.back(), rows = y.numel() / k;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t o = r * k;
    T dot = 0;
    for (int64_t j = 0; j < k; ++j) dot += dy[o + j] * y[o + j];
    for (int64_t j = 0; j < k; ++j) dx[o + j] += y[o + j] * (dy[o + j] - dot);
  }
}

// Inverted dropout: kept values are scaled by 1/(1-p) so evaluation is the
// identity. An empty mask means the forward was the identity.
template <typename T>
void dropout_forward(const Tensor<T>& x, double p, bool train,
                     std::mt19937_64& rng, std::vector<T>& mask, Tensor<T>& y) {
  y = x;
  mask.clear();
  if (!train || p == 0) return;
  std::bernoulli_distribution keep(1 - p);
  const T scale = T(1 / (1 - p));
  mask.resize(x.numel());
  for (int64_t i = 0; i < x.numel(); ++i) {
    mask[i] = keep(rng) ? scale : T(0);
    y[i] *= mask[i];
  }
}

template <typename T>
void dropout_backward(const std::vector<T>& mask, const Tensor<T>& dy,
                      Tensor<T>& dx) {
  for (int64_t i = 0; i < dy.numel(); ++i)
    dx[i] += mask.empty() ? dy[i] : dy[i] * mask[i];
}

}  // namespace nnbench::engines::reference::ops
