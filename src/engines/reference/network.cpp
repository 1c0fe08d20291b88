#include "engines/reference/network.h"

#include <string>

#include "backend/backend.h"
#include "engines/reference/ops/loss.h"
#include "model/analysis.h"
#include "model/generation.h"
#include "util/error.h"

namespace nnbench::engines::reference {

template <typename T>
Network<T>::Network(const model::Model& m, uint64_t seed,
                    const std::string& weights)
    : model_(m), shapes_(model::infer_shapes(m)), rng_(seed) {
  const int layers = static_cast<int>(m.layers.size());
  first_param_.assign(layers, 0);
  param_count_.assign(layers, 0);
  for (auto& p : backend::initial_params(m, seed, weights)) {
    const int owner = p.spec.layer;
    if (param_count_[owner]++ == 0) first_param_[owner] = params_.size();
    Tensor<T> t(p.spec.shape);
    std::copy(p.data.begin(), p.data.end(), t.data.begin());
    grads_.emplace_back(p.spec.shape);
    params_.push_back(std::move(t));
    specs_.push_back(std::move(p.spec));
  }
  states_.resize(layers);
  for (int i = 0; i < layers; ++i) {
    inputs_.push_back(model::layer_inputs(m, i));
    const int first = inputs_[i][0];
    init_state(m.layers[i], first < 0 ? m.input.shape : shapes_[first],
               states_[i]);
  }
  for (const auto& [i, st] : backend::initial_running_stats(m, weights)) {
    auto& norm = states_[i].norm;
    norm.running_mean.assign(st.mean.begin(), st.mean.end());
    norm.running_var.assign(st.var.begin(), st.var.end());
  }
  outs_.resize(layers);
  d_outs_.resize(layers);
}

template <typename T>
void Network<T>::set_sequence_length(int64_t tokens) {
  if (model_.input.shape == model::Shape{tokens}) return;
  model_ = model::with_sequence(model_, tokens);
  shapes_ = model::infer_shapes(model_);
  for (size_t i = 0; i < model_.layers.size(); ++i) {
    const int first = inputs_[i][0];
    init_state(model_.layers[i],
               first < 0 ? model_.input.shape : shapes_[first], states_[i]);
  }
}

template <typename T>
void Network<T>::check_input(const Batch<T>& b) const {
  const bool tokens = model_.input.dtype == model::DType::kInt64;
  const Shape& got = tokens ? b.ids.shape : b.x.shape;
  if (got.empty() || got != batched(got[0], model_.input.shape))
    throw Error("model '" + model_.name + "' expects " +
                std::string(tokens ? "token" : "float") + " inputs [N," +
                model::shape_str(model_.input.shape).substr(1) + ", got " +
                model::shape_str(got));
}

template <typename T>
LayerArgs<T> Network<T>::args(int i, bool train) {
  LayerArgs<T> a;
  a.layer = &model_.layers[i];
  a.out_shape = shapes_[i];
  for (int j : inputs_[i]) {
    if (j >= 0)
      a.in.push_back(&outs_[j]);
    else if (model_.input.dtype == model::DType::kInt64)
      a.ids = &batch_->ids;
    else
      a.in.push_back(&batch_->x);
  }
  a.out = &outs_[i];
  // A tied layer's weight is its embedding's table, and so is its gradient.
  const int owner = a.layer->op == model::Op::kTiedLinear ? a.layer->tied : i;
  a.params = {params_.data() + first_param_[owner], param_count_[owner]};
  a.grads = {grads_.data() + first_param_[owner], param_count_[owner]};
  a.state = &states_[i];
  a.train = train;
  a.rng = &rng_;
  return a;
}

template <typename T>
const Tensor<T>& Network<T>::forward(const Batch<T>& b, bool train) {
  check_input(b);
  batch_ = &b;
  for (int i = 0; i < static_cast<int>(model_.layers.size()); ++i) {
    LayerArgs<T> a = args(i, train);
    forward_layer(a);
  }
  return outs_.back();
}

template <typename T>
double Network<T>::loss() {
  if (model_.loss == model::Loss::kSigmoidBinaryCrossEntropy)
    return ops::sigmoid_binary_cross_entropy(outs_.back(), batch_->labels,
                                             d_outs_.back());
  return ops::softmax_cross_entropy(outs_.back(), batch_->labels,
                                    d_outs_.back());
}

template <typename T>
void Network<T>::backward(bool input_grad) {
  const int last = static_cast<int>(model_.layers.size()) - 1;
  for (int i = 0; i < last; ++i) d_outs_[i].reset(outs_[i].shape);
  for (auto& g : grads_) std::fill(g.data.begin(), g.data.end(), T(0));
  const bool float_input = model_.input.dtype == model::DType::kFloat32;
  if (input_grad && float_input) d_input_.reset(batch_->x.shape);
  for (int i = last; i >= 0; --i) {
    LayerArgs<T> a = args(i, /*train=*/true);
    a.d_out = &d_outs_[i];
    for (int j : inputs_[i]) {
      if (j >= 0)
        a.d_in.push_back(&d_outs_[j]);
      else if (float_input)
        a.d_in.push_back(input_grad ? &d_input_ : nullptr);
    }
    backward_layer(a);
  }
}

template class Network<float>;
template class Network<double>;

}  // namespace nnbench::engines::reference
