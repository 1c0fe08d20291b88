// Ops on token ids and sequences (learned positions, the first position
// too), written by hand on plain layouts: oneDNN
// has no gather, and these are small next to the dense layers after them.
#include <algorithm>
#include <cstring>

#include "engines/onednn/bf16.h"
#include "engines/onednn/ops.h"
#include "util/error.h"

namespace nnbench::engines::onednn {
namespace {

template <typename F>
void by_type(Dt dt, F f) {
  if (dt == Dt::bf16)
    f(uint16_t{});
  else
    f(float{});
}

template <typename T>
T* data(const memory& m) {
  return static_cast<T*>(m.get_data_handle());
}

// The current batch's token ids, checked against the vocabulary.
const int64_t* tokens(const RunState& s, int64_t count, int64_t vocab) {
  if (s.tokens == nullptr) throw Error("oneDNN backend: no token batch bound");
  for (int64_t i = 0; i < count; ++i)
    if (s.tokens[i] < 0 || s.tokens[i] >= vocab)
      throw Error("oneDNN backend: token id " + std::to_string(s.tokens[i]) +
                  " outside [0, " + std::to_string(vocab) + ")");
  return s.tokens;
}

}  // namespace

void build_embedding(LayerCtx& c) {
  Net& net = c.net;
  const int64_t rows = c.src().dims[0] * c.src().dims[1];
  const int64_t vocab = c.l.vocab, dim = c.l.out;
  net.define(c.out, net.plain(c.out, net.dt()));
  const Md canonical({vocab, dim}, Dt::f32, Tag::ab);
  const auto w = c.params.add(c.l.name + ".weight", canonical,
                              Md({vocab, dim}, net.dt(), Tag::ab), canonical);
  const memory dst = c.dst().mem, diff = c.dst().diff;
  const RunState* state = &c.state;
  // Gradients of the table from layers that read it too (a tied output).
  const std::vector<memory>* tied =
      c.params.contributions(c.l.name + ".weight");
  by_type(net.dt(), [&](auto zero) {
    using T = decltype(zero);
    net.fwd(When::kAlways, [=] {
      const int64_t* ids = tokens(*state, rows, vocab);
      for (int64_t r = 0; r < rows; ++r)
        std::memcpy(data<T>(dst) + r * dim, data<T>(w.weights) + ids[r] * dim,
                    dim * sizeof(T));
    });
    net.begin_layer(c.index);
    // Rows not in the batch get a zero gradient, as in torch.
    net.bwd([=] {
      float* grad = data<float>(w.grad);
      std::fill_n(grad, vocab * dim, 0.f);
      const int64_t* ids = state->tokens;
      const T* d = data<T>(diff);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < dim; ++k)
          grad[ids[r] * dim + k] += load(d, r * dim + k);
      for (const memory& m : *tied) {
        const float* g = data<float>(m);
        for (int64_t k = 0; k < vocab * dim; ++k) grad[k] += g[k];
      }
    });
  });
}

void build_one_hot(LayerCtx& c) {
  Net& net = c.net;
  const int64_t rows = c.src().dims[0] * c.src().dims[1];
  const int64_t vocab = c.l.vocab;
  net.define(c.out, net.plain(c.out, net.dt()));
  const memory dst = c.dst().mem;
  const RunState* state = &c.state;
  by_type(net.dt(), [&](auto zero) {
    using T = decltype(zero);
    net.fwd(When::kAlways, [=] {
      const int64_t* ids = tokens(*state, rows, vocab);
      T* out = data<T>(dst);
      std::fill_n(out, rows * vocab, T{0});
      for (int64_t r = 0; r < rows; ++r) store(out, r * vocab + ids[r], 1.f);
    });
  });
}

void build_seq_mean(LayerCtx& c) {
  Net& net = c.net;
  const Dims& in = c.src().dims;  // [N, T, F]
  const int64_t n = in[0], steps = in[1], f = in[2];
  const memory src = net.src_as(c.in[0], net.plain(c.in[0], net.dt()));
  net.define(c.out, net.plain(c.out, net.dt()));
  const memory dst = c.dst().mem;
  by_type(net.dt(), [&](auto zero) {
    using T = decltype(zero);
    net.fwd(When::kAlways, [=] {
      const T* x = data<T>(src);
      for (int64_t b = 0; b < n; ++b)
        for (int64_t k = 0; k < f; ++k) {
          float sum = 0;
          for (int64_t t = 0; t < steps; ++t)
            sum += load(x, (b * steps + t) * f + k);
          store(data<T>(dst), b * f + k, sum / static_cast<float>(steps));
        }
    });
  });
  if (!c.src_needs_grad()) return;
  net.begin_layer(c.index);
  const memory diff_src = net.grad_out(c.in[0], net.plain(c.in[0], net.dt()));
  const memory diff_dst = c.dst().diff;
  by_type(net.dt(), [&](auto zero) {
    using T = decltype(zero);
    net.bwd([=] {
      const T* d = data<T>(diff_dst);
      T* out = data<T>(diff_src);
      for (int64_t b = 0; b < n; ++b)
        for (int64_t t = 0; t < steps; ++t)
          for (int64_t k = 0; k < f; ++k)
            store(out, (b * steps + t) * f + k,
                  load(d, b * f + k) / static_cast<float>(steps));
    });
  });
  net.grad_commit(c.in[0], diff_src);
}

void build_positions(LayerCtx& c) {
  Net& net = c.net;
  const Dims& in = c.src().dims;  // [N, T, F]
  const int64_t n = in[0], t = in[1], f = in[2], rows = c.l.vocab;
  const memory src = net.src_as(c.in[0], net.plain(c.in[0], net.dt()));
  net.define(c.out, net.plain(c.out, net.dt()));
  const Md canonical({rows, f}, Dt::f32, Tag::ab);
  const auto param = c.params.add(c.l.name + ".weight", canonical,
                                  Md({rows, f}, net.dt(), Tag::ab), canonical);
  const memory table = param.weights, table_grad = param.grad;
  const memory dst = c.dst().mem;
  const RunState* state = &c.state;
  const std::string name = c.l.name;
  by_type(net.dt(), [&](auto zero) {
    using T = decltype(zero);
    net.fwd(When::kAlways, [=] {
      // Tokens that follow `first` earlier ones (generation) read the
      // table from there.
      const int64_t first = state->position;
      if (first < 0 || first + t > rows)
        throw Error("oneDNN backend: layer '" + name + "' has " +
                    std::to_string(rows) + " positions, asked for " +
                    std::to_string(first) + ".." + std::to_string(first + t));
      const T* x = data<T>(src);
      const T* p = data<T>(table) + first * f;
      T* y = data<T>(dst);
      for (int64_t b = 0; b < n; ++b)
        for (int64_t i = 0; i < t * f; ++i)
          store(y, b * t * f + i, load(x, b * t * f + i) + load(p, i));
    });
  });
  if (c.infer != nullptr) return;
  net.begin_layer(c.index);
  // The table's rows 0..T get the gradient summed over the batch, the rest
  // zero; the input's gradient is the output's.
  const memory diff = c.dst().diff;
  const memory grad = table_grad;
  by_type(net.dt(), [&](auto zero) {
    using T = decltype(zero);
    net.bwd([=] {
      // Builds that train bind no generation's position: rows 0..T.
      if (state->position != 0)
        throw Error("oneDNN backend: layer '" + name +
                    "': a backward at a position offset");
      float* g = data<float>(grad);
      std::fill_n(g, rows * f, 0.f);
      const T* d = data<T>(diff);
      for (int64_t b = 0; b < n; ++b)
        for (int64_t i = 0; i < t * f; ++i) g[i] += load(d, b * t * f + i);
    });
  });
  if (c.src_needs_grad()) net.add_grad(c.in[0], diff);
}

void build_seq_first(LayerCtx& c) {
  Net& net = c.net;
  const Dims& in = c.src().dims;  // [N, T, F]
  const int64_t n = in[0], t = in[1], f = in[2];
  const memory src = net.src_as(c.in[0], net.plain(c.in[0], net.dt()));
  net.define(c.out, net.plain(c.out, net.dt()));
  // Row 0 of each sample: a strided view the reorder gathers.
  const memory from = fwd_view(net, src, Md({n, f}, net.dt(), Dims{t * f, 1}));
  net.fwd(When::kAlways, make_reorder(from, c.dst().mem),
          {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, c.dst().mem}});
  if (c.infer != nullptr || !c.src_needs_grad()) return;
  net.begin_layer(c.index);
  // Position 0 gets the gradient, the others zero.
  const memory diff_src = net.grad_out(c.in[0], net.plain(c.in[0], net.dt()));
  const size_t bytes = diff_src.get_desc().get_size();
  net.bwd(
      [diff_src, bytes] { std::memset(diff_src.get_data_handle(), 0, bytes); });
  const memory to =
      bwd_view(net, diff_src, Md({n, f}, net.dt(), Dims{t * f, 1}));
  net.bwd(make_reorder(c.dst().diff, to),
          {{DNNL_ARG_FROM, c.dst().diff}, {DNNL_ARG_TO, to}});
  net.grad_commit(c.in[0], diff_src);
}

}  // namespace nnbench::engines::onednn
