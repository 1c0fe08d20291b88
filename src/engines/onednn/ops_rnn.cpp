// LSTM layers on oneDNN's LSTM primitive. One primitive per stacked layer
// and direction: oneDNN's own stacking runs each direction through all
// layers alone, where torch (and the oracle) feed layer k+1 both
// directions' outputs of layer k; and one direction's weights are then
// exactly one parameter of the description (ldgoi is torch's [4H, I],
// gates i, f, g, o in both). The directions write their halves of the
// [N, T, dirs*H] output through strided views (oneDNN's ntc with a row of
// dirs*H). Training with bf16 activations keeps every gradient fp32:
// oneDNN 2.6 has no bf16 diff tensors for the LSTM.
#include <cstring>

#include "engines/onednn/bf16.h"
#include "engines/onednn/ops.h"

namespace nnbench::engines::onednn {
namespace {

using dnnl::prop_kind;

size_t elem_size(Dt dt) { return Md({1}, dt, Tag::a).get_size(); }

// [T, N, C] of a buffer laid out [N, T, row] (row >= C): oneDNN's ntc,
// one direction's slice of a concatenated output where row > C.
Md seq_md(int64_t steps, int64_t n, int64_t c, int64_t row, Dt dt) {
  return Md({steps, n, c}, dt, Dims{row, steps * row, 1});
}

// oneDNN 2.6 adds the weight gradients to what the buffers hold.
void zero(const memory& m) {
  std::memset(m.get_data_handle(), 0, m.get_desc().get_size());
}

struct Sizes {
  int64_t n, steps, h, dirs;
  int64_t width() const { return dirs * h; }
  // The step whose hidden state is direction d's final one.
  int64_t final_step(int64_t d) const { return d == 0 ? steps - 1 : 0; }
};

// One stacked layer's direction: its primitives and what they bind.
struct Cell {
  dnnl::lstm_forward::primitive_desc fwd;
  dnnl::lstm_backward::primitive_desc bwd;
  ParamStore::Ref w_layer, w_iter;
  memory bias, bias_grad;  // bias_grad: written, then copied to each bias
  std::vector<memory> bias_grads;
  memory workspace;
};

std::string prefix(const model::Layer& l, int64_t k, int64_t d) {
  return l.name + ".l" + std::to_string(k) + (d ? "_reverse" : "") + ".";
}

// The bias the primitive reads: b_ih, or b_ih + b_hh (torch's two biases)
// summed before each forward pass; the gradient is the same for both.
void add_biases(LayerCtx& c, const std::string& p, bool train, Cell& cell) {
  Net& net = c.net;
  const int64_t h = c.l.out;
  const Md canonical({1, 1, 4, h}, Dt::f32, Tag::ldgo);
  const Md grad = train ? cell.bwd.diff_bias_desc() : canonical;
  if (c.l.lstm_biases != 2) {
    const auto b =
        c.params.add(p + "b_ih", canonical, cell.fwd.bias_desc(), grad);
    cell.bias = b.weights;
    cell.bias_grad = b.grad;
    return;
  }
  const auto b_ih = c.params.add(p + "b_ih", canonical, canonical, canonical);
  const auto b_hh = c.params.add(p + "b_hh", canonical, canonical, canonical);
  cell.bias = net.alloc(cell.fwd.bias_desc());
  const dnnl::sum::primitive_desc sum(cell.bias.get_desc(), {1.f, 1.f},
                                      {canonical, canonical}, net.engine(),
                                      net.attr());
  net.fwd(When::kAlways, dnnl::sum(sum),
          {{DNNL_ARG_MULTIPLE_SRC, b_ih.weights},
           {DNNL_ARG_MULTIPLE_SRC + 1, b_hh.weights},
           {DNNL_ARG_DST, cell.bias}});
  if (!train) return;
  cell.bias_grad = net.alloc(grad);
  cell.bias_grads = {b_ih.grad, b_hh.grad};
}

Cell make_cell(LayerCtx& c, int64_t k, int64_t d, int64_t in_width,
               const Sizes& s) {
  const Net& net = c.net;
  const Dt dt = net.dt();
  const bool train = c.infer == nullptr;
  const int64_t h = s.h;
  const auto dir = d ? dnnl::rnn_direction::unidirectional_right2left
                     : dnnl::rnn_direction::unidirectional_left2right;
  const Md src = seq_md(s.steps, s.n, in_width, in_width, dt);
  const Md dst = seq_md(s.steps, s.n, h, s.width(), dt);
  const Dims wl{1, 1, in_width, 4, h}, wi{1, 1, h, 4, h}, b{1, 1, 4, h};
  // No iteration states: zero initial states, as in torch and the oracle;
  // the last-step form reads the final one from the sequence output.
  const Md none, bias = any_md(b, Dt::f32);
  Cell cell;
  cell.fwd = dnnl::lstm_forward::primitive_desc(
      dnnl::lstm_forward::desc(
          train ? prop_kind::forward_training : prop_kind::forward_inference,
          dir, src, none, none, any_md(wl, dt), any_md(wi, dt), bias, dst, none,
          none),
      net.attr(), net.engine());
  const Md canon_l(wl, Dt::f32, Tag::ldgoi), canon_i(wi, Dt::f32, Tag::ldgoi);
  Md grad_l(wl, Dt::f32, Tag::ldigo), grad_i(wi, Dt::f32, Tag::ldigo);
  if (train) {
    const Dt f = Dt::f32;
    cell.bwd = dnnl::lstm_backward::primitive_desc(
        dnnl::lstm_backward::desc(
            prop_kind::backward, dir, src, none, none, any_md(wl, dt),
            any_md(wi, dt), bias, dst, none, none,
            seq_md(s.steps, s.n, in_width, in_width, f), none, none,
            any_md(wl, f), any_md(wi, f), any_md(b, f),
            seq_md(s.steps, s.n, h, s.width(), f), none, none),
        net.attr(), net.engine(), cell.fwd);
    grad_l = cell.bwd.diff_weights_layer_desc();
    grad_i = cell.bwd.diff_weights_iter_desc();
    cell.workspace = net.alloc(cell.fwd.workspace_desc());
  }
  const std::string p = prefix(c.l, k, d);
  cell.w_layer =
      c.params.add(p + "w_ih", canon_l, cell.fwd.weights_layer_desc(), grad_l);
  cell.w_iter =
      c.params.add(p + "w_hh", canon_i, cell.fwd.weights_iter_desc(), grad_i);
  add_biases(c, p, train, cell);
  return cell;
}

template <typename T>
void copy_final_steps(const Sizes& s, const T* seq, T* last) {
  for (int64_t i = 0; i < s.n; ++i)
    for (int64_t d = 0; d < s.dirs; ++d)
      std::memcpy(last + (i * s.dirs + d) * s.h,
                  seq + ((i * s.steps + s.final_step(d)) * s.dirs + d) * s.h,
                  s.h * sizeof(T));
}

// The gradient of the final steps into a [N, T, dirs*H] fp32 buffer whose
// other steps stay zero.
template <typename T>
void place_final_steps(const Sizes& s, const T* dy, float* dseq) {
  for (int64_t i = 0; i < s.n; ++i)
    for (int64_t d = 0; d < s.dirs; ++d)
      for (int64_t j = 0; j < s.h; ++j) {
        const int64_t at = (i * s.dirs + d) * s.h + j;
        float v;
        if constexpr (sizeof(T) == 2)
          v = from_bf16(dy[at]);
        else
          v = dy[at];
        dseq[((i * s.steps + s.final_step(d)) * s.dirs + d) * s.h + j] = v;
      }
}

void forward(LayerCtx& c, const Sizes& s, std::vector<Cell>& cells,
             const std::vector<memory>& levels, const memory& x) {
  Net& net = c.net;
  const size_t es = elem_size(net.dt());
  for (int64_t k = 0; k < c.l.num_layers; ++k) {
    const memory& in = k == 0 ? x : levels[k - 1];
    for (int64_t d = 0; d < s.dirs; ++d) {
      Cell& cell = cells[k * s.dirs + d];
      Args args{
          {DNNL_ARG_SRC_LAYER, fwd_view(net, in, cell.fwd.src_layer_desc())},
          {DNNL_ARG_DST_LAYER,
           fwd_view(net, levels[k], cell.fwd.dst_layer_desc(), d * s.h * es)},
          {DNNL_ARG_WEIGHTS_LAYER, cell.w_layer.weights},
          {DNNL_ARG_WEIGHTS_ITER, cell.w_iter.weights},
          {DNNL_ARG_BIAS, cell.bias}};
      if (cell.workspace) args[DNNL_ARG_WORKSPACE] = cell.workspace;
      net.fwd(When::kAlways, dnnl::lstm_forward(cell.fwd), args);
    }
  }
  if (c.l.sequences) return;
  const memory top = levels.back(), dst = c.dst().mem;
  net.fwd(When::kAlways, [s, top, dst, es] {
    if (es == 2)
      copy_final_steps(s, static_cast<const uint16_t*>(top.get_data_handle()),
                       static_cast<uint16_t*>(dst.get_data_handle()));
    else
      copy_final_steps(s, static_cast<const float*>(top.get_data_handle()),
                       static_cast<float*>(dst.get_data_handle()));
  });
}

// The fp32 gradient reaching the top layer's [N, T, dirs*H] outputs.
memory top_grad(LayerCtx& c, const Sizes& s) {
  Net& net = c.net;
  const Md seq({s.n, s.steps, s.width()}, Dt::f32, Tag::abc);
  if (c.l.sequences) return net.bwd_as(c.dst().diff, seq);
  memory dseq = net.alloc(seq);
  zero(dseq);
  const memory dy = c.dst().diff;
  const bool bf16 = net.dt() == Dt::bf16;
  net.bwd([s, dy, dseq, bf16] {
    auto* out = static_cast<float*>(dseq.get_data_handle());
    if (bf16)
      place_final_steps(s, static_cast<const uint16_t*>(dy.get_data_handle()),
                        out);
    else
      place_final_steps(s, static_cast<const float*>(dy.get_data_handle()),
                        out);
  });
  return dseq;
}

void backward(LayerCtx& c, const Sizes& s, std::vector<Cell>& cells,
              const std::vector<memory>& levels, const memory& x) {
  Net& net = c.net;
  net.begin_layer(c.index);
  const size_t es = elem_size(net.dt());
  memory dtop = top_grad(c, s);
  for (int64_t k = c.l.num_layers - 1; k >= 0; --k) {
    const memory& in = k == 0 ? x : levels[k - 1];
    const Dims in_dims = k == 0 ? c.src().dims : Dims{s.n, s.steps, s.width()};
    const Md din_md(in_dims, Dt::f32, Tag::abc);
    // Below the first layer, its input's gradient; below the others, a
    // buffer the next layer down reads.
    memory dlevel = k > 0 ? net.alloc(din_md) : memory();
    for (int64_t d = 0; d < s.dirs; ++d) {
      Cell& cell = cells[k * s.dirs + d];
      const auto& pb = cell.bwd;
      memory din;
      if (k > 0)
        din = d == 0 ? dlevel : net.alloc(din_md);
      else if (c.src_needs_grad())
        din = net.grad_out(c.in[0], din_md);
      else
        din = net.alloc(din_md);  // oneDNN always writes it
      const memory dw_layer = cell.w_layer.grad, dw_iter = cell.w_iter.grad,
                   db = cell.bias_grad;
      net.bwd([dw_layer, dw_iter, db] {
        zero(dw_layer);
        zero(dw_iter);
        zero(db);
      });
      Args args{{DNNL_ARG_SRC_LAYER, bwd_view(net, in, pb.src_layer_desc())},
                {DNNL_ARG_DST_LAYER,
                 bwd_view(net, levels[k], pb.dst_layer_desc(), d * s.h * es)},
                {DNNL_ARG_DIFF_DST_LAYER,
                 bwd_view(net, dtop, pb.diff_dst_layer_desc(),
                          d * s.h * sizeof(float))},
                {DNNL_ARG_DIFF_SRC_LAYER,
                 bwd_view(net, din, pb.diff_src_layer_desc())},
                {DNNL_ARG_WEIGHTS_LAYER,
                 net.bwd_as(cell.w_layer.weights, pb.weights_layer_desc())},
                {DNNL_ARG_WEIGHTS_ITER,
                 net.bwd_as(cell.w_iter.weights, pb.weights_iter_desc())},
                {DNNL_ARG_BIAS, net.bwd_as(cell.bias, pb.bias_desc())},
                {DNNL_ARG_WORKSPACE, cell.workspace},
                {DNNL_ARG_DIFF_WEIGHTS_LAYER, dw_layer},
                {DNNL_ARG_DIFF_WEIGHTS_ITER, dw_iter},
                {DNNL_ARG_DIFF_BIAS, db}};
      net.bwd(dnnl::lstm_backward(pb), args);
      for (const memory& g : cell.bias_grads)
        net.bwd(make_reorder(db, g), {{DNNL_ARG_FROM, db}, {DNNL_ARG_TO, g}});
      if (k > 0 && d > 0)
        net.bwd(make_reorder(din, dlevel, true),
                {{DNNL_ARG_FROM, din}, {DNNL_ARG_TO, dlevel}});
      if (k == 0 && c.src_needs_grad()) net.grad_commit(c.in[0], din);
    }
    dtop = dlevel;
  }
}

}  // namespace

memory fwd_view(Net& net, const memory& base, const Md& md, size_t offset) {
  memory v(md, net.engine(), DNNL_MEMORY_NONE);
  net.fwd(When::kAlways, [v, base, offset]() mutable {
    v.set_data_handle(static_cast<char*>(base.get_data_handle()) + offset);
  });
  return v;
}

memory bwd_view(Net& net, const memory& base, const Md& md, size_t offset) {
  memory v(md, net.engine(), DNNL_MEMORY_NONE);
  net.bwd([v, base, offset]() mutable {
    v.set_data_handle(static_cast<char*>(base.get_data_handle()) + offset);
  });
  return v;
}

void build_lstm(LayerCtx& c) {
  const model::Layer& l = c.l;
  Net& net = c.net;
  const Dt dt = net.dt();
  const Dims& in = c.src().dims;  // [N, T, F]
  const Sizes s{in[0], in[1], l.out, l.bidirectional ? 2 : 1};
  const memory x = net.src_as(c.in[0], net.plain(c.in[0], dt));
  net.define(c.out, net.plain(c.out, dt));
  std::vector<memory> levels;  // [N, T, dirs*H] outputs of each layer
  for (int64_t k = 0; k < l.num_layers; ++k)
    levels.push_back(
        k + 1 == l.num_layers && l.sequences
            ? c.dst().mem
            : net.alloc(Md({s.n, s.steps, s.width()}, dt, Tag::abc)));
  std::vector<Cell> cells;
  for (int64_t k = 0; k < l.num_layers; ++k)
    for (int64_t d = 0; d < s.dirs; ++d)
      cells.push_back(make_cell(c, k, d, k == 0 ? in[2] : s.width(), s));
  const Cell& first = cells.front();
  net.note(
      "lstm_impl",
      l.name + ": fwd " + first.fwd.impl_info_str() +
          (c.infer ? "" : ", bwd " + std::string(first.bwd.impl_info_str())));
  if (c.infer != nullptr && c.infer->int8)
    net.note("fp32_in_int8 " + l.name, l.name + " (lstm)");
  forward(c, s, cells, levels, x);
  if (c.infer == nullptr) backward(c, s, cells, levels, x);
}

}  // namespace nnbench::engines::onednn
