#pragma once
// Batch normalisation (torch.nn.BatchNorm1d/2d) and local response
// normalisation across channels (torch.nn.functional.local_response_norm).
// Both read x as [N, C, S] where S is the spatial size (1 for [N, C]).
#include <algorithm>
#include <cmath>
#include <vector>

#include "engines/reference/ops/parallel.h"
#include "engines/reference/tensor.h"
#include "util/error.h"

namespace nnbench::engines::reference::ops {

template <typename T>
struct BatchNormState {
  std::vector<T> running_mean, running_var;  // buffers, not parameters
  std::vector<T> x_hat, inv_std;             // kept for backward
};

struct NormSizes {
  int64_t n, c, s;
};

template <typename T>
NormSizes norm_sizes(const Tensor<T>& x) {
  const int64_t n = x.dim(0), c = x.dim(1);
  return {n, c, x.numel() / (n * c)};
}

// Training: normalises with the batch's biased variance but feeds the
// unbiased one into the running variance, as torch does.
template <typename T>
void batch_norm_train(const Tensor<T>& x, const Tensor<T>& gamma,
                      const Tensor<T>& beta, double eps, double momentum,
                      BatchNormState<T>& st, Tensor<T>& y) {
  const auto [n, c, s] = norm_sizes(x);
  const int64_t count = n * s;
  if (count < 2)
    throw Error("batch norm in training needs more than 1 value per channel");
  y.reset(x.shape);
  st.x_hat.resize(x.numel());
  st.inv_std.resize(c);
#pragma omp parallel for if (x.numel() >= kParallelWork)
  for (int64_t ch = 0; ch < c; ++ch) {
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < s; ++k) sum += x[(i * c + ch) * s + k];
    const double mean = sum / count;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < s; ++k) {
        const double d = x[(i * c + ch) * s + k] - mean;
        sq += d * d;
      }
    const double var = sq / count, inv = 1.0 / std::sqrt(var + eps);
    st.inv_std[ch] = T(inv);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < s; ++k) {
        const int64_t at = (i * c + ch) * s + k;
        st.x_hat[at] = T((x[at] - mean) * inv);
        y[at] = gamma[ch] * st.x_hat[at] + beta[ch];
      }
    const double unbiased = sq / (count - 1);
    st.running_mean[ch] =
        T((1 - momentum) * st.running_mean[ch] + momentum * mean);
    st.running_var[ch] =
        T((1 - momentum) * st.running_var[ch] + momentum * unbiased);
  }
}

template <typename T>
void batch_norm_eval(const Tensor<T>& x, const Tensor<T>& gamma,
                     const Tensor<T>& beta, double eps,
                     const BatchNormState<T>& st, Tensor<T>& y) {
  const auto [n, c, s] = norm_sizes(x);
  y.reset(x.shape);
#pragma omp parallel for if (x.numel() >= kParallelWork)
  for (int64_t ch = 0; ch < c; ++ch) {
    const T inv = T(1.0 / std::sqrt(double(st.running_var[ch]) + eps));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < s; ++k) {
        const int64_t at = (i * c + ch) * s + k;
        y[at] = gamma[ch] * (x[at] - st.running_mean[ch]) * inv + beta[ch];
      }
  }
}

// Backward of the training forward: the batch statistics depend on x too.
template <typename T>
void batch_norm_backward(const Tensor<T>& gamma, const BatchNormState<T>& st,
                         const Tensor<T>& dy, Tensor<T>* dx, Tensor<T>& dgamma,
                         Tensor<T>& dbeta) {
  const auto [n, c, s] = norm_sizes(dy);
  const T count = T(n * s);
#pragma omp parallel for if (dy.numel() >= kParallelWork)
  for (int64_t ch = 0; ch < c; ++ch) {
    T sum_dy = 0, sum_dy_xhat = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < s; ++k) {
        const int64_t at = (i * c + ch) * s + k;
        sum_dy += dy[at];
        sum_dy_xhat += dy[at] * st.x_hat[at];
      }
    dgamma[ch] += sum_dy_xhat;
    dbeta[ch] += sum_dy;
    if (dx == nullptr) continue;
    const T scale = gamma[ch] * st.inv_std[ch] / count;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < s; ++k) {
        const int64_t at = (i * c + ch) * s + k;
        (*dx)[at] +=
            scale * (count * dy[at] - sum_dy - st.x_hat[at] * sum_dy_xhat);
      }
  }
}

// The channels whose squares enter the scale of channel ch: torch pads
// size/2 channels before and (size-1)/2 after.
struct LrnWindow {
  int64_t lo, hi;  // [lo, hi)
};
inline LrnWindow lrn_window(int64_t ch, int64_t size, int64_t channels) {
  return {std::max<int64_t>(ch - size / 2, 0),
          std::min<int64_t>(ch + (size - 1) / 2 + 1, channels)};
}

// scale = k + alpha/size * sum of squares in the window; y = x * scale^-beta.
template <typename T>
void lrn_forward(const Tensor<T>& x, int64_t size, double alpha, double beta,
                 double k, std::vector<T>& scale, Tensor<T>& y) {
  const auto [n, c, s] = norm_sizes(x);
  y.reset(x.shape);
  scale.assign(x.numel(), T(0));
#pragma omp parallel for collapse(2) if (x.numel() * size >= kParallelWork)
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const LrnWindow win = lrn_window(ch, size, c);
      T* sc = scale.data() + (i * c + ch) * s;
      for (int64_t src = win.lo; src < win.hi; ++src) {
        const T* xs = x.ptr() + (i * c + src) * s;
        for (int64_t p = 0; p < s; ++p) sc[p] += xs[p] * xs[p];
      }
      for (int64_t p = 0; p < s; ++p) {
        sc[p] = T(k + alpha / size * sc[p]);
        const int64_t at = (i * c + ch) * s + p;
        y[at] = x[at] * std::pow(sc[p], T(-beta));
      }
    }
  }
}

// dx_j = dy_j * scale_j^-beta
//        - 2 alpha beta / size * x_j * sum_{c: j in window(c)} dy_c y_c /
//        scale_c
template <typename T>
void lrn_backward(const Tensor<T>& x, const Tensor<T>& y, int64_t size,
                  double alpha, double beta, const std::vector<T>& scale,
                  const Tensor<T>& dy, Tensor<T>& dx) {
  const auto [n, c, s] = norm_sizes(x);
  std::vector<T> q(x.numel());
  for (int64_t at = 0; at < x.numel(); ++at) q[at] = dy[at] * y[at] / scale[at];
  const T coef = T(2 * alpha * beta / size);
#pragma omp parallel for collapse(2) if (x.numel() * size >= kParallelWork)
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < c; ++j) {
      // Channels c whose window holds j: c - size/2 <= j <= c + (size-1)/2.
      const int64_t lo = std::max<int64_t>(j - (size - 1) / 2, 0);
      const int64_t hi = std::min<int64_t>(j + size / 2 + 1, c);
      for (int64_t p = 0; p < s; ++p) {
        const int64_t at = (i * c + j) * s + p;
        T sum = 0;
        for (int64_t src = lo; src < hi; ++src) sum += q[(i * c + src) * s + p];
        dx[at] += dy[at] * std::pow(scale[at], T(-beta)) - coef * x[at] * sum;
      }
    }
  }
}

}  // namespace nnbench::engines::reference::ops
