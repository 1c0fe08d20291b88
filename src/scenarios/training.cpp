// Training to a target on real data (train/trainer.h), as a scenario: the
// case names the task; settings: data (dataset directory or file; the
// task's default location when absent), epochs, target, max_seconds,
// include_eval_time, latency, latency_items, save_weights (a file for the
// trained parameters), loop (steps, or framework: the framework's own
// training loop).
#include <fmt/core.h>

#include <cstdlib>

#include "data/dataset.h"
#include "results/limits.h"
#include "scenarios/scenario.h"
#include "train/task.h"
#include "train/trainer.h"
#include "util/error.h"

namespace nnbench::scenarios {
namespace {

double number(const std::string& key, const std::string& v) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0')
    throw Error("setting '" + key + "': '" + v + "' is not a number");
  return x;
}

double within(const std::string& key, const std::string& v, double lo,
              double hi) {
  const double x = number(key, v);
  if (!(x >= lo && x <= hi))
    throw Error(fmt::format("setting '{}': {} is not between {:g} and {:g}",
                            key, v, lo, hi));
  return x;
}

bool flag(const std::string& key, const std::string& v) {
  if (v == "true") return true;
  if (v == "false") return false;
  throw Error("setting '" + key + "': '" + v + "' is not true or false");
}

train::TrainOptions options_of(const Case& c, std::string& data) {
  train::TrainOptions o;
  const auto& b = c.request.options;
  o.seed = b.seed;
  o.device = b.device;
  o.threads = b.threads;
  o.precision = b.precision;
  o.contention = c.request.contention.rule;
  for (const auto& [k, v] : c.settings) {
    if (k == "data")
      data = v;
    else if (k == "epochs")
      o.epochs = static_cast<int>(within(k, v, 1, results::kMaxEpochs));
    else if (k == "target")
      o.target = number(k, v);
    else if (k == "max_seconds")
      o.max_seconds = number(k, v);
    else if (k == "include_eval_time")
      o.include_eval_time = flag(k, v);
    else if (k == "latency")
      o.latency = flag(k, v);
    else if (k == "latency_items")
      o.latency_items = static_cast<int64_t>(number(k, v));
    else if (k == "save_weights")
      o.save_weights = v;
    else if (k == "loop") {
      if (v != "steps" && v != "framework")
        throw Error("setting 'loop': '" + v + "' is not steps or framework");
      o.loop = v;
    } else
      throw Error("setting '" + k + "' is not one the training scenario takes");
  }
  return o;
}

class Training : public Scenario {
 public:
  std::string name() const override { return "training"; }
  // Each setting read as a case would read it, before any case runs.
  std::string settings_problem(
      const std::map<std::string, std::string>& settings,
      std::string* which) const override {
    for (const auto& [k, v] : settings) {
      Case c;
      c.settings = {{k, v}};
      std::string data;
      try {
        options_of(c, data);
      } catch (const Error& e) {
        *which = k;
        return e.what();
      }
    }
    return "";
  }
  std::string summary() const override {
    return "time to a target accuracy on real data (DAWNBench rules), "
           "optionally batch-1 latency of the trained model";
  }
  std::unique_ptr<results::Record> run(backend::Backend& b, const Case& c,
                                       const Context& ctx) override {
    try {
      if (ctx.group)
        throw results::RunError(
            results::State::kInvalidArgs,
            "time to accuracy runs one process (data-parallel training is "
            "the throughput scenario's)");
      std::string data;
      train::TrainOptions o = options_of(c, data);
      o.progress = ctx.progress;
      const train::Task& t = train::task(c.task);
      if (ctx.dataset && ctx.dataset->name == t.dataset)
        return std::make_unique<train::TrainRun>(
            train::train_task(b, t, *ctx.dataset, o));
      data::DatasetOptions dopt;
      dopt.seq_len = t.seq_len;
      const data::Dataset d = data::load_dataset(t.dataset, data, dopt);
      return std::make_unique<train::TrainRun>(train::train_task(b, t, d, o));
    } catch (...) {
      auto r = record_of(c);
      r->backend = b.name();
      r->backend_version = b.version();
      r->fail(results::classify(std::current_exception()));
      return r;
    }
  }
  std::unique_ptr<results::Record> empty_record(const Case& c) const override {
    return record_of(c);
  }
  bool runs_tasks() const override { return true; }
  double estimate_seconds(const Case&) const override { return -1; }
  DataNeed data_need(const Case& c) const override {
    DataNeed d{train::task(c.task).dataset, c.setting("data"),
               "[settings] data = PATH in a suite file (docs/suites.md) or "
               "--set data=PATH (data=synthetic times fixed-epoch tasks "
               "without the data), or nnbench train --task " +
                   c.task + " --data PATH"};
    const std::string target = c.setting("target");
    if (d.path == data::kSyntheticData &&
        (target.empty() ? train::task(c.task).target
                        : std::atof(target.c_str())) > 0)
      throw Error(train::time_to_accuracy_needs_real_data(c.task));
    return d;
  }

 private:
  static std::unique_ptr<train::TrainRun> record_of(const Case& c) {
    auto r = std::make_unique<train::TrainRun>();
    r->task = c.task;
    r->backend = c.request.backend;
    r->seed = c.request.options.seed;
    r->state = results::State::kFailed;
    return r;
  }
};

}  // namespace

std::unique_ptr<Scenario> make_training() {
  return std::make_unique<Training>();
}

}  // namespace nnbench::scenarios
