#pragma once
// Measurement scenarios as plug-ins. A scenario turns one case into one
// record and never throws for a failure of the run (the record's state says
// it). The CLI and the suite runner find scenarios by name and know nothing
// of their insides, so a new kind of measurement (a sweep, data-parallel
// training, server load) is one file here and one line in
// scenario_registry.cpp.
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "data/dataset.h"
#include "distributed/group.h"
#include "machine/peak.h"
#include "results/record.h"
#include "results/request.h"

namespace nnbench::scenarios {

// One cell of a study: what to run and how. Which fields a scenario reads
// is its own business: throughput and latency take `model` (a zoo name) or
// `model_file`, training takes `task`; `settings` holds a scenario's own
// knobs (e.g. training's "data" directory); a scenario refuses any it does
// not know (state invalid_args, naming it).
struct Case {
  std::string model, model_file, task;
  results::RunRequest request;
  std::map<std::string, std::string> settings;
  // A setting's value as given, "" when absent.
  std::string setting(const std::string& key) const {
    const auto it = settings.find(key);
    return it == settings.end() ? std::string() : it->second;
  }
};

// What every case of one process shares: measured once.
struct Context {
  machine::Peak peak;
  // Data-parallel runs: this process's group (not owned), else null. Only
  // the throughput scenario takes one; the others refuse it.
  distributed::Group* group = nullptr;
  // Training: the task's dataset already loaded (not owned), so that runs
  // of several seeds read it once; null: the scenario loads it.
  const data::Dataset* dataset = nullptr;
  // Training: a progress line on stderr (the CLI's `train` sets it when
  // stderr is a terminal; suites never do).
  bool progress = false;
};

class Scenario {
 public:
  virtual ~Scenario() = default;
  virtual std::string name() const = 0;
  virtual std::string summary() const = 0;  // one line, for listings
  virtual std::unique_ptr<results::Record> run(backend::Backend& b,
                                               const Case& c,
                                               const Context& ctx) = 0;
  // What is wrong with a suite's settings table for this scenario ("" if
  // nothing is), checked before any case runs; `which` gets the setting
  // it is about ("" for a problem of the whole table). By default nothing
  // is checked here and a case refuses what it does not take when it runs.
  virtual std::string settings_problem(
      const std::map<std::string, std::string>& settings,
      std::string* which) const {
    return "";
  }
  // The record of this scenario's kind for a case that never produced
  // one (refused, crashed, timed out): what was asked filled in, state
  // failed. The suite runner makes every such record here.
  virtual std::unique_ptr<results::Record> empty_record(const Case& c) const;

  // What the rest of the program asks a scenario instead of comparing its
  // name (tests/unit/scenarios/kind_names_test.cpp keeps it that way).

  // Its cases name a training task (`nnbench train --list`), not a zoo
  // model or a model file.
  virtual bool runs_tasks() const { return false; }
  // Its cases infer whatever the mode axis says (LoadGen's scenarios,
  // generation, batch-1 latency): an inference-only engine takes part.
  virtual bool infers_only() const { return false; }
  // About how long a case takes (start-up, warm-up, measurement), for a
  // suite's time estimate; -1: unknown. By default a step loop's: the
  // model's operations at 50 GFLOP/s within the request's warm-up and
  // stopping rules.
  virtual double estimate_seconds(const Case& c) const;
  // The data set a case reads, checked by a suite before anything runs:
  // its name ("" for none), the path asked ("": its default place) and
  // how a user gives it. Throws nnbench::Error for a case that cannot run
  // on what it names (a target to reach on synthetic data).
  struct DataNeed {
    std::string name, path, how;
  };
  virtual DataNeed data_need(const Case& c) const { return {}; }
  // What is wrong with a command line's request for this scenario ("" if
  // nothing); `given` names the options the user set ("batch", "mode").
  virtual std::string request_problem(
      const results::RunRequest& r, const std::set<std::string>& given) const {
    return "";
  }
  // Lines a command prints after its table for a record of this scenario
  // (e.g. latency percentiles), "" for none.
  virtual std::string notes(const results::Record& r) const { return ""; }
};

using ScenarioFactory = std::function<std::unique_ptr<Scenario>()>;

// The built-in scenarios first (throughput, latency, training), then any
// registered later, in order.
std::vector<std::string> scenario_names();
std::unique_ptr<Scenario> make_scenario(const std::string& name);  // throws
// Adds a scenario from outside this folder (tests, later modules).
void register_scenario(const std::string& name, ScenarioFactory factory);

// The built-ins, for the registry.
std::unique_ptr<Scenario> make_throughput();
std::unique_ptr<Scenario> make_latency();
std::unique_ptr<Scenario> make_training();
std::unique_ptr<Scenario> make_generation();
// LoadGen's: single-stream multi-stream server offline.
std::unique_ptr<Scenario> make_loadgen(const std::string& name);

}  // namespace nnbench::scenarios
