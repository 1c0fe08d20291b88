#include "results/training.h"

#include <cmath>

namespace nnbench::results {
using nlohmann::json;

namespace {

// A figure that was not counted (NaN) is null, never a number.
json figure(double x) { return std::isfinite(x) ? json(x) : json(); }
double figure_of(const json& v) {
  return v.is_null() ? std::nan("") : v.get<double>();
}

}  // namespace

json to_json(const TrainRun& r) {
  // Accuracy on synthetic data was not measured: null, never a number.
  const auto accuracy = [&](double a) {
    return r.synthetic_data ? json() : figure(a);
  };
  json epochs = json::array();
  for (const auto& e : r.epochs)
    epochs.push_back({{"epoch", e.epoch},
                      {"lr", e.lr},
                      {"train_seconds", e.train_seconds},
                      {"epoch_seconds", e.epoch_seconds},
                      {"eval_seconds", e.eval_seconds},
                      {"data_wait_seconds", e.data_wait_seconds},
                      {"loss", figure(e.loss)},
                      {"accuracy", accuracy(e.accuracy)},
                      {"val_loss", e.val_loss},
                      {"val_accuracy", accuracy(e.val_accuracy)},
                      {"wall_seconds", e.wall_seconds}});
  json j;
  write_record(r, j);
  j["task"] = r.task;
  j["seed"] = r.seed;
  j["target"] = r.target;
  j["init_seconds"] = r.init_seconds;
  j["start_unix_ms"] = r.start_unix_ms;
  j["time_to_target_seconds"] =
      r.state == State::kConverged ? json(r.time_to_target) : json();
  j["total_train_seconds"] = r.total_train_seconds;
  j["total_eval_seconds"] = r.total_eval_seconds;
  j["final_val_accuracy"] = accuracy(r.final_val_accuracy);
  j["data"] = r.synthetic_data ? "synthetic" : "real";
  j["loop"] = r.loop;
  j["latency"] = r.latency ? to_json(*r.latency) : json();
  j["epochs"] = epochs;
  return j;
}

std::string engine_label(const std::string& backend, const std::string& loop) {
  return loop == "framework" ? backend + " (framework loop)" : backend;
}

std::string engine_label(const TrainRun& r) {
  return engine_label(r.backend, r.loop);
}

json TrainRun::serialize() const { return to_json(*this); }

std::optional<double> priced_seconds(State state, bool valid,
                                     double time_to_target,
                                     double total_train_seconds) {
  if (!valid) return std::nullopt;
  if (state == State::kConverged) return time_to_target;
  if (state == State::kCompleted) return total_train_seconds;
  return std::nullopt;
}

std::optional<double> priced_seconds(const TrainRun& r) {
  return priced_seconds(r.state, r.validity.valid(), r.time_to_target,
                        r.total_train_seconds);
}

TrainRun train_run_from_json(const json& j) {
  TrainRun r;
  read_record(j, r);
  r.task = j.at("task");
  r.seed = j.at("seed");
  r.target = j.at("target");
  r.init_seconds = j.at("init_seconds");
  r.start_unix_ms = j.at("start_unix_ms");
  const json& t = j.at("time_to_target_seconds");
  if (!t.is_null()) r.time_to_target = t;
  r.total_train_seconds = j.at("total_train_seconds");
  r.total_eval_seconds = j.at("total_eval_seconds");
  r.synthetic_data = j.value("data", std::string("real")) == "synthetic";
  r.loop = j.value("loop", std::string("steps"));
  const auto number = [](const json& v) {
    return v.is_null() ? 0.0 : v.get<double>();
  };
  r.final_val_accuracy = number(j.at("final_val_accuracy"));
  if (!j.at("latency").is_null()) r.latency = latency_from_json(j["latency"]);
  for (const auto& e : j.at("epochs"))
    r.epochs.push_back({e.at("epoch"), e.at("lr"), e.at("train_seconds"),
                        e.at("epoch_seconds"), e.at("eval_seconds"),
                        e.at("data_wait_seconds"), figure_of(e.at("loss")),
                        figure_of(e.at("accuracy")), e.at("val_loss"),
                        number(e.at("val_accuracy")), e.at("wall_seconds")});
  return r;
}

}  // namespace nnbench::results
