#include "reporters/training.h"

#include <fmt/core.h>

#include <cmath>

#include "results/kinds.h"
#include "results/result.h"
#include "util/atomic_file.h"
#include "util/text_table.h"

namespace nnbench::reporters {
namespace {

std::string pct(double x) { return fmt::format("{:.2f}", x * 100); }

double latency_mean(const train::TrainRun& r) {
  return r.latency ? r.latency->mean : 0;
}

// Costs of the training time that priced_training_time accepts (none for
// runs that missed their target) and of the first run's measured latency.
std::optional<cost::Costs> run_costs(const std::vector<train::TrainRun>& runs,
                                     const train::Aggregate& agg,
                                     const std::optional<cost::Price>& price,
                                     const train::TrainOptions& o) {
  if (!price || runs.empty()) return std::nullopt;
  std::string why_not;
  const auto t =
      train::priced_training_time(runs, agg, o.include_eval_time, &why_not);
  return cost::costs(*price, t, why_not, latency_mean(runs.front()));
}

nlohmann::json task_json(const train::Task& t) {
  return {{"name", t.name},
          {"source", t.source},
          {"dataset", t.dataset},
          {"model", t.model},
          {"batch", t.batch},
          {"eval_batch", t.eval_batch},
          {"optimizer", results::optimizer_json(t.optimizer)},
          {"schedule",
           {{"kind", t.schedule.kind},
            {"lr", t.schedule.lr},
            {"gamma", t.schedule.gamma},
            {"step_epochs", t.schedule.step_epochs},
            {"warmup_fraction", t.schedule.warmup_fraction},
            {"final_fraction", t.schedule.final_fraction}}},
          {"target", t.target},
          {"epochs", t.epochs},
          {"augment", t.augment}};
}

void print_run(const train::TrainRun& r, const train::TrainOptions& o) {
  fmt::print("{} on {} (seed {}): {}{}\n", r.task, r.backend, r.seed,
             results::state_name(r.state),
             r.message.empty() ? "" : " (" + r.message + ")");
  util::Table t({"epoch", "lr", "train s", "epoch s", "data wait s", "loss",
                 "acc %", "val loss", "val acc %", "eval s"});
  for (const auto& e : r.epochs)
    t.add(
        {std::to_string(e.epoch), fmt::format("{:.4g}", e.lr),
         fmt::format("{:.2f}", e.train_seconds),
         fmt::format("{:.2f}", e.epoch_seconds),
         fmt::format("{:.3f}", e.data_wait_seconds),
         std::isfinite(e.loss) ? fmt::format("{:.4f}", e.loss) : "-",
         r.synthetic_data || !std::isfinite(e.accuracy) ? "-" : pct(e.accuracy),
         fmt::format("{:.4f}", e.val_loss),
         r.synthetic_data ? "-" : pct(e.val_accuracy),
         fmt::format("{:.2f}", e.eval_seconds)});
  if (!r.epochs.empty()) fmt::print("{}", t.str());
  for (const auto& why : r.validity.reasons)
    fmt::print("INVALID ({}): {}\n", why.reason, why.detail);
  if (r.state == results::State::kConverged && o.include_eval_time)
    fmt::print(
        "time to {}%: {:.2f} s of training and evaluation (evaluation "
        "{:.2f} s counted, --include-eval-time; init {:.2f} s not counted)\n",
        pct(r.target), r.time_to_target, r.total_eval_seconds, r.init_seconds);
  else if (r.state == results::State::kConverged)
    fmt::print(
        "time to {}%: {:.2f} s of training (init {:.2f} s and "
        "evaluation {:.2f} s not counted)\n",
        pct(r.target), r.time_to_target, r.init_seconds, r.total_eval_seconds);
  if (const auto& l = r.latency)
    fmt::print(
        "latency, batch 1, {} items after {} untimed: mean {:.3f} ms, p50 "
        "{:.3f}, p90 {:.3f}, p99 {:.3f} (percentiles interpolated "
        "linearly, type 7); accuracy {}%\n",
        l->items, l->warmup_items, l->mean * 1e3, l->p50 * 1e3, l->p90 * 1e3,
        l->p99 * 1e3, pct(l->accuracy));
}

void print_summary(const std::vector<train::TrainRun>& runs,
                   const train::Aggregate& agg,
                   const std::optional<cost::Price>& price,
                   const train::TrainOptions& o) {
  if (runs.front().target > 0) {
    if (agg.valid)
      fmt::print(
          "time to target over {} runs (MLPerf: fastest and slowest "
          "dropped when >= 3): {:.2f} s\n",
          agg.runs, agg.mean_time_to_target);
    else
      fmt::print("time to target: invalid ({})\n", agg.reason);
  }
  if (auto c = run_costs(runs, agg, price, o)) {
    fmt::print("cost at ${:.4f}/h [{}]: ", c->price.usd_per_hour,
               c->price.source);
    if (c->train_priced)
      fmt::print("training ${:.6f} ({})", c->train_usd, c->train_basis);
    else
      fmt::print("{}", c->train_basis);
    if (latency_mean(runs.front()) > 0)
      fmt::print("; 10,000 inferences ${:.6f}", c->usd_per_10k_inferences);
    fmt::print("\n");
  }
}

nlohmann::json train_report(const train::Task& task, const data::Dataset& d,
                            double load_seconds,
                            const nlohmann::json& environment,
                            const std::vector<train::TrainRun>& runs,
                            const train::Aggregate& agg,
                            const std::optional<cost::Price>& price,
                            const train::TrainOptions& o) {
  nlohmann::json jr = nlohmann::json::array();
  for (const auto& r : runs) jr.push_back(results::to_json(r));
  nlohmann::json out = {
      {"schema_version", results::kSchemaVersion},
      {"kind", "train"},
      {"created_utc", results::utc_now_iso8601()},
      {"environment", environment},
      {"task", task_json(task)},
      {"dataset",
       {{"name", d.name},
        {"source", d.source},
        {"train_size", d.train.size},
        {"test_size", d.test.size},
        {"normalisation", d.normalisation},
        {"integrity", d.integrity},
        {"synthetic", d.synthetic},
        {"load_seconds", load_seconds}}},
      {"timing",
       {{"include_eval_time", o.include_eval_time},
        {"max_seconds", o.max_seconds},
        {"contention",
         {{"action", o.on_contention},
          {"max_excess_load", o.contention.max_excess_load},
          {"max_steal_fraction", o.contention.max_steal_fraction},
          {"min_wall_seconds", o.contention.min_wall_seconds}}}}},
      {"runs", jr},
      {"aggregate",
       {{"valid", agg.valid},
        {"reason", agg.reason},
        {"runs", agg.runs},
        {"converged", agg.converged},
        // Only a valid aggregate has a mean time to target; else null.
        {"mean_time_to_target_seconds",
         agg.valid ? nlohmann::json(agg.mean_time_to_target)
                   : nlohmann::json()},
        {"kept_seeds", agg.kept_seeds},
        {"dropped_seeds", agg.dropped_seeds}}}};
  if (auto c = run_costs(runs, agg, price, o)) out["costs"] = cost::to_json(*c);
  return out;
}

}  // namespace

void TrainingConsole::record(const results::Entry& e) {
  runs_.push_back(results::as<train::TrainRun>(*e.record));
  print_run(runs_.back(), setup_.options);
}

void TrainingConsole::end(const results::Ending&) {
  if (!runs_.empty())
    print_summary(runs_, train::aggregate(runs_), setup_.price, setup_.options);
}

void TrainingFile::record(const results::Entry& e) {
  runs_.push_back(results::as<train::TrainRun>(*e.record));
}

void TrainingFile::end(const results::Ending&) {
  if (runs_.empty()) return;
  util::write_file_atomically(
      path_, train_report(*setup_.task, *setup_.dataset, setup_.load_seconds,
                          environment_, runs_, train::aggregate(runs_),
                          setup_.price, setup_.options)
                     .dump(2) +
                 "\n");
}

}  // namespace nnbench::reporters
