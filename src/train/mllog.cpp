// MLPerf training logs. Key names are mlcommons/logging's
// mlperf_logging/mllog/constants.py; which keys must appear, how often and in
// what order follows compliance_checker/training_*/common.yaml (one log per
// run: run_start, init_stop, train_samples ... are EXACTLY_ONE). Keys for
// settings constants.py has no name for follow its opt_<optimizer>_<param>
// pattern; the checker allows keys it does not know.
#include <fmt/core.h>

#include <cmath>

#include "train/exports.h"

namespace nnbench::train {
namespace {

using nlohmann::json;

class Log {
 public:
  void event(int64_t time_ms, const char* type, const std::string& key,
             const json& value, json metadata = json::object()) {
    metadata["file"] = "nnbench";
    const json j = {{"namespace", ""},    {"time_ms", time_ms},
                    {"event_type", type}, {"key", key},
                    {"value", value},     {"metadata", metadata}};
    text_ += ":::MLLOG " + j.dump() + "\n";
  }
  void point(int64_t t, const std::string& key, const json& value) {
    event(t, "POINT_IN_TIME", key, value);
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

int64_t ms(double seconds) { return std::llround(seconds * 1000); }

// The optimizer exactly as the recipe gives it to the backend (backends run
// it exactly or refuse it), in PyTorch's parameter names.
void optimizer_keys(Log& log, int64_t t, const backend::Options& o) {
  log.point(t, "opt_name", o.optimizer);
  log.point(t, "opt_weight_decay", o.weight_decay);
  if (o.optimizer == "sgd") {
    log.point(t, "opt_sgd_momentum", o.momentum);
    log.point(t, "opt_sgd_nesterov", o.nesterov);
  } else if (o.optimizer == "adam") {
    log.point(t, "opt_adam_beta_1", o.beta1);
    log.point(t, "opt_adam_beta_2", o.beta2);
    log.point(t, "opt_adam_epsilon", o.eps);
  } else if (o.optimizer == "rmsprop") {
    log.point(t, "opt_rmsprop_alpha", o.alpha);
    log.point(t, "opt_rmsprop_epsilon", o.eps);
    log.point(t, "opt_rmsprop_momentum", o.momentum);
  } else if (o.optimizer == "adadelta") {
    log.point(t, "opt_adadelta_rho", o.rho);
    log.point(t, "opt_adadelta_epsilon", o.eps);
  }
}

// The learning-rate schedule (train/schedule.h) over the epoch budget.
void schedule_keys(Log& log, int64_t t, const Schedule& s, int epochs) {
  log.point(t, "opt_base_learning_rate", s.lr);
  log.point(t, "opt_learning_rate_schedule", s.kind);
  if (s.kind == "step") {
    json bounds = json::array();
    for (double b = s.step_epochs; s.step_epochs > 0 && b < epochs;
         b += s.step_epochs)
      bounds.push_back(b);
    log.point(t, "opt_learning_rate_decay_factor", s.gamma);
    log.point(t, "opt_learning_rate_decay_boundary_epochs", bounds);
  }
  if (s.kind == "one-cycle") {
    // Warm-up from lr * final_fraction: MLPerf's warm-up factor is the
    // fraction of the base rate the warm-up starts from.
    log.point(t, "opt_learning_rate_warmup_epochs", s.warmup_fraction * epochs);
    log.point(t, "opt_learning_rate_warmup_factor", s.final_fraction);
  }
  if (s.kind == "one-cycle" || s.kind == "cosine")
    log.point(t, "opt_end_learning_rate", s.lr * s.final_fraction);
}

}  // namespace

std::string mllog(const TrainRun& r, const Task& recipe,
                  const ExportInfo& info) {
  const int64_t t0 = run_start_ms(r);
  const int64_t init = t0 - ms(r.init_seconds);
  Log log;
  // Submission facts first: submission_division sets the init time limit
  // that init_stop is checked against.
  log.point(init, "submission_benchmark", r.task);
  log.point(init, "submission_org", info.who.org);
  log.point(init, "submission_division", info.who.division);
  log.point(init, "submission_status", info.who.status);
  log.point(init, "submission_platform", info.who.platform);
  log.point(init, "submission_poc_name", info.who.author);
  log.point(init, "submission_poc_email", info.who.email);
  // Nothing is cleared: the dataset is read into memory once, before any
  // run and outside every timed region, so no cache changes what is timed.
  log.point(init, "cache_clear", false);
  log.event(init, "INTERVAL_START", "init_start", nullptr);
  log.point(init, "seed", r.seed);
  log.point(init, "global_batch_size", recipe.batch);
  log.point(init, "gradient_accumulation_steps", 1);
  log.point(init, "train_samples", info.train_samples);
  log.point(init, "eval_samples", info.eval_samples);
  optimizer_keys(log, init, recipe.optimizer);
  schedule_keys(log, init, recipe.schedule, recipe.epochs);
  log.event(t0, "INTERVAL_END", "init_stop", nullptr);
  log.event(t0, "INTERVAL_START", "run_start", nullptr);
  int64_t end = t0;
  for (const auto& e : r.epochs) {
    // wall_seconds is read at the end of the epoch's evaluation, which
    // follows its training loop.
    const json md = {{"epoch_num", e.epoch}};
    end = t0 + ms(e.wall_seconds);
    const int64_t eval0 = end - ms(e.eval_seconds);
    log.event(eval0 - ms(e.epoch_seconds), "INTERVAL_START", "epoch_start",
              nullptr, md);
    log.event(eval0, "INTERVAL_END", "epoch_stop", nullptr, md);
    log.event(eval0, "INTERVAL_START", "eval_start", nullptr, md);
    log.event(end, "POINT_IN_TIME", "eval_accuracy", e.val_accuracy, md);
    log.event(end, "INTERVAL_END", "eval_stop", nullptr, md);
  }
  // MLPerf's success means the target was reached; a fixed-epoch run has no
  // target and succeeds by completing.
  const bool ok = r.state == results::State::kConverged ||
                  r.state == results::State::kCompleted;
  log.event(end, "INTERVAL_END", "run_stop", nullptr,
            {{"status", ok ? "success" : "aborted"}});
  return log.text();
}

}  // namespace nnbench::train
