#include "train/aggregate.h"

#include <algorithm>

namespace nnbench::train {

std::vector<uint64_t> seeds_for(uint64_t base, int n) {
  std::vector<uint64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(base + 1000003ull * i);
  return out;
}

Aggregate aggregate(const std::vector<TrainRun>& runs) {
  Aggregate a;
  a.runs = static_cast<int>(runs.size());
  std::vector<const TrainRun*> ok, missed;
  for (const auto& r : runs)
    (r.state == "converged" ? ok : missed).push_back(&r);
  a.converged = static_cast<int>(ok.size());
  std::sort(ok.begin(), ok.end(), [](const TrainRun* x, const TrainRun* y) {
    return x->time_to_target < y->time_to_target;
  });
  const bool drop = a.runs >= 3;
  if (missed.size() > (drop ? 1u : 0u)) {
    a.reason = std::to_string(missed.size()) + " of " + std::to_string(a.runs) +
               " runs did not converge";
    return a;
  }
  if (drop) {
    a.dropped_seeds.push_back(ok.front()->seed);  // the fastest
    ok.erase(ok.begin());
    // The slowest: the run that did not converge, else the slowest one.
    if (!missed.empty()) {
      a.dropped_seeds.push_back(missed.front()->seed);
    } else {
      a.dropped_seeds.push_back(ok.back()->seed);
      ok.pop_back();
    }
  }
  double sum = 0;
  for (const auto* r : ok) {
    sum += r->time_to_target;
    a.kept_seeds.push_back(r->seed);
  }
  a.valid = !ok.empty();
  if (!a.valid) a.reason = "no run left after dropping";
  a.mean_time_to_target = a.valid ? sum / ok.size() : 0;
  return a;
}

}  // namespace nnbench::train
