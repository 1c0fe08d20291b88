#include "results/inference.h"
#include "scenarios/scenario.h"
#include "util/error.h"

namespace nnbench::scenarios {
namespace {

using Table = std::vector<std::pair<std::string, ScenarioFactory>>;

// LoadGen's four come from the one list of their kinds.
Table builtins() {
  Table t = {
      {"throughput", make_throughput},
      {"latency", make_latency},
      {"training", make_training},
  };
  for (const auto& [name, traits] : results::inference_kinds())
    t.emplace_back(name, [name = name] { return make_loadgen(name); });
  t.emplace_back("generation", make_generation);
  return t;
}

Table& table() {
  static Table t = builtins();
  return t;
}

}  // namespace

std::vector<std::string> scenario_names() {
  std::vector<std::string> out;
  for (const auto& [name, f] : table()) out.push_back(name);
  return out;
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
