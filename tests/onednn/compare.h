#pragma once
// Helpers for checking the oneDNN backend against the LibTorch backend on
// the same seeded weights and batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "backend/backend.h"
#include "model/model.h"

namespace nnbench::onednn_test {

using Tensors = std::map<std::string, host::Tensor>;

// What one backend computes from the initial weights: the inference
// output, then one training step's loss, gradients and updated parameters.
struct StepResult {
  host::Tensor output;
  double loss = 0;
  Tensors grads, params;
};

// With steps > 1, the loss, gradients and parameters are the last step's,
// and the output is inferred after training (running statistics).
inline StepResult run_step(backend::Backend& b, const model::Model& m,
                           const backend::Options& o, const host::Batch& batch,
                           int steps = 1) {
  auto exe = b.compile(m, o, backend::Shapes::train(batch.input.shape.at(0)));
  exe->load_batches({batch});
  StepResult r;
  if (steps == 1) {
    exe->infer(0);
    r.output = exe->output();
  }
  for (int i = 0; i < steps; ++i) exe->train_step(0);
  exe->synchronize();
  r.loss = exe->last_loss();
  r.grads = exe->gradients();
  r.params = exe->parameters();
  if (steps > 1) {
    exe->infer(0);
    r.output = exe->output();
  }
  return r;
}

// max |a - b| / max |b|: error relative to the tensor's scale.
inline double relative_error(const host::Tensor& a, const host::Tensor& b) {
  if (a.f.size() != b.f.size()) return INFINITY;
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.f.size(); ++i) {
    diff = std::max(diff, std::abs(double{a.f[i]} - b.f[i]));
    scale = std::max(scale, std::abs(double{b.f[i]}));
  }
  return scale > 0 ? diff / scale : diff;
}

// ||a - b|| / ||b||: insensitive to a few entries that differ a lot.
inline double relative_l2(const host::Tensor& a, const host::Tensor& b) {
  if (a.f.size() != b.f.size()) return INFINITY;
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.f.size(); ++i) {
    diff += (double{a.f[i]} - b.f[i]) * (double{a.f[i]} - b.f[i]);
    norm += double{b.f[i]} * b.f[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

// ||a|| / ||b||: the sizes of two tensors, whatever their directions.
inline double norm_ratio(const host::Tensor& a, const host::Tensor& b) {
  double na = 0, nb = 0;
  for (double x : a.f) na += x * x;
  for (double x : b.f) nb += x * x;
  return nb > 0 ? std::sqrt(na / nb) : (na > 0 ? INFINITY : 1.0);
}

// A gradient that rounding may legitimately move a lot (bf16 in nets whose
// ReLUs and max pools switch discretely, see agreement_test.cpp) must still
// be the same gradient: close in direction (relative L2 error below
// `max_l2`; a wrong layout, a flipped sign or an unrelated tensor gives 1 or
// more) and of the same size (norm ratio within a factor kMaxNormRatio; a
// gradient scaled by 0.01, or missing a 1/batch, is far outside). Returns
// what is wrong, or "" when it passes.
inline constexpr double kMaxNormRatio = 2.0;
inline std::string gross_gradient_error(const host::Tensor& got,
                                        const host::Tensor& want,
                                        double max_l2) {
  const double l2 = relative_l2(got, want), ratio = norm_ratio(got, want);
  std::string out;
  if (!(l2 < max_l2))
    out += "relative L2 error " + std::to_string(l2) +
           " >= " + std::to_string(max_l2);
  if (!(ratio < kMaxNormRatio && ratio > 1 / kMaxNormRatio))
    out += (out.empty() ? "" : "; ") + std::string("norm ratio ") +
           std::to_string(ratio) + " outside [0.5, 2]";
  return out;
}

// Tolerance for one tensor: a fixed value, or one per tensor name.
using Tolerance = std::function<double(const std::string&)>;

inline void expect_close(const Tensors& got, const Tensors& want,
                         const Tolerance& tolerance, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (const auto& [name, t] : want) {
    ASSERT_EQ(got.count(name), 1u) << what << " " << name;
    EXPECT_EQ(got.at(name).shape, t.shape) << what << " " << name;
    EXPECT_LT(relative_error(got.at(name), t), tolerance(name))
        << what << " " << name;
  }
}

// A copy of the model with dropout disabled: each backend draws its own
// masks, so only p = 0 is comparable.
inline model::Model without_dropout(model::Model m) {
  for (auto& l : m.layers)
    if (l.op == model::Op::kDropout) l.p = 0;
  return m;
}

// ReLU and max pooling switch discretely (a unit on or off, another
// argmax) when their input moves by a rounding error; tanh and average
// pooling move smoothly, so rounding changes the result only in proportion.
inline model::Model smooth(model::Model m) {
  for (auto& l : m.layers) {
    if (l.op == model::Op::kRelu) l.op = model::Op::kTanh;
    if (l.op == model::Op::kMaxPool2d) l.op = model::Op::kAvgPool2d;
  }
  return m;
}

}  // namespace nnbench::onednn_test
