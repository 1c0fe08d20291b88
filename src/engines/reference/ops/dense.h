#pragma once
// Linear layer over the last dim: y = x W^T + b, for any leading dims.
#include "engines/reference/ops/matmul.h"
#include "engines/reference/tensor.h"

namespace nnbench::engines::reference::ops {

// w: [out, in]; b: [out] or null.
template <typename T>
void linear_forward(const Tensor<T>& x, const Tensor<T>& w, const Tensor<T>* b,
                    Tensor<T>& y) {
  const int64_t out = w.dim(0), in = w.dim(1), rows = x.numel() / in;
  Shape s = x.shape;
  s.back() = out;
  y.reset(s);
  if (b != nullptr) add_row_vector(rows, out, b->ptr(), y.ptr());
  matmul_bt(rows, out, in, x.ptr(), w.ptr(), y.ptr());
}

// Accumulates into dw, db (if non-null) and dx (if non-null).
template <typename T>
void linear_backward(const Tensor<T>& x, const Tensor<T>& w,
                     const Tensor<T>& dy, Tensor<T>* dx, Tensor<T>& dw,
                     Tensor<T>* db) {
  const int64_t out = w.dim(0), in = w.dim(1), rows = x.numel() / in;
  matmul(out, in, rows, dy.ptr(), /*a_transposed=*/true, x.ptr(), dw.ptr());
  if (db != nullptr) add_column_sums(rows, out, dy.ptr(), db->ptr());
  if (dx != nullptr) matmul(rows, in, out, dy.ptr(), false, w.ptr(), dx->ptr());
}

}  // namespace nnbench::engines::reference::ops
