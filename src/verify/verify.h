#pragma once
// Same weights, same function: runs one batch through an oracle backend
// (the reference) and a candidate, and compares outputs, loss, parameter
// gradients after one training step, and parameters after the update.
#include <string>
#include <vector>

#include "backend/backend.h"
#include "model/model.h"
#include "results/verification.h"

namespace nnbench::verify {

// Error of a tensor: ||a - b||_2 / max(||b||_2, 1e-6), b the oracle's.
// Normwise, not elementwise: elements near zero (most gradients) do not
// inflate it, and neither do the few units of a deep ReLU network whose
// pre-activation sits within rounding noise of the kink and lands on the
// other side in another summation order (a real formula error moves the
// whole tensor, and the norm with it).
double max_relative_error(const host::Tensor& got, const host::Tensor& want);

struct Tolerances {
  double output = 0, loss = 0, gradient = 0, parameter = 0;
};
// fp32: outputs and loss 1e-4, updated parameters 1e-3, gradients 5e-2:
// float gradients of deep ReLU/BN networks differ from a double-precision
// run by 0.1-4 % in either backend (units at the ReLU kink); a formula
// error is off by far more. bf16: 5e-2, gradients 2.5e-1 (8-bit mantissa:
// rounding switches ReLU units and max-pool winners at small batches).
// Gradient and parameter norms are floored at 1e-3 of the largest of the
// model, for tensors that are zero in exact arithmetic. A parameter's
// tolerance adds the gradient's, scaled by the step's update over the
// tensor's norm: a batch-norm bias starts at zero, so after one step it is
// its update and carries the gradient's error (ResNet-56, seed 1, batch
// 2: TensorFlow, JAX and MXNet all differ from the oracle by 1-2 % in the
// gradients below one block and so by 1 % in those BN biases; batch 4 or
// seed 2 agree to 1e-5: a data-dependent kink, not a formula).
// int8 (inference engines' post-training quantization, calibrated on the
// checked batch itself): outputs 3.5e-1. Measured over the conformance
// cases (2026-11-25, Zen 5): 58 of 62 within 1e-1 (most 0.1-3 %); ONNX
// Runtime 15 % on a ceil-mode average pool and 31 % on AlexNet-R, OpenVINO
// 16 % on a lone ReLU and 15 % on a sigmoid: quantization's error on tiny,
// unrepresentative batches. A wrong formula (weights transposed, a layer
// skipped) is off by the order of 1: that is what this still catches.
// The tolerance each check used is in its record.
Tolerances tolerances_for(const std::string& precision);
// The tolerance of one parameter tensor after a step from `before` to the
// oracle's `after`: t.parameter + t.gradient * ||after - before|| /
// max(||after||, floor).
double parameter_tolerance(const Tolerances& t, const host::Tensor& after,
                           const host::Tensor& before, double floor);

// Row by row (the last dim), softmax of `low` against softmax of `fp32`:
// argmax agreement and mean KL(p_fp32 || p_low). Tensors of one shape.
results::Agreement agreement_of(const host::Tensor& low,
                                const host::Tensor& fp32);

// The record types live with the other results (results/verification.h).
using results::TensorCheck;
using results::Verdict;
using results::verdict_name;
using results::Verification;

struct VerifyOptions {
  int64_t batch = 4;
  uint64_t seed = 1;
  int threads = 0;
  std::string precision = "fp32";  // of the candidate; the oracle runs fp32
  std::string device = "cpu";      // of the candidate; the oracle's is cpu
};

// Dropout masks come from each backend's own generator, so verification
// runs a copy of the model with every dropout probability set to 0.
model::Model without_dropout(const model::Model& m);

Verification verify(backend::Backend& oracle, backend::Backend& candidate,
                    const model::Model& m, const VerifyOptions& options);

}  // namespace nnbench::verify
