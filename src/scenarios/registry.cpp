#include "results/kinds.h"
#include "scenarios/scenario.h"
#include "util/error.h"

namespace nnbench::scenarios {
namespace {

std::vector<std::pair<std::string, ScenarioFactory>>& table() {
  static std::vector<std::pair<std::string, ScenarioFactory>> t = {
      {"throughput", make_throughput},
      {"latency", make_latency},
      {"training", make_training},
      {"single-stream", [] { return make_loadgen("single-stream"); }},
      {"multi-stream", [] { return make_loadgen("multi-stream"); }},
      {"server", [] { return make_loadgen("server"); }},
      {"offline", [] { return make_loadgen("offline"); }},
  };
  return t;
}

}  // namespace

std::vector<std::string> scenario_names() {
  std::vector<std::string> out;
  for (const auto& [name, f] : table()) out.push_back(name);
  return out;
}

std::unique_ptr<results::Record> Scenario::empty_record(const Case& c) const {
  auto r = results::make_record(name());
  r->model = c.model.empty() ? c.model_file : c.model;
  r->backend = c.request.backend;
  r->state = results::State::kFailed;
  return r;
}

std::unique_ptr<Scenario> make_scenario(const std::string& name) {
  for (const auto& [n, f] : table())
    if (n == name) return f();
  std::string known;
  for (const auto& n : scenario_names())
    known += (known.empty() ? "" : ", ") + n;
  throw Error("unknown scenario '" + name + "'; known: " + known);
}

void register_scenario(const std::string& name, ScenarioFactory factory) {
  for (auto& [n, f] : table())
    if (n == name) throw Error("scenario '" + name + "' is already registered");
  table().emplace_back(name, std::move(factory));
}

}  // namespace nnbench::scenarios
