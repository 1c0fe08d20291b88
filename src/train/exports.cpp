#include "train/exports.h"

#include <fmt/core.h>

namespace nnbench::train {
namespace {

std::string mllog_line(int64_t time_ms, const std::string& type,
                       const std::string& key, const nlohmann::json& value,
                       nlohmann::json metadata = nlohmann::json::object()) {
  metadata["file"] = "nnbench";
  const nlohmann::json j = {{"namespace", ""},    {"time_ms", time_ms},
                            {"event_type", type}, {"key", key},
                            {"value", value},     {"metadata", metadata}};
  return ":::MLLOG " + j.dump() + "\n";
}

}  // namespace

std::string dawnbench_tsv(const TrainRun& r) {
  std::string out = "epoch\thours\ttop1Accuracy\n";
  for (const auto& e : r.epochs)
    out += fmt::format("{}\t{:.8f}\t{:.2f}\n", e.epoch, e.train_seconds / 3600,
                       e.val_accuracy * 100);
  return out;
}

nlohmann::json dawnbench_entry(const TrainRun& r, const std::string& hardware,
                               const cost::Price* price) {
  nlohmann::json j = {
      {"version", "v1.0"},
      {"author", "nnbench"},
      {"framework", r.backend_version},
      {"codeURL", ""},
      {"model", r.model},
      {"hardware", hardware},
      {"timestamp", ""},
      {"task", r.task},
      {"targetAccuracy", r.target},
      {"reached", r.state == "converged"},
      {"timeToAccuracyHours", r.state == "converged"
                                  ? nlohmann::json(r.time_to_target / 3600)
                                  : nlohmann::json()},
      {"misc", {{"seed", r.seed}, {"model_hash", r.model_hash}}}};
  if (price) {
    j["costPerHour"] = price->usd_per_hour;
    j["misc"]["price_source"] = price->source;
  }
  return j;
}

std::string mllog(const TrainRun& r) {
  const int64_t t0 = r.start_unix_ms;
  std::string out =
      mllog_line(t0, "POINT_IN_TIME", "submission_benchmark", r.task);
  out += mllog_line(t0, "POINT_IN_TIME", "seed", r.seed);
  out += mllog_line(t0, "INTERVAL_START", "run_start", nullptr);
  double last = 0;
  for (const auto& e : r.epochs) {
    const nlohmann::json md = {{"epoch_num", e.epoch}};
    out += mllog_line(t0 + int64_t(last * 1000), "INTERVAL_START",
                      "epoch_start", nullptr, md);
    const int64_t end = t0 + int64_t(e.wall_seconds * 1000);
    out += mllog_line(end, "INTERVAL_END", "epoch_stop", nullptr, md);
    out +=
        mllog_line(end, "POINT_IN_TIME", "eval_accuracy", e.val_accuracy, md);
    last = e.wall_seconds;
  }
  out +=
      mllog_line(t0 + int64_t(last * 1000), "INTERVAL_END", "run_stop", nullptr,
                 {{"status", r.state == "converged" || r.state == "completed"
                                 ? "success"
                                 : "aborted"}});
  return out;
}

}  // namespace nnbench::train
