#pragma once
// The transformer ops of the description, written as their definitions
// (the oracle): layer normalisation, GELU, learned positions, multi-head
// self-attention with an optional causal mask, the first position.
// Backward functions add into their gradients.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "engines/reference/ops/dense.h"
#include "engines/reference/tensor.h"

namespace nnbench::engines::reference::ops {

template <typename T>
struct LayerNormState {
  Tensor<T> xhat;       // the normalised input
  std::vector<T> rstd;  // 1 / sqrt(variance + eps) per row
};

// Over the last dim: (x - mean) / sqrt(var + eps) * g + b, the biased
// variance (as torch, Keras and ONNX define it).
template <typename T>
void layer_norm_forward(const Tensor<T>& x, const Tensor<T>& g,
                        const Tensor<T>& b, double eps, LayerNormState<T>& st,
                        Tensor<T>& y) {
  const int64_t f = x.shape.back(), rows = x.numel() / f;
  y.reset(x.shape);
  st.xhat.reset(x.shape);
  st.rstd.assign(rows, T(0));
  for (int64_t r = 0; r < rows; ++r) {
    const T* in = x.ptr() + r * f;
    double mean = 0, var = 0;
    for (int64_t j = 0; j < f; ++j) mean += in[j];
    mean /= f;
    for (int64_t j = 0; j < f; ++j) var += (in[j] - mean) * (in[j] - mean);
    var /= f;
    const T rstd = T(1 / std::sqrt(var + eps));
    st.rstd[r] = rstd;
    for (int64_t j = 0; j < f; ++j) {
      const T h = T(in[j] - mean) * rstd;
      st.xhat[r * f + j] = h;
      y[r * f + j] = h * g[j] + b[j];
    }
  }
}

template <typename T>
void layer_norm_backward(const Tensor<T>& g, const LayerNormState<T>& st,
                         const Tensor<T>& dy, Tensor<T>* dx, Tensor<T>& dg,
                         Tensor<T>& db) {
  const int64_t f = g.numel(), rows = dy.numel() / f;
  for (int64_t r = 0; r < rows; ++r) {
    const T* h = st.xhat.ptr() + r * f;
    const T* d = dy.ptr() + r * f;
    double mean_dh = 0, mean_dh_h = 0;
    for (int64_t j = 0; j < f; ++j) {
      dg[j] += d[j] * h[j];
      db[j] += d[j];
      mean_dh += d[j] * g[j];
      mean_dh_h += d[j] * g[j] * h[j];
    }
    if (dx == nullptr) continue;
    mean_dh /= f;
    mean_dh_h /= f;
    for (int64_t j = 0; j < f; ++j)
      (*dx)[r * f + j] +=
          st.rstd[r] * T(d[j] * g[j] - mean_dh - h[j] * mean_dh_h);
  }
}

// x * Phi(x) (BERT, torch's default), or GPT-2's tanh approximation
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
template <typename T>
T gelu(T x, bool approximate) {
  if (!approximate) return T(0.5) * x * T(1 + std::erf(x / std::sqrt(T(2))));
  const T c = std::sqrt(T(2) / T(M_PI));
  return T(0.5) * x * (1 + std::tanh(c * (x + T(0.044715) * x * x * x)));
}

template <typename T>
T gelu_derivative(T x, bool approximate) {
  if (!approximate) {
    const T cdf = T(0.5) * (1 + std::erf(x / std::sqrt(T(2))));
    const T pdf = std::exp(-x * x / 2) / std::sqrt(T(2 * M_PI));
    return cdf + x * pdf;
  }
  const T c = std::sqrt(T(2) / T(M_PI));
  const T t = std::tanh(c * (x + T(0.044715) * x * x * x));
  return T(0.5) * (1 + t) +
         T(0.5) * x * (1 - t * t) * c * (1 + 3 * T(0.044715) * x * x);
}

template <typename T>
void gelu_forward(const Tensor<T>& x, bool approximate, Tensor<T>& y) {
  y.reset(x.shape);
  for (int64_t i = 0; i < x.numel(); ++i) y[i] = gelu(x[i], approximate);
}

template <typename T>
void gelu_backward(const Tensor<T>& x, bool approximate, const Tensor<T>& dy,
                   Tensor<T>& dx) {
  for (int64_t i = 0; i < x.numel(); ++i)
    dx[i] += dy[i] * gelu_derivative(x[i], approximate);
}

// x [N, T, F] + the first T rows of the table [P, F].
template <typename T>
void positions_forward(const Tensor<T>& x, const Tensor<T>& table,
                       Tensor<T>& y) {
  const int64_t tf = x.dim(1) * x.dim(2);
  y = x;
  for (int64_t n = 0; n < x.dim(0); ++n)
    for (int64_t i = 0; i < tf; ++i) y[n * tf + i] += table[i];
}

template <typename T>
void positions_backward(const Tensor<T>& dy, Tensor<T>* dx, Tensor<T>& dtable) {
  const int64_t tf = dy.dim(1) * dy.dim(2);
  for (int64_t n = 0; n < dy.dim(0); ++n)
    for (int64_t i = 0; i < tf; ++i) {
      dtable[i] += dy[n * tf + i];
      if (dx != nullptr) (*dx)[n * tf + i] += dy[n * tf + i];
    }
}

// x [N, T, F] -> [N, F]: position 0.
template <typename T>
void seq_first_forward(const Tensor<T>& x, Tensor<T>& y) {
  const int64_t t = x.dim(1), f = x.dim(2);
  y.reset({x.dim(0), f});
  for (int64_t n = 0; n < x.dim(0); ++n)
    for (int64_t j = 0; j < f; ++j) y[n * f + j] = x[n * t * f + j];
}

template <typename T>
void seq_first_backward(const Tensor<T>& dy, int64_t t, Tensor<T>& dx) {
  const int64_t f = dy.dim(1);
  for (int64_t n = 0; n < dy.dim(0); ++n)
    for (int64_t j = 0; j < f; ++j) dx[n * t * f + j] += dy[n * f + j];
}

template <typename T>
struct AttentionState {
  Tensor<T> qkv;    // [N, T, 3F]: q, k, v side by side
  Tensor<T> probs;  // [N, H, T, T]: softmax of the scaled scores
  Tensor<T> ctx;    // [N, T, F]: the heads' weighted sums, side by side
};

// The projections' parameters: in [3F, F] (and [3F]), out [F, F] (and
// [F]); biases null when the layer has none.
template <typename T>
struct AttentionParams {
  const Tensor<T>& w_in;
  const Tensor<T>* b_in;
  const Tensor<T>& w_out;
  const Tensor<T>* b_out;
};

// Multi-head self-attention: per head h (columns h*D..(h+1)*D of q, k and
// v, D = F/H), softmax(q k^T / sqrt(D)) v, position i seeing only
// positions <= i when causal; the heads side by side, projected out.
template <typename T>
void attention_forward(const Tensor<T>& x, const AttentionParams<T>& p,
                       int64_t heads, bool causal, AttentionState<T>& st,
                       Tensor<T>& y) {
  const int64_t n = x.dim(0), t = x.dim(1), f = x.dim(2), d = f / heads;
  linear_forward(x, p.w_in, p.b_in, st.qkv);
  st.probs.reset({n, heads, t, t});
  st.ctx.reset({n, t, f});
  const T scale = T(1 / std::sqrt(double(d)));
  for (int64_t s = 0; s < n; ++s)
    for (int64_t h = 0; h < heads; ++h) {
      const T* qkv = st.qkv.ptr() + s * t * 3 * f;
      T* prob = st.probs.ptr() + (s * heads + h) * t * t;
      for (int64_t i = 0; i < t; ++i) {
        const T* q = qkv + i * 3 * f + h * d;
        const int64_t seen = causal ? i + 1 : t;
        T top = -std::numeric_limits<T>::infinity();
        for (int64_t j = 0; j < seen; ++j) {
          const T* k = qkv + j * 3 * f + f + h * d;
          T dot = 0;
          for (int64_t c = 0; c < d; ++c) dot += q[c] * k[c];
          prob[i * t + j] = dot * scale;
          top = std::max(top, prob[i * t + j]);
        }
        T sum = 0;
        for (int64_t j = 0; j < seen; ++j) {
          prob[i * t + j] = std::exp(prob[i * t + j] - top);
          sum += prob[i * t + j];
        }
        T* out = st.ctx.ptr() + (s * t + i) * f + h * d;
        for (int64_t j = 0; j < seen; ++j) {
          prob[i * t + j] /= sum;
          const T* v = qkv + j * 3 * f + 2 * f + h * d;
          for (int64_t c = 0; c < d; ++c) out[c] += prob[i * t + j] * v[c];
        }
      }
    }
  linear_forward(st.ctx, p.w_out, p.b_out, y);
}

// Gradients of the four projections' parameters (in the order of
// `grads`: w_in, b_in, w_out, b_out, the biases null when absent) and of
// the input when dx is non-null.
template <typename T>
void attention_backward(const Tensor<T>& x, const AttentionParams<T>& p,
                        int64_t heads, const AttentionState<T>& st,
                        const Tensor<T>& dy, Tensor<T>* dx, Tensor<T>& dw_in,
                        Tensor<T>* db_in, Tensor<T>& dw_out,
                        Tensor<T>* db_out) {
  const int64_t n = x.dim(0), t = x.dim(1), f = x.dim(2), d = f / heads;
  Tensor<T> dctx(st.ctx.shape);
  linear_backward(st.ctx, p.w_out, dy, &dctx, dw_out, db_out);
  Tensor<T> dqkv(st.qkv.shape);
  std::vector<T> dprob(t);
  const T scale = T(1 / std::sqrt(double(d)));
  for (int64_t s = 0; s < n; ++s)
    for (int64_t h = 0; h < heads; ++h) {
      const T* qkv = st.qkv.ptr() + s * t * 3 * f;
      T* dq_kv = dqkv.ptr() + s * t * 3 * f;
      const T* prob = st.probs.ptr() + (s * heads + h) * t * t;
      for (int64_t i = 0; i < t; ++i) {
        const T* dc = dctx.ptr() + (s * t + i) * f + h * d;
        // dP = dctx v^T; dv += P^T dctx; dS = P (dP - sum P dP).
        T weighted = 0;
        for (int64_t j = 0; j < t; ++j) {
          const T* v = qkv + j * 3 * f + 2 * f + h * d;
          T* dv = dq_kv + j * 3 * f + 2 * f + h * d;
          T dot = 0;
          for (int64_t c = 0; c < d; ++c) {
            dot += dc[c] * v[c];
            dv[c] += prob[i * t + j] * dc[c];
          }
          dprob[j] = dot;
          weighted += prob[i * t + j] * dot;
        }
        const T* q = qkv + i * 3 * f + h * d;
        T* dq = dq_kv + i * 3 * f + h * d;
        for (int64_t j = 0; j < t; ++j) {
          const T ds = prob[i * t + j] * (dprob[j] - weighted) * scale;
          if (ds == T(0)) continue;  // masked: no gradient
          const T* k = qkv + j * 3 * f + f + h * d;
          T* dk = dq_kv + j * 3 * f + f + h * d;
          for (int64_t c = 0; c < d; ++c) {
            dq[c] += ds * k[c];
            dk[c] += ds * q[c];
          }
        }
      }
    }
  linear_backward(x, p.w_in, dqkv, dx, dw_in, db_in);
}

}  // namespace nnbench::engines::reference::ops
