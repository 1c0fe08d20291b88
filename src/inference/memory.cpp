#include "inference/memory.h"

#include <fmt/core.h>

#include <cmath>
#include <string>

#include "data/synthetic.h"
#include "machine/environment.h"
#include "model/analysis.h"
#include "results/record.h"
#include "util/text.h"

namespace nnbench::inference {
double estimate_memory_bytes(const model::Model& m, const Settings& s,
                             const results::RunRequest& r) {
  const model::Cost c = model::analyze(m);
  const bool accuracy = s.mode == "accuracy";
  int64_t step = 1;  // the samples one engine step takes (loadgen_run.cpp)
  if (!accuracy && s.scenario == Scenario::kMultiStream)
    step = s.samples_per_query;
  if (!accuracy && s.scenario == Scenario::kOffline) step = r.batch;
  const double copies = s.instances;
  // Every copy holds the weights; inference frees activations as it goes,
  // the largest few coexisting: a quarter, as the training harness counts.
  const double weights = 4.0 * static_cast<double>(c.params) * copies;
  const double acts =
      4.0 * c.activation_floats * static_cast<double>(step) * 0.25 * copies;
  double samples = 0;
  if (!accuracy) {
    const double batches =
        std::ceil(static_cast<double>(s.performance_samples) / step);
    samples = batches * data::batch_bytes(m, step);
  }
  // Accuracy mode calibrates on at most the training split, loaded anyway.
  if (!accuracy && r.options.precision == "int8")
    samples += 2.0 * static_cast<double>(s.calibration_samples) *
               data::batch_bytes(m, 1);
  return weights + acts + samples;
}

void check_memory(const model::Model& m, const Settings& s,
                  const results::RunRequest& r) {
  if (!r.memory_check || r.options.device != "cpu") return;
  const double need = estimate_memory_bytes(m, s, r);
  const double have = machine::available_memory_bytes();
  if (have > 0 && need > 0.9 * have)
    throw results::RunError(
        results::State::kOom,
        fmt::format("estimated {} needed, {} available (disable with "
                    "--no-memory-check)",
                    util::bytes_text(need), util::bytes_text(have)),
        "estimate");
}

}  // namespace nnbench::inference
