// MLPerf's four inference scenarios, run by LoadGen itself (src/inference):
// single-stream, multi-stream, server, offline. A case's settings table
// holds LoadGen's knobs by name (inference/settings.h); an unknown one or a
// bad value is the record's invalid_args, naming it.
#include "inference/loadgen_run.h"
#include "model/model_file.h"
#include "model/zoo/zoo.h"
#include "scenarios/scenario.h"
#include "util/error.h"

namespace nnbench::scenarios {
namespace {

class LoadgenScenario : public Scenario {
 public:
  explicit LoadgenScenario(inference::Scenario s) : s_(s) {}
  std::string name() const override { return inference::scenario_name(s_); }
  bool infers_only() const override { return true; }
  std::string summary() const override {
    switch (s_) {
      case inference::Scenario::kSingleStream:
        return "LoadGen single-stream: one sample at a time, p90 latency";
      case inference::Scenario::kMultiStream:
        return "LoadGen multi-stream: 8 samples a query, p99 query latency";
      case inference::Scenario::kServer:
        return "LoadGen server: Poisson arrivals at target_qps, p99 under "
               "latency_bound_ms";
      case inference::Scenario::kOffline:
        return "LoadGen offline: every sample at once, samples/s";
    }
    return "";
  }
  std::unique_ptr<results::Record> run(backend::Backend& b, const Case& c,
                                       const Context& ctx) override {
    const std::string label = c.model.empty() ? c.model_file : c.model;
    try {
      if (ctx.group) throw Error("LoadGen's scenarios run in one process");
      if (c.model.empty() == c.model_file.empty())
        throw Error("give exactly one of a model name or a model file");
      inference::Settings s;
      s.scenario = s_;
      s.seed = c.request.options.seed;
      for (const auto& [k, v] : c.settings) inference::apply_setting(s, k, v);
      const model::Model m = c.model.empty()
                                 ? model::load_model_file(c.model_file)
                                 : model::zoo::get(c.model);
      return std::make_unique<results::InferenceRun>(
          inference::run(b, m, label, c.request, s, c.settings));
    } catch (...) {
      auto r = empty_record(c);
      r->backend = b.name();
      r->backend_version = b.version();
      r->fail(results::classify(std::current_exception()));
      return r;
    }
  }
  std::string settings_problem(
      const std::map<std::string, std::string>& settings,
      std::string* which) const override {
    inference::Settings s;
    s.scenario = s_;
    for (const auto& [k, v] : settings) {
      try {
        inference::apply_setting(s, k, v);
      } catch (const Error& e) {
        *which = k;
        return e.what();
      }
    }
    try {
      inference::check(s);
    } catch (const Error& e) {
      *which = "";
      return e.what();
    }
    return "";
  }
  // LoadGen runs its minimum duration (or until its minimum queries,
  // unknown here) after a warm-up of about a second.
  double estimate_seconds(const Case& c) const override {
    inference::Settings s;
    s.scenario = s_;
    try {
      for (const auto& [k, v] : c.settings) inference::apply_setting(s, k, v);
    } catch (const Error&) {
    }
    if (s.find_peak || s.mode == "accuracy") return -1;
    return 3 + s.min_duration_seconds;
  }
  DataNeed data_need(const Case& c) const override {
    if (c.setting("mode") != "accuracy") return {};
    return {c.setting("data"), c.setting("data_dir"),
            "[settings] data_dir = PATH"};
  }
  // --batch sizes offline's steps only; elsewhere it would change nothing.
  std::string request_problem(
      const results::RunRequest& r,
      const std::set<std::string>& given) const override {
    if (!given.count("batch") || s_ == inference::Scenario::kOffline) return "";
    return "--batch " + std::to_string(r.batch) +
           " is read by the offline scenario only, not by " + name() +
           " (--scenario " + name() + "): leave it out or change the scenario";
  }
  std::unique_ptr<results::Record> empty_record(const Case& c) const override {
    auto r = std::make_unique<results::InferenceRun>();
    r->kind = name();
    r->model = c.model.empty() ? c.model_file : c.model;
    r->backend = c.request.backend;
    r->requested = c.request;
    r->settings = c.settings;
    r->state = results::State::kFailed;
    return r;
  }

 private:
  inference::Scenario s_;
};

}  // namespace

std::unique_ptr<Scenario> make_loadgen(const std::string& name) {
  return std::make_unique<LoadgenScenario>(inference::scenario_from_name(name));
}

}  // namespace nnbench::scenarios
