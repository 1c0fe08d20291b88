#include "report/source.h"

#include "results/kinds.h"

namespace nnbench::report {

void add_record(Source& s, const results::Record& r) {
  switch (results::measure_of(r)) {
    case results::Measure::kSteps:
    case results::Measure::kLatency:
      s.runs.push_back(results::as<results::RunResult>(r));
      break;
    case results::Measure::kTraining:
      s.training.push_back(results::as<results::TrainRun>(r));
      break;
    case results::Measure::kQueries:
      s.inference.push_back(results::as<results::InferenceRun>(r));
      break;
    case results::Measure::kGeneration:
      s.generation.push_back(results::as<results::GenerationRun>(r));
      break;
    case results::Measure::kOther:
      break;
  }
}

}  // namespace nnbench::report
