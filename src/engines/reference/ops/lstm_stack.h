#pragma once
// A whole LSTM layer of the description: num_layers stacked layers, each
// with one or two directions whose outputs are concatenated (forward
// first). sequences=false returns the top layer's final hidden states: the
// forward direction's at t = T-1 and the reverse direction's at t = 0.
#include <algorithm>
#include <array>
#include <span>
#include <vector>

#include "engines/reference/ops/lstm.h"
#include "model/layer.h"

namespace nnbench::engines::reference::ops {

template <typename T>
struct LstmStackState {
  std::vector<Tensor<T>> level_out;  // [N, T, dirs*H] of each stacked layer
  std::vector<LstmCache<T>> caches;  // per (stacked layer, direction)
};

inline int64_t lstm_dirs(const model::Layer& l) {
  return l.bidirectional ? 2 : 1;
}

// Canonical parameter order (model/params.h): per stacked layer, per
// direction: w_ih, w_hh, b_ih and, with two biases, b_hh.
template <typename P>
auto lstm_slot(const model::Layer& l, std::span<P> params, int64_t k,
               int64_t d) {
  const int64_t per = l.lstm_biases == 2 ? 4 : 3;
  const auto first = params.begin() + (k * lstm_dirs(l) + d) * per;
  auto* b_hh = per == 4 ? first[3].ptr() : nullptr;
  return std::array{first[0].ptr(), first[1].ptr(), first[2].ptr(), b_hh};
}

// Copies direction d's [N, T, H] into its slice [.., d*H, (d+1)*H) of a
// [N, T, dirs*H] tensor; gather_direction copies it back out.
template <typename T>
void scatter_direction(const Tensor<T>& part, int64_t d, int64_t dirs,
                       Tensor<T>& whole) {
  const int64_t h = part.dim(2), rows = part.dim(0) * part.dim(1);
  for (int64_t r = 0; r < rows; ++r)
    std::copy_n(part.ptr() + r * h, h, whole.ptr() + (r * dirs + d) * h);
}

template <typename T>
Tensor<T> gather_direction(const Tensor<T>& whole, int64_t d, int64_t dirs) {
  const int64_t h = whole.dim(2) / dirs, rows = whole.dim(0) * whole.dim(1);
  Tensor<T> part({whole.dim(0), whole.dim(1), h});
  for (int64_t r = 0; r < rows; ++r)
    std::copy_n(whole.ptr() + (r * dirs + d) * h, h, part.ptr() + r * h);
  return part;
}

// The time step whose hidden state is direction d's final one.
inline int64_t final_step(int64_t d, int64_t steps) {
  return d == 0 ? steps - 1 : 0;
}

template <typename T>
void lstm_stack_forward(const model::Layer& l, const Tensor<T>& x,
                        std::span<const Tensor<T>> params,
                        LstmStackState<T>& st, Tensor<T>& y) {
  const int64_t dirs = lstm_dirs(l), n = x.dim(0), steps = x.dim(1);
  st.level_out.resize(l.num_layers);
  st.caches.resize(l.num_layers * dirs);
  const Tensor<T>* in = &x;
  for (int64_t k = 0; k < l.num_layers; ++k) {
    st.level_out[k].reset({n, steps, dirs * l.out});
    for (int64_t d = 0; d < dirs; ++d) {
      const auto [w_ih, w_hh, b_ih, b_hh] = lstm_slot(l, params, k, d);
      auto& cache = st.caches[k * dirs + d];
      lstm_forward(*in, LstmWeights<T>{w_ih, w_hh, b_ih, b_hh}, l.out, d == 1,
                   cache);
      scatter_direction(cache.hidden, d, dirs, st.level_out[k]);
    }
    in = &st.level_out[k];
  }
  if (l.sequences) {
    y = *in;
    return;
  }
  y.reset({n, dirs * l.out});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t d = 0; d < dirs; ++d)
      std::copy_n(
          in->ptr() + ((i * steps + final_step(d, steps)) * dirs + d) * l.out,
          l.out, y.ptr() + (i * dirs + d) * l.out);
}

// The gradient reaching the top layer's [N, T, dirs*H] outputs.
template <typename T>
Tensor<T> lstm_top_grad(const model::Layer& l, const Tensor<T>& dy,
                        int64_t steps) {
  if (l.sequences) return dy;
  const int64_t dirs = lstm_dirs(l), n = dy.dim(0);
  Tensor<T> d_top({n, steps, dirs * l.out});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t d = 0; d < dirs; ++d)
      std::copy_n(dy.ptr() + (i * dirs + d) * l.out, l.out,
                  d_top.ptr() +
                      ((i * steps + final_step(d, steps)) * dirs + d) * l.out);
  return d_top;
}

// Accumulates into grads (same layout as params) and dx if non-null.
template <typename T>
void lstm_stack_backward(const model::Layer& l, const Tensor<T>& x,
                         std::span<const Tensor<T>> params,
                         std::span<Tensor<T>> grads,
                         const LstmStackState<T>& st, const Tensor<T>& dy,
                         Tensor<T>* dx) {
  const int64_t dirs = lstm_dirs(l);
  Tensor<T> d_level = lstm_top_grad(l, dy, x.dim(1));
  for (int64_t k = l.num_layers - 1; k >= 0; --k) {
    const Tensor<T>& in = k == 0 ? x : st.level_out[k - 1];
    Tensor<T> d_in;
    if (k > 0) d_in.reset(in.shape);
    Tensor<T>* d_in_ptr = k > 0 ? &d_in : dx;
    for (int64_t d = 0; d < dirs; ++d) {
      const auto [w_ih, w_hh, b_ih, b_hh] = lstm_slot(l, params, k, d);
      const auto [g_ih, g_hh, gb_ih, gb_hh] = lstm_slot(l, grads, k, d);
      lstm_backward(in, LstmWeights<T>{w_ih, w_hh, b_ih, b_hh},
                    st.caches[k * dirs + d], d == 1,
                    gather_direction(d_level, d, dirs),
                    LstmGrads<T>{g_ih, g_hh, gb_ih, gb_hh}, d_in_ptr);
    }
    d_level = std::move(d_in);
  }
}

}  // namespace nnbench::engines::reference::ops
