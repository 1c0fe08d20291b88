// The defaults of every scenario: the record of a case that never made
// one, and a step loop's time estimate.
#include "scenarios/scenario.h"

#include <algorithm>

#include "model/analysis.h"
#include "model/zoo/zoo.h"
#include "results/kinds.h"
#include "util/error.h"

namespace nnbench::scenarios {

std::unique_ptr<results::Record> Scenario::empty_record(const Case& c) const {
  auto r = results::make_record(name());
  r->model = c.model.empty() ? c.model_file : c.model;
  r->backend = c.request.backend;
  r->state = results::State::kFailed;
  return r;
}

double Scenario::estimate_seconds(const Case& c) const {
  const auto& r = c.request;
  double step = 0.01;
  try {
    if (!c.model.empty()) {
      const model::Cost cost = model::analyze(model::zoo::get(c.model));
      const double flops = r.mode == backend::Mode::kTrain ? cost.train_flops
                                                           : cost.forward_flops;
      step = flops * static_cast<double>(r.batch) / 50e9;
    }
  } catch (const Error&) {
  }
  const double warm =
      std::min(r.warmup.max_seconds,
               std::max(r.warmup.min_seconds, r.warmup.min_iterations * step));
  const double measure =
      std::min(r.stop.max_seconds,
               std::max(r.stop.min_seconds, r.stop.min_iterations * step));
  return 1.5 + warm + measure;  // start, environment, peak and compile
}

}  // namespace nnbench::scenarios
