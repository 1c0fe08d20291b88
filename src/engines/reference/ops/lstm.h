#pragma once
// One direction of one LSTM layer over a batch-first sequence [N, T, I],
// PyTorch's equations and gate order (i, f, g, o), zero initial states:
//   a = W_ih x_t + b_ih + W_hh h_prev + b_hh
//   c_t = f * c_prev + i * g,  h_t = o * tanh(c_t)
// The reverse direction walks t = T-1 .. 0, its "previous" step is t + 1.
#include <algorithm>
#include <cmath>
#include <vector>

#include "engines/reference/ops/activation.h"
#include "engines/reference/ops/matmul.h"
#include "engines/reference/tensor.h"

namespace nnbench::engines::reference::ops {

template <typename T>
struct LstmWeights {
  const T *w_ih, *w_hh, *b_ih, *b_hh;  // b_hh null with one bias per gate
};

template <typename T>
struct LstmGrads {
  T *w_ih, *w_hh, *b_ih, *b_hh;
};

// What backward needs, per direction.
template <typename T>
struct LstmCache {
  std::vector<T> gates;  // [N, T, 4H]: i, f, g, o after their nonlinearity
  std::vector<T> cell;   // [N, T, H]
  Tensor<T> hidden;      // [N, T, H]: the direction's output
};

struct LstmSizes {
  int64_t n, t, in, h;
  int64_t time_at(int64_t step, bool reverse) const {
    return reverse ? t - 1 - step : step;
  }
};

template <typename T>
void lstm_cell_step(const LstmSizes& s, int64_t t, const T* pre, const T* rec,
                    std::vector<T>& c_state, std::vector<T>& h_state,
                    LstmCache<T>& cache) {
  const int64_t h = s.h;
  for (int64_t n = 0; n < s.n; ++n) {
    const T* a = pre + (n * s.t + t) * 4 * h;
    const T* r = rec + n * 4 * h;
    T* gate = cache.gates.data() + (n * s.t + t) * 4 * h;
    for (int64_t j = 0; j < h; ++j) {
      const T i = sigmoid(a[j] + r[j]);
      const T f = sigmoid(a[h + j] + r[h + j]);
      const T g = std::tanh(a[2 * h + j] + r[2 * h + j]);
      const T o = sigmoid(a[3 * h + j] + r[3 * h + j]);
      gate[j] = i;
      gate[h + j] = f;
      gate[2 * h + j] = g;
      gate[3 * h + j] = o;
      const T c = f * c_state[n * h + j] + i * g;
      c_state[n * h + j] = c;
      h_state[n * h + j] = o * std::tanh(c);
      cache.cell[(n * s.t + t) * h + j] = c;
      cache.hidden[(n * s.t + t) * h + j] = h_state[n * h + j];
    }
  }
}

template <typename T>
void lstm_forward(const Tensor<T>& x, const LstmWeights<T>& w, int64_t hidden,
                  bool reverse, LstmCache<T>& cache) {
  const LstmSizes s{x.dim(0), x.dim(1), x.dim(2), hidden};
  const int64_t rows = s.n * s.t, g4 = 4 * s.h;
  // The input projection of every step at once: one large product.
  std::vector<T> pre(rows * g4, T(0));
  add_row_vector(rows, g4, w.b_ih, pre.data());
  if (w.b_hh != nullptr) add_row_vector(rows, g4, w.b_hh, pre.data());
  matmul_bt(rows, g4, s.in, x.ptr(), w.w_ih, pre.data());
  cache.gates.assign(rows * g4, T(0));
  cache.cell.assign(rows * s.h, T(0));
  cache.hidden.reset({s.n, s.t, s.h});
  std::vector<T> c_state(s.n * s.h, T(0)), h_state(s.n * s.h, T(0));
  std::vector<T> rec(s.n * g4);
  for (int64_t step = 0; step < s.t; ++step) {
    std::fill(rec.begin(), rec.end(), T(0));
    matmul_bt(s.n, g4, s.h, h_state.data(), w.w_hh, rec.data());
    lstm_cell_step(s, s.time_at(step, reverse), pre.data(), rec.data(), c_state,
                   h_state, cache);
  }
}

// Gradients of the gate pre-activations at time t into d_pre, given the
// gradient reaching h_t (dh) and the cell gradient from the later step
// (dc, updated in place to the one for the earlier step).
template <typename T>
void lstm_cell_backward(const LstmSizes& s, int64_t t, int64_t t_prev,
                        const LstmCache<T>& cache, const std::vector<T>& dh,
                        std::vector<T>& dc, T* d_pre) {
  const int64_t h = s.h;
  for (int64_t n = 0; n < s.n; ++n) {
    const T* gate = cache.gates.data() + (n * s.t + t) * 4 * h;
    T* da = d_pre + (n * s.t + t) * 4 * h;
    for (int64_t j = 0; j < h; ++j) {
      const T i = gate[j], f = gate[h + j], g = gate[2 * h + j],
              o = gate[3 * h + j];
      const T tc = std::tanh(cache.cell[(n * s.t + t) * h + j]);
      const T c_prev =
          t_prev < 0 ? T(0) : cache.cell[(n * s.t + t_prev) * h + j];
      const T d_h = dh[n * h + j];
      const T d_c = dc[n * h + j] + d_h * o * (T(1) - tc * tc);
      da[j] = d_c * g * i * (T(1) - i);
      da[h + j] = d_c * c_prev * f * (T(1) - f);
      da[2 * h + j] = d_c * i * (T(1) - g * g);
      da[3 * h + j] = d_h * tc * o * (T(1) - o);
      dc[n * h + j] = d_c * f;
    }
  }
}

// dh_out [N, T, H]: gradient reaching the direction's outputs. Accumulates
// into the weight gradients and, if non-null, into dx [N, T, I].
template <typename T>
void lstm_backward(const Tensor<T>& x, const LstmWeights<T>& w,
                   const LstmCache<T>& cache, bool reverse,
                   const Tensor<T>& dh_out, const LstmGrads<T>& dw,
                   Tensor<T>* dx) {
  const LstmSizes s{x.dim(0), x.dim(1), x.dim(2), cache.hidden.dim(2)};
  const int64_t rows = s.n * s.t, g4 = 4 * s.h;
  std::vector<T> d_pre(rows * g4), h_prev(rows * s.h, T(0));
  std::vector<T> dh(s.n * s.h, T(0)), dc(s.n * s.h, T(0)), step_da(s.n * g4);
  for (int64_t step = s.t - 1; step >= 0; --step) {
    const int64_t t = s.time_at(step, reverse);
    const int64_t t_prev = step == 0 ? -1 : s.time_at(step - 1, reverse);
    for (int64_t n = 0; n < s.n; ++n)
      axpy(T(1), dh_out.ptr() + (n * s.t + t) * s.h, dh.data() + n * s.h, s.h);
    lstm_cell_backward(s, t, t_prev, cache, dh, dc, d_pre.data());
    // dh for the earlier step: da_t W_hh, from this step's rows only.
    for (int64_t n = 0; n < s.n; ++n) {
      std::copy_n(d_pre.data() + (n * s.t + t) * g4, g4,
                  step_da.data() + n * g4);
      if (t_prev >= 0)
        std::copy_n(cache.hidden.ptr() + (n * s.t + t_prev) * s.h, s.h,
                    h_prev.data() + (n * s.t + t) * s.h);
    }
    std::fill(dh.begin(), dh.end(), T(0));
    matmul(s.n, s.h, g4, step_da.data(), false, w.w_hh, dh.data());
  }
  // Weight gradients of all steps at once: sums over (n, t) rows.
  matmul(g4, s.in, rows, d_pre.data(), true, x.ptr(), dw.w_ih);
  matmul(g4, s.h, rows, d_pre.data(), true, h_prev.data(), dw.w_hh);
  add_column_sums(rows, g4, d_pre.data(), dw.b_ih);
  if (dw.b_hh != nullptr) add_column_sums(rows, g4, d_pre.data(), dw.b_hh);
  if (dx != nullptr)
    matmul(rows, s.in, g4, d_pre.data(), false, w.w_ih, dx->ptr());
}

}  // namespace nnbench::engines::reference::ops
