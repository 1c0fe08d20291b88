#pragma once
// A host tensor: a shape (batch dim first) and its values in row-major
// order. Templated so the same kernels run in float for the backend and in
// double for the finite-difference tests.
#include <cstdint>
#include <utility>
#include <vector>

#include "model/model.h"

namespace nnbench::engines::reference {

using model::Shape;

template <typename T>
struct Tensor {
  Shape shape;
  std::vector<T> data;

  Tensor() = default;
  explicit Tensor(Shape s, T fill = T(0))
      : shape(std::move(s)), data(count(shape), fill) {}

  int64_t numel() const { return static_cast<int64_t>(data.size()); }
  int64_t dim(size_t i) const { return shape[i]; }
  T* ptr() { return data.data(); }
  const T* ptr() const { return data.data(); }
  T& operator[](int64_t i) { return data[i]; }
  const T& operator[](int64_t i) const { return data[i]; }

  // Reshapes and zero-fills, reusing the allocation when it is large enough.
  void reset(Shape s) {
    shape = std::move(s);
    data.assign(count(shape), T(0));
  }

  static size_t count(const Shape& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return static_cast<size_t>(n);
  }
};

// A shape with the batch dimension in front of a per-sample shape.
inline Shape batched(int64_t n, const Shape& per_sample) {
  Shape s{n};
  s.insert(s.end(), per_sample.begin(), per_sample.end());
  return s;
}

}  // namespace nnbench::engines::reference
