#pragma once
// When and how loops run on several threads.
#include <omp.h>

#include <cstdint>

namespace nnbench::engines::reference::ops {

// Below this many multiply-adds (or elements touched), about 50 us of work,
// a loop runs on one thread: forking and joining costs microseconds on an
// idle machine, and milliseconds when other processes hold the cores and a
// worker waits for its time slice.
inline constexpr int64_t kParallelWork = 1 << 18;

struct Slice {
  int64_t begin, end;
};

// The part of [0, total) the calling thread owns inside a parallel region.
// Contiguous and fixed by the thread number: each value is computed by one
// thread in a fixed order, so results do not depend on the thread count.
inline Slice my_slice(int64_t total) {
  const int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
  return {total * t / n, total * (t + 1) / n};
}

// Sum of a[i] * b[i]; the reduction order is fixed at compile time.
template <typename T>
T dot(const T* a, const T* b, int64_t n) {
  T sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// y[i] += alpha * x[i].
template <typename T>
void axpy(T alpha, const T* x, T* y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

}  // namespace nnbench::engines::reference::ops
