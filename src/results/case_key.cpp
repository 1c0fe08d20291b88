#include "results/case_key.h"

#include "results/kinds.h"

namespace nnbench::results {

std::string CaseKey::name(unsigned omit) const {
  std::string out = what;
  if (!(omit & kBackend)) out += " " + backend;
  if (!precision.empty()) out += " " + precision;
  out += " " + mode;
  if (!(omit & kRanks) && ranks > 1)
    out += " p" + std::to_string(ranks) + " " + engine;
  if (!(omit & kBatch) && batch > 0) out += " b" + std::to_string(batch);
  if (!(omit & kThreads) && !threads.empty()) out += " t" + threads;
  return out;
}

CaseKey key_of(const std::string& what, const std::string& scenario,
               const RunRequest& r) {
  CaseKey k;
  k.what = what;
  k.backend = r.backend;
  k.precision = r.options.precision;
  // Steps are keyed by their mode (train, infer); any other kind is a mode
  // of its own. A training run's batch is its task's, not a grid axis.
  const Measure m = traits_of(scenario).measure;
  k.mode = m == Measure::kSteps ? backend::mode_name(r.mode) : scenario;
  if (m != Measure::kTraining) k.batch = r.batch;
  k.threads = std::to_string(r.options.threads);
  if (!r.distributed.engine.empty() && r.distributed.processes > 1) {
    k.ranks = r.distributed.processes;
    k.engine = r.distributed.engine;
  }
  return k;
}

CaseKey key_of(const RunResult& r) {
  CaseKey k = key_of(r.model, r.kind, r.requested);
  k.backend = r.backend;
  if (r.effective.threads > 0) k.threads = std::to_string(r.effective.threads);
  // What ran: the ranks that measured (under a user's mpirun the request
  // does not know them).
  if (r.distributed && r.distributed->ranks > 1) {
    k.ranks = r.distributed->ranks;
    k.engine = r.distributed->engine;
  }
  return k;
}

CaseKey key_of(const TrainRun& r) {
  CaseKey k;
  k.what = r.task;
  k.backend = r.backend;
  k.precision = r.effective.precision;
  // The framework's own loop is another way to train: its own case.
  k.mode = r.loop == "framework" ? "training (framework loop)" : "training";
  if (r.effective.threads > 0) k.threads = std::to_string(r.effective.threads);
  return k;
}

}  // namespace nnbench::results
