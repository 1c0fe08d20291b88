#pragma once
// The two matrix products the dense ops reduce to, accumulating into C.
// Row-major throughout. Parallel over output elements: each value is
// computed by one thread in a fixed order, whatever the thread count.
#include <algorithm>
#include <cstdint>

#include "engines/reference/ops/parallel.h"

namespace nnbench::engines::reference::ops {

// Columns of C one task covers: a block of a row of C stays in L1.
inline constexpr int64_t kColumnBlock = 512;

// Row i, columns [j0, j1) of C[m,n] += A[m,k] * B[k,n], where A is stored
// as [k,m] if a_transposed. The inner loop runs along rows of B and C, so
// it vectorises.
template <typename T>
void matmul_block(int64_t i, int64_t j0, int64_t j1, int64_t m, int64_t n,
                  int64_t k, const T* a, bool a_transposed, const T* b, T* c) {
  T* ci = c + i * n;
  for (int64_t p = 0; p < k; ++p) {
    const T av = a_transposed ? a[p * m + i] : a[i * k + p];
    const T* bp = b + p * n;
#pragma omp simd
    for (int64_t j = j0; j < j1; ++j) ci[j] += av * bp[j];
  }
}

// C[m,n] += A[m,k] * B[k,n] on the calling thread.
template <typename T>
void matmul_serial(int64_t m, int64_t n, int64_t k, const T* a,
                   bool a_transposed, const T* b, T* c) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j0 = 0; j0 < n; j0 += kColumnBlock)
      matmul_block(i, j0, std::min(n, j0 + kColumnBlock), m, n, k, a,
                   a_transposed, b, c);
}

// C[m,n] += A[m,k] * B[k,n] on all threads.
template <typename T>
void matmul(int64_t m, int64_t n, int64_t k, const T* a, bool a_transposed,
            const T* b, T* c) {
  const int64_t blocks = (n + kColumnBlock - 1) / kColumnBlock;
#pragma omp parallel for collapse(2) if (m * n * k >= kParallelWork)
  for (int64_t i = 0; i < m; ++i)
    for (int64_t jb = 0; jb < blocks; ++jb)
      matmul_block(i, jb * kColumnBlock, std::min(n, (jb + 1) * kColumnBlock),
                   m, n, k, a, a_transposed, b, c);
}

// C[m,n] += A[m,k] * B[n,k]^T: every output is a dot product of two rows.
template <typename T>
void matmul_bt(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c) {
#pragma omp parallel for collapse(2) if (m * n * k >= kParallelWork)
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      c[i * n + j] += dot(a + i * k, b + j * k, k);
}

// out[j] += sum over rows of x[rows, cols]: bias gradients.
template <typename T>
void add_column_sums(int64_t rows, int64_t cols, const T* x, T* out) {
  for (int64_t r = 0; r < rows; ++r) axpy(T(1), x + r * cols, out, cols);
}

// Every row of x[rows, cols] += v[cols]: bias terms.
template <typename T>
void add_row_vector(int64_t rows, int64_t cols, const T* v, T* x) {
  for (int64_t r = 0; r < rows; ++r) axpy(T(1), v, x + r * cols, cols);
}

}  // namespace nnbench::engines::reference::ops
