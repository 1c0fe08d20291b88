#pragma once
// 2-D convolution (cross-correlation, as every framework) with stride,
// zero padding and groups, by im2col: the input patches of a group become
// the columns of a matrix and the convolution a matrix product. Weights
// [out, in/groups, kh, kw]. One parallel region per pass, each thread
// owning a slice of channels across the whole batch: no barriers inside,
// which matters when the cores are shared with other processes.
#include <algorithm>
#include <vector>

#include "engines/reference/ops/matmul.h"
#include "engines/reference/ops/parallel.h"
#include "engines/reference/tensor.h"
#include "model/layer.h"

namespace nnbench::engines::reference::ops {

struct ConvGeometry {
  int64_t in_c, h, w, out_c, kh, kw, sh, sw, ph, pw, groups, oh, ow;

  int64_t group_in() const { return in_c / groups; }
  int64_t group_out() const { return out_c / groups; }
  int64_t taps() const { return kh * kw; }
  int64_t col_rows() const { return group_in() * taps(); }
  int64_t pixels() const { return oh * ow; }
  // 1x1, stride 1, no padding: the input already is its column matrix.
  bool identity_cols() const {
    return kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0;
  }
  double work(int64_t batch) const {
    return double(batch) * out_c * col_rows() * pixels();
  }
};

// x: [N, C, H, W]; out the layer's per-sample output [O, OH, OW].
inline ConvGeometry conv_geometry(const model::Layer& l, const Shape& x,
                                  const Shape& out) {
  return {x[1],        x[2],        x[3],        l.out,    l.kernel[0],
          l.kernel[1], l.stride[0], l.stride[1], l.pad[0], l.pad[1],
          l.groups,    out[1],      out[2]};
}

// cols[(c*kh + i)*kw + j][oy*ow + ox] = x[c][oy*sh - ph + i][ox*sw - pw + j]
// for `channels` channels from x, zero outside the image.
template <typename T>
void im2col(const ConvGeometry& g, const T* x, int64_t channels, T* cols) {
  for (int64_t r = 0; r < channels * g.taps(); ++r) {
    const int64_t c = r / g.taps(), i = r % g.taps() / g.kw, j = r % g.kw;
    T* row = cols + r * g.pixels();
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      const int64_t y = oy * g.sh - g.ph + i;
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        const int64_t xx = ox * g.sw - g.pw + j;
        const bool inside = y >= 0 && y < g.h && xx >= 0 && xx < g.w;
        row[oy * g.ow + ox] = inside ? x[(c * g.h + y) * g.w + xx] : T(0);
      }
    }
  }
}

// The adjoint of im2col for one channel: adds each entry to its pixel.
template <typename T>
void col2im(const ConvGeometry& g, const T* cols, T* dx) {
  for (int64_t t = 0; t < g.taps(); ++t) {
    const int64_t i = t / g.kw, j = t % g.kw;
    const T* row = cols + t * g.pixels();
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      const int64_t y = oy * g.sh - g.ph + i;
      if (y < 0 || y >= g.h) continue;
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        const int64_t xx = ox * g.sw - g.pw + j;
        if (xx >= 0 && xx < g.w) dx[y * g.w + xx] += row[oy * g.ow + ox];
      }
    }
  }
}

// Column matrix of `channels` channels starting at x: either `buf` filled
// by im2col or, for 1x1 convolutions, the input itself.
template <typename T>
const T* columns(const ConvGeometry& g, const T* x, int64_t channels,
                 std::vector<T>& buf) {
  if (g.identity_cols()) return x;
  buf.resize(channels * g.taps() * g.pixels());
  im2col(g, x, channels, buf.data());
  return buf.data();
}

// y: [N, O, OH, OW], reset here. Each thread owns a slice of the output
// channels; it builds the column matrices it needs itself.
template <typename T>
void conv_forward(const ConvGeometry& g, const Tensor<T>& x, const Tensor<T>& w,
                  const Tensor<T>* b, Tensor<T>& y) {
  const int64_t batch = x.dim(0), go = g.group_out(), px = g.pixels();
  y.reset({batch, g.out_c, g.oh, g.ow});
#pragma omp parallel if (g.work(batch) >= kParallelWork)
  {
    const Slice mine = my_slice(g.out_c);
    std::vector<T> buf;
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t grp = 0; grp < g.groups; ++grp) {
        const int64_t o0 = std::max(mine.begin, grp * go);
        const int64_t o1 = std::min(mine.end, (grp + 1) * go);
        if (o0 >= o1) continue;
        const T* xg = x.ptr() + (n * g.in_c + grp * g.group_in()) * g.h * g.w;
        const T* cols = columns(g, xg, g.group_in(), buf);
        T* yo = y.ptr() + (n * g.out_c + o0) * px;
        matmul_serial(o1 - o0, px, g.col_rows(), w.ptr() + o0 * g.col_rows(),
                      false, cols, yo);
        if (b == nullptr) continue;
        for (int64_t o = o0; o < o1; ++o)
          for (int64_t p = 0; p < px; ++p) yo[(o - o0) * px + p] += (*b)[o];
      }
    }
  }
}

// Gradients flowing through input channel c of sample n: its weight
// columns dw[:, c's taps] and, if dx is non-null, dx[n, c].
template <typename T>
void conv_backward_channel(const ConvGeometry& g, const Tensor<T>& x,
                           const Tensor<T>& w, const Tensor<T>& dy, int64_t n,
                           int64_t c, Tensor<T>* dx, Tensor<T>& dw,
                           std::vector<T>& buf, std::vector<T>& dcols) {
  const int64_t grp = c / g.group_in(), local = c % g.group_in();
  const int64_t go = g.group_out(), px = g.pixels(), taps = g.taps();
  const T* cols = columns(g, x.ptr() + (n * g.in_c + c) * g.h * g.w, 1, buf);
  const T* dyg = dy.ptr() + (n * g.out_c + grp * go) * px;
  dcols.assign(taps * px, T(0));
  for (int64_t o = 0; o < go; ++o) {
    const int64_t at = (grp * go + o) * g.col_rows() + local * taps;
    for (int64_t t = 0; t < taps; ++t) {
      dw[at + t] += dot(dyg + o * px, cols + t * px, px);
      if (dx != nullptr)
        axpy(w[at + t], dyg + o * px, dcols.data() + t * px, px);
    }
  }
  if (dx == nullptr) return;
  T* dxc = dx->ptr() + (n * g.in_c + c) * g.h * g.w;
  if (g.identity_cols())
    axpy(T(1), dcols.data(), dxc, px);
  else
    col2im(g, dcols.data(), dxc);
}

// Accumulates into dw, db and dx (the latter two if non-null). Each thread
// owns a slice of the input channels: their weight columns and their dx
// planes, so no two threads write the same value.
template <typename T>
void conv_backward(const ConvGeometry& g, const Tensor<T>& x,
                   const Tensor<T>& w, const Tensor<T>& dy, Tensor<T>* dx,
                   Tensor<T>& dw, Tensor<T>* db) {
  const int64_t batch = x.dim(0), px = g.pixels();
#pragma omp parallel if (g.work(batch) >= kParallelWork)
  {
    const Slice mine = my_slice(g.in_c);
    std::vector<T> buf, dcols;
    for (int64_t n = 0; n < batch; ++n)
      for (int64_t c = mine.begin; c < mine.end; ++c)
        conv_backward_channel(g, x, w, dy, n, c, dx, dw, buf, dcols);
  }
  if (db == nullptr) return;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t o = 0; o < g.out_c; ++o) {
      const T* plane = dy.ptr() + (n * g.out_c + o) * px;
      for (int64_t p = 0; p < px; ++p) (*db)[o] += plane[p];
    }
}

}  // namespace nnbench::engines::reference::ops
