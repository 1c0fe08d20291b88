#pragma once
// Ops that move values around rather than compute much: flatten, add,
// concat, the ResNet zero-pad shortcut, means over time, token lookups.
#include <algorithm>
#include <string>
#include <vector>

#include "engines/reference/tensor.h"
#include "util/error.h"

namespace nnbench::engines::reference::ops {

template <typename T>
void flatten_forward(const Tensor<T>& x, Tensor<T>& y) {
  y.shape = {x.dim(0), x.numel() / x.dim(0)};
  y.data = x.data;
}

// Also the backward of flatten, dropout in eval mode and add: dx += dy.
template <typename T>
void accumulate(const Tensor<T>& dy, Tensor<T>& dx) {
  for (int64_t i = 0; i < dy.numel(); ++i) dx[i] += dy[i];
}

template <typename T>
void add_forward(const Tensor<T>& a, const Tensor<T>& b, Tensor<T>& y) {
  y.reset(a.shape);
  for (int64_t i = 0; i < a.numel(); ++i) y[i] = a[i] + b[i];
}

// Along dim 1, the first per-sample dim: each sample's output is its
// inputs' blocks one after another.
template <typename T>
void concat_forward(const std::vector<const Tensor<T>*>& xs, Tensor<T>& y) {
  Shape s = xs[0]->shape;
  s[1] = 0;
  for (const auto* x : xs) s[1] += x->dim(1);
  y.reset(s);
  const int64_t n = s[0];
  T* out = y.ptr();
  for (int64_t i = 0; i < n; ++i) {
    for (const auto* x : xs) {
      const int64_t block = x->numel() / n;
      std::copy_n(x->ptr() + i * block, block, out);
      out += block;
    }
  }
}

template <typename T>
void concat_backward(const Tensor<T>& dy, const std::vector<Tensor<T>*>& dxs) {
  const int64_t n = dy.dim(0);
  const T* in = dy.ptr();
  for (int64_t i = 0; i < n; ++i) {
    for (auto* dx : dxs) {
      const int64_t block = dx->numel() / n;
      for (int64_t k = 0; k < block; ++k) (*dx)[i * block + k] += in[k];
      in += block;
    }
  }
}

// ResNet option A: y = x[:, :, ::sh, ::sw] with zero channels around it,
// (out - C)/2 before and the rest after. Visits every y value that comes
// from x; f(x index, y index) is a copy forward and an add backward.
template <typename F>
void for_each_shortcut_pair(const Shape& x, const Shape& y, int64_t sh,
                            int64_t sw, F f) {
  const int64_t c = x[1], h = x[2], w = x[3];
  const int64_t oc = y[1], oh = y[2], ow = y[3], lo = (oc - c) / 2;
  for (int64_t n = 0; n < x[0]; ++n)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox)
          f(((n * c + ch) * h + oy * sh) * w + ox * sw,
            ((n * oc + ch + lo) * oh + oy) * ow + ox);
}

template <typename T>
void zero_pad_shortcut_forward(const Tensor<T>& x, int64_t out_c, int64_t sh,
                               int64_t sw, Tensor<T>& y) {
  y.reset(
      {x.dim(0), out_c, (x.dim(2) + sh - 1) / sh, (x.dim(3) + sw - 1) / sw});
  for_each_shortcut_pair(x.shape, y.shape, sh, sw,
                         [&](int64_t i, int64_t o) { y[o] = x[i]; });
}

template <typename T>
void zero_pad_shortcut_backward(const Tensor<T>& dy, int64_t sh, int64_t sw,
                                Tensor<T>& dx) {
  for_each_shortcut_pair(dx.shape, dy.shape, sh, sw,
                         [&](int64_t i, int64_t o) { dx[i] += dy[o]; });
}

// [N, T, F] -> [N, F]: mean over time.
template <typename T>
void seq_mean_forward(const Tensor<T>& x, Tensor<T>& y) {
  const int64_t n = x.dim(0), t = x.dim(1), f = x.dim(2);
  y.reset({n, f});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t s = 0; s < t; ++s)
      for (int64_t k = 0; k < f; ++k) y[i * f + k] += x[(i * t + s) * f + k];
  for (auto& v : y.data) v /= T(t);
}

template <typename T>
void seq_mean_backward(const Tensor<T>& dy, Tensor<T>& dx) {
  const int64_t n = dx.dim(0), t = dx.dim(1), f = dx.dim(2);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t s = 0; s < t; ++s)
      for (int64_t k = 0; k < f; ++k)
        dx[(i * t + s) * f + k] += dy[i * f + k] / T(t);
}

inline void check_ids(const Tensor<int64_t>& ids, int64_t vocab) {
  for (int64_t id : ids.data)
    if (id < 0 || id >= vocab)
      throw Error("token id " + std::to_string(id) + " outside [0, " +
                  std::to_string(vocab) + ")");
}

// ids [N, T] -> [N, T, D], rows of w [vocab, D].
template <typename T>
void embedding_forward(const Tensor<int64_t>& ids, const Tensor<T>& w,
                       Tensor<T>& y) {
  const int64_t d = w.dim(1);
  check_ids(ids, w.dim(0));
  y.reset({ids.dim(0), ids.dim(1), d});
  for (int64_t i = 0; i < ids.numel(); ++i)
    std::copy_n(w.ptr() + ids[i] * d, d, y.ptr() + i * d);
}

template <typename T>
void embedding_backward(const Tensor<int64_t>& ids, const Tensor<T>& dy,
                        Tensor<T>& dw) {
  const int64_t d = dw.dim(1);
  for (int64_t i = 0; i < ids.numel(); ++i)
    for (int64_t k = 0; k < d; ++k) dw[ids[i] * d + k] += dy[i * d + k];
}

// ids [N, T] -> [N, T, vocab] of zeros and ones; nothing to differentiate.
template <typename T>
void one_hot_forward(const Tensor<int64_t>& ids, int64_t vocab, Tensor<T>& y) {
  check_ids(ids, vocab);
  y.reset({ids.dim(0), ids.dim(1), vocab});
  for (int64_t i = 0; i < ids.numel(); ++i) y[i * vocab + ids[i]] = T(1);
}

}  // namespace nnbench::engines::reference::ops
