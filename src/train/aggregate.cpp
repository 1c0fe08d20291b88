#include "train/aggregate.h"

#include <fmt/core.h>

#include <algorithm>

namespace nnbench::train {
namespace {

// "seed 2 not_converged, seed 3 failed": which runs, and how they ended.
std::string list_runs(const std::vector<const TrainRun*>& runs) {
  std::string out;
  for (const auto* r : runs)
    out += fmt::format("{}seed {} {}", out.empty() ? "" : ", ", r->seed,
                       results::state_name(r->state));
  return out;
}

// "seed 2 invalid: contended": runs whose measurement cannot be trusted.
std::vector<const TrainRun*> invalid_runs(const std::vector<TrainRun>& runs) {
  std::vector<const TrainRun*> out;
  for (const auto& r : runs)
    if (!r.validity.valid()) out.push_back(&r);
  return out;
}
std::string list_invalid(const std::vector<const TrainRun*>& runs) {
  std::string out;
  for (const auto* r : runs)
    out += fmt::format("{}seed {} {}", out.empty() ? "" : ", ", r->seed,
                       r->validity.summary());
  return out;
}

// Training time as the run counted it: the last epoch's cumulative time.
double counted_seconds(const TrainRun& r) {
  return r.epochs.empty() ? 0 : r.epochs.back().train_seconds;
}

}  // namespace

std::vector<uint64_t> seeds_for(uint64_t base, int n) {
  std::vector<uint64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(base + 1000003ull * i);
  return out;
}

Aggregate aggregate(const std::vector<TrainRun>& runs) {
  Aggregate a;
  a.runs = static_cast<int>(runs.size());
  if (runs.empty()) {
    a.reason = "no runs";
    return a;
  }
  std::vector<const TrainRun*> ok, missed;
  for (const auto& r : runs)
    (r.state == results::State::kConverged ? ok : missed).push_back(&r);
  a.converged = static_cast<int>(ok.size());
  // A contended run's time is inflated by the other process, not by the
  // backend: no aggregate is made from it, not even by dropping it.
  if (const auto bad = invalid_runs(runs); !bad.empty()) {
    a.reason = fmt::format("{} of {} runs invalid ({})", bad.size(), a.runs,
                           list_invalid(bad));
    return a;
  }
  std::sort(ok.begin(), ok.end(), [](const TrainRun* x, const TrainRun* y) {
    if (x->time_to_target != y->time_to_target)
      return x->time_to_target < y->time_to_target;
    return x->seed < y->seed;
  });
  const bool drop = a.runs >= 3;
  if (missed.size() > (drop ? 1u : 0u)) {
    a.reason = fmt::format("{} of {} runs did not converge ({})", missed.size(),
                           a.runs, list_runs(missed));
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

std::optional<cost::PricedTime> priced_training_time(
    const std::vector<TrainRun>& runs, const Aggregate& agg, bool eval_counted,
    std::string* why_not) {
  const std::string counted =
      eval_counted ? "evaluation included" : "evaluation not counted";
  if (runs.empty()) {
    *why_not = "no training cost: no runs";
    return std::nullopt;
  }
  if (runs.front().target > 0) {
    if (!agg.valid) {
      *why_not =
          "no training cost: the target was not reached (" + agg.reason + ")";
      return std::nullopt;
    }
    const std::string runs_used =
        agg.runs == 1 ? "one run"
                      : fmt::format("mean of {} of {} runs{}",
                                    agg.kept_seeds.size(), agg.runs,
                                    agg.runs >= 3 ? " (MLPerf: fastest and "
                                                    "slowest dropped)"
                                                  : "");
    return cost::PricedTime{
        agg.mean_time_to_target,
        fmt::format("time to target, {}, {}", runs_used, counted)};
  }
  if (const auto bad = invalid_runs(runs); !bad.empty()) {
    *why_not = fmt::format("no training cost: {} of {} runs invalid ({})",
                           bad.size(), runs.size(), list_invalid(bad));
    return std::nullopt;
  }
  std::vector<const TrainRun*> incomplete;
  double sum = 0;
  for (const auto& r : runs) {
    if (r.state != results::State::kCompleted) incomplete.push_back(&r);
    sum += counted_seconds(r);
  }
  if (!incomplete.empty()) {
    *why_not =
        fmt::format("no training cost: {} of {} runs did not complete ({})",
                    incomplete.size(), runs.size(), list_runs(incomplete));
    return std::nullopt;
  }
  return cost::PricedTime{
      sum / runs.size(),
      fmt::format(
          "training time of {} epochs, {}, {}", runs.front().epochs.size(),
          runs.size() == 1 ? "one run"
                           : fmt::format("mean of {} runs", runs.size()),
          counted)};
}

}  // namespace nnbench::train
