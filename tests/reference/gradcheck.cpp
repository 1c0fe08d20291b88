#include "gradcheck.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "data/synthetic.h"

namespace nnbench::engines::reference::testing {
namespace {

constexpr double kStep = 1e-6;
// Central differences in double are good to ~1e-9 absolute at these loss
// scales; a wrong backward is off by far more.
constexpr double kRelTol = 1e-6, kAbsTol = 1e-9;

double loss_at(Network<double>& net, const Batch<double>& b) {
  net.forward(b, /*train=*/true);
  return net.loss();
}

// Checks d(loss)/d(values[k]) against `analytic` for every k; `name` labels
// failures. Returns the largest |analytic| seen.
double compare(Network<double>& net, const Batch<double>& b,
               std::vector<double>& values, const std::vector<double>& analytic,
               const std::string& name) {
  double largest = 0;
  int failures = 0;
  for (size_t k = 0; k < values.size(); ++k) {
    const double saved = values[k];
    values[k] = saved + kStep;
    const double up = loss_at(net, b);
    values[k] = saved - kStep;
    const double down = loss_at(net, b);
    values[k] = saved;
    const double numeric = (up - down) / (2 * kStep);
    const double tol =
        kRelTol * std::max(std::abs(numeric), std::abs(analytic[k])) + kAbsTol;
    if (std::abs(numeric - analytic[k]) > tol && ++failures <= 3)
      ADD_FAILURE() << name << "[" << k << "]: analytic " << analytic[k]
                    << ", numeric " << numeric;
    largest = std::max(largest, std::abs(analytic[k]));
  }
  EXPECT_EQ(failures, 0) << name;
  return largest;
}

}  // namespace

Batch<double> double_batch(const model::Model& m, int64_t n, uint64_t seed) {
  const host::Batch src = data::synthetic_batch(m, n, seed);
  Batch<double> b;
  if (m.input.dtype == model::DType::kFloat32) {
    b.x.shape = src.input.shape;
    b.x.data.assign(src.input.f.begin(), src.input.f.end());
  } else {
    b.ids.shape = src.input.shape;
    b.ids.data = src.input.i;
  }
  b.labels.shape = src.labels.shape;
  b.labels.data = src.labels.i;
  return b;
}

void check_gradients(const model::Model& m, int64_t batch) {
  Network<double> net(m, /*seed=*/5);
  Batch<double> b = double_batch(m, batch, /*seed=*/9);
  loss_at(net, b);
  net.backward(/*input_grad=*/true);
  const auto grads = net.grads();
  const auto input_grad = net.input_grad();
  double largest = 0;
  for (size_t i = 0; i < grads.size(); ++i)
    largest = std::max(largest, compare(net, b, net.params()[i].data,
                                        grads[i].data, net.specs()[i].name));
  if (m.input.dtype == model::DType::kFloat32) {
    ASSERT_EQ(input_grad.shape, b.x.shape);
    largest =
        std::max(largest, compare(net, b, b.x.data, input_grad.data, "input"));
  }
  EXPECT_GT(largest, 1e-4) << "every gradient is (nearly) zero";
}

}  // namespace nnbench::engines::reference::testing
