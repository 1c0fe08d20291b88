#pragma once
// Pooling over [N, C, H, W] planes, with LibTorch's window rules: padding,
// ceil mode (the output size comes from shape inference), max pooling that
// ignores padding, average pooling that counts it.
#include <algorithm>
#include <limits>
#include <vector>

#include "engines/reference/ops/parallel.h"
#include "engines/reference/tensor.h"
#include "model/layer.h"

namespace nnbench::engines::reference::ops {

struct PoolGeometry {
  int64_t planes, h, w, oh, ow, kh, kw, sh, sw, ph, pw;
};

// x: [N, C, H, W]; out the per-sample output [C, OH, OW].
inline PoolGeometry pool_geometry(const model::Layer& l, const Shape& x,
                                  const Shape& out) {
  return {x[0] * x[1], x[2],        x[3],        out[1],   out[2],  l.kernel[0],
          l.kernel[1], l.stride[0], l.stride[1], l.pad[0], l.pad[1]};
}

// The input rows [y0, y1) and columns [x0, x1) a window covers, clipped to
// the image, and torch's count_include_pad divisor: the window clipped to
// the padded image (ceil mode's last window can stick out of it).
struct Window {
  int64_t y0, y1, x0, x1, divisor;
};

inline Window window(const PoolGeometry& g, int64_t oy, int64_t ox) {
  const int64_t ys = oy * g.sh - g.ph, xs = ox * g.sw - g.pw;
  const int64_t ye = std::min(ys + g.kh, g.h + g.ph);
  const int64_t xe = std::min(xs + g.kw, g.w + g.pw);
  return {std::max<int64_t>(ys, 0), std::min(ye, g.h), std::max<int64_t>(xs, 0),
          std::min(xe, g.w), (ye - ys) * (xe - xs)};
}

// argmax: for every output, the index of its maximum within the input plane
// (the first one on ties, as torch).
template <typename T>
void max_pool_forward(const PoolGeometry& g, const Tensor<T>& x, Tensor<T>& y,
                      std::vector<int64_t>& argmax, const Shape& y_shape) {
  y.reset(y_shape);
  argmax.assign(y.numel(), 0);
#pragma omp parallel for if (x.numel() >= kParallelWork)
  for (int64_t p = 0; p < g.planes; ++p) {
    const T* in = x.ptr() + p * g.h * g.w;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        const Window win = window(g, oy, ox);
        T best = -std::numeric_limits<T>::infinity();
        int64_t at = win.y0 * g.w + win.x0;
        for (int64_t yy = win.y0; yy < win.y1; ++yy) {
          for (int64_t xx = win.x0; xx < win.x1; ++xx) {
            if (in[yy * g.w + xx] > best) {
              at = yy * g.w + xx;
              best = in[at];
            }
          }
        }
        const int64_t o = (p * g.oh + oy) * g.ow + ox;
        y[o] = best;
        argmax[o] = at;
      }
    }
  }
}

template <typename T>
void max_pool_backward(const PoolGeometry& g,
                       const std::vector<int64_t>& argmax, const Tensor<T>& dy,
                       Tensor<T>& dx) {
  const int64_t per_plane = g.oh * g.ow;
#pragma omp parallel for if (dy.numel() >= kParallelWork)
  for (int64_t p = 0; p < g.planes; ++p)
    for (int64_t o = p * per_plane; o < (p + 1) * per_plane; ++o)
      dx[p * g.h * g.w + argmax[o]] += dy[o];
}

template <typename T>
void avg_pool_forward(const PoolGeometry& g, const Tensor<T>& x, Tensor<T>& y,
                      const Shape& y_shape) {
  y.reset(y_shape);
#pragma omp parallel for if (x.numel() >= kParallelWork)
  for (int64_t p = 0; p < g.planes; ++p) {
    const T* in = x.ptr() + p * g.h * g.w;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        const Window win = window(g, oy, ox);
        T sum = 0;
        for (int64_t yy = win.y0; yy < win.y1; ++yy)
          for (int64_t xx = win.x0; xx < win.x1; ++xx) sum += in[yy * g.w + xx];
        y[(p * g.oh + oy) * g.ow + ox] = sum / T(win.divisor);
      }
    }
  }
}

template <typename T>
void avg_pool_backward(const PoolGeometry& g, const Tensor<T>& dy,
                       Tensor<T>& dx) {
#pragma omp parallel for if (dx.numel() >= kParallelWork)
  for (int64_t p = 0; p < g.planes; ++p) {
    T* d_in = dx.ptr() + p * g.h * g.w;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        const Window win = window(g, oy, ox);
        const T share = dy[(p * g.oh + oy) * g.ow + ox] / T(win.divisor);
        for (int64_t yy = win.y0; yy < win.y1; ++yy)
          for (int64_t xx = win.x0; xx < win.x1; ++xx)
            d_in[yy * g.w + xx] += share;
      }
    }
  }
}

// [N, C, H, W] -> [N, C].
template <typename T>
void global_avg_pool_forward(const Tensor<T>& x, Tensor<T>& y) {
  const int64_t planes = x.dim(0) * x.dim(1), area = x.dim(2) * x.dim(3);
  y.reset({x.dim(0), x.dim(1)});
  for (int64_t p = 0; p < planes; ++p) {
    T sum = 0;
    for (int64_t i = 0; i < area; ++i) sum += x[p * area + i];
    y[p] = sum / T(area);
  }
}

template <typename T>
void global_avg_pool_backward(const Tensor<T>& dy, Tensor<T>& dx) {
  const int64_t planes = dx.dim(0) * dx.dim(1), area = dx.numel() / planes;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < area; ++i) dx[p * area + i] += dy[p] / T(area);
}

}  // namespace nnbench::engines::reference::ops
