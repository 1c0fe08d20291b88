#include "engines/onednn/loss.h"

#include <algorithm>
#include <cmath>

#include "util/error.h"

namespace nnbench::engines::onednn {

LossHead::LossHead(Net& net, int last, model::Loss loss)
    : net_(net), loss_(loss), dims_(net.value(last).dims) {
  const Md plain = net.plain(last, Dt::f32);
  logits_.resize(plain.get_size() / sizeof(float));
  grad_.resize(logits_.size());
  logits_mem_ = memory(plain, net.engine(), logits_.data());
  grad_mem_ = memory(plain, net.engine(), grad_.data());
  value_ = net.value(last).mem;
  diff_ = net.value(last).diff;
  // Plain fp32 logits (an fp32 linear's output) need no copies: only a
  // blocked or bf16 last layer takes the reorders.
  if (value_.get_desc() == plain) {
    logits_mem_ = value_;
    if (diff_) grad_mem_ = diff_;
    return;
  }
  to_host_ = make_reorder(value_, logits_mem_);
  if (diff_) to_net_ = make_reorder(grad_mem_, diff_);
}

void LossHead::read_logits() {
  if (!to_host_) return;
  to_host_.execute(net_.stream(),
                   {{DNNL_ARG_FROM, value_}, {DNNL_ARG_TO, logits_mem_}});
  net_.stream().wait();
}

double LossHead::loss_and_grad(const host::Tensor& labels) {
  read_logits();
  const double loss = loss_ == model::Loss::kSigmoidBinaryCrossEntropy
                          ? binary_cross_entropy(labels)
                          : cross_entropy(labels.i);
  if (to_net_)
    to_net_.execute(net_.stream(),
                    {{DNNL_ARG_FROM, grad_mem_}, {DNNL_ARG_TO, diff_}});
  return loss;
}

// Mean over rows of -log softmax(logits)[label]; rows are all dims but the
// last (class) one. Gradient: (softmax - onehot) / rows. Rows in parallel,
// each exp once in float (a language model's 1024 rows of 10000 classes took
// longer than its LSTM layers with two serial double exps per logit).
double LossHead::cross_entropy(const std::vector<int64_t>& labels) {
  const int64_t k = dims_.back();
  const auto rows = static_cast<int64_t>(logits_.size()) / k;
  const auto* logits = static_cast<const float*>(logits_mem_.get_data_handle());
  auto* grad = static_cast<float*>(grad_mem_.get_data_handle());
  if (static_cast<int64_t>(labels.size()) != rows)
    throw Error("oneDNN backend: " + std::to_string(labels.size()) +
                " labels for " + std::to_string(rows) + " rows of logits");
  for (const int64_t y : labels)
    if (y < 0 || y >= k)
      throw Error("oneDNN backend: label " + std::to_string(y) +
                  " outside [0, " + std::to_string(k) + ")");
  double total = 0;
#pragma omp parallel for reduction(+ : total) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = logits + r * k;
    float* g = grad + r * k;
    const float max = *std::max_element(x, x + k);
    double sum = 0;
    for (int64_t j = 0; j < k; ++j) {
      g[j] = std::exp(x[j] - max);
      sum += g[j];
    }
    const int64_t y = labels[r];
    total += std::log(sum) - (x[y] - max);
    const auto scale = static_cast<float>(1.0 / (sum * rows));
    for (int64_t j = 0; j < k; ++j) g[j] *= scale;
    g[y] -= static_cast<float>(1.0 / rows);
  }
  return total / rows;
}

// Mean over elements of the numerically stable
// max(x,0) - x*y + log(1 + exp(-|x|)); gradient (sigmoid(x) - y) / count.
// Labels are 0/1, as int64 (synthetic data) or float.
double LossHead::binary_cross_entropy(const host::Tensor& labels) {
  const bool ints = labels.dtype == model::DType::kInt64;
  const size_t n = logits_.size();
  const auto* logits = static_cast<const float*>(logits_mem_.get_data_handle());
  auto* grad = static_cast<float*>(grad_mem_.get_data_handle());
  if ((ints ? labels.i.size() : labels.f.size()) != n)
    throw Error("oneDNN backend: labels do not match the " + std::to_string(n) +
                " logits");
  double total = 0;
  for (size_t i = 0; i < n; ++i) {
    const double x = logits[i];
    const double y = ints ? static_cast<double>(labels.i[i]) : labels.f[i];
    total += std::max(x, 0.0) - x * y + std::log1p(std::exp(-std::abs(x)));
    grad[i] = static_cast<float>((1.0 / (1.0 + std::exp(-x)) - y) / n);
  }
  return total / static_cast<double>(n);
}

host::Tensor LossHead::output() const {
  host::Tensor t;
  t.shape.assign(dims_.begin(), dims_.end());
  const auto* logits = static_cast<const float*>(logits_mem_.get_data_handle());
  t.f.assign(logits, logits + logits_.size());
  return t;
}

}  // namespace nnbench::engines::onednn
