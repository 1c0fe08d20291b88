#include "results/kinds.h"

#include <map>
#include <mutex>

#include "results/generation.h"
#include "results/inference.h"
#include "results/result.h"
#include "results/training.h"
#include "util/error.h"

namespace nnbench::results {
namespace {

template <typename T>
Kind kind_of(const std::string& name, T (*read)(const nlohmann::json&),
             Traits traits) {
  return {name,
          [name] {
            auto r = std::make_unique<T>();
            r->kind = name;
            return std::unique_ptr<Record>(std::move(r));
          },
          [read](const nlohmann::json& j) {
            return std::unique_ptr<Record>(std::make_unique<T>(read(j)));
          },
          traits};
}

struct Table {
  std::mutex mu;
  std::map<std::string, Kind> kinds;
  Table() {
    for (Kind k :
         {kind_of("throughput", run_result_from_json, {Measure::kSteps}),
          kind_of("latency", run_result_from_json, {Measure::kLatency}),
          kind_of("training", train_run_from_json, {Measure::kTraining}),
          kind_of("generation", generation_run_from_json,
                  {Measure::kGeneration})})
      kinds.emplace(k.name, std::move(k));
    for (const auto& [name, traits] : inference_kinds()) {
      Kind k = kind_of(name, inference_run_from_json, traits);
      kinds.emplace(name, std::move(k));
    }
  }
};

Table& table() {
  static Table t;
  return t;
}

const Kind& find(const std::string& name) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  const auto it = t.kinds.find(name);
  if (it == t.kinds.end()) {
    std::string known;
    for (const auto& [n, k] : t.kinds) known += " " + n;
    throw Error("unknown record kind '" + name + "'; known:" + known);
  }
  return it->second;
}

}  // namespace

void register_kind(Kind k) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  const std::string name = k.name;
  if (!t.kinds.emplace(name, std::move(k)).second)
    throw Error("record kind '" + name + "' is already registered");
}

bool known_kind(const std::string& name) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  return t.kinds.count(name) > 0;
}

Traits traits_of(const std::string& kind) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  const auto it = t.kinds.find(kind);
  return it == t.kinds.end() ? Traits{} : it->second.traits;
}

void throw_kind_mismatch(const std::string& kind) {
  throw Error("a record of kind '" + kind + "' is not the kind asked for");
}

std::unique_ptr<Record> make_record(const std::string& kind) {
  return find(kind).make();
}

std::unique_ptr<Record> record_from_json(const nlohmann::json& j) {
  return find(j.value("kind", "throughput")).read(j);
}

}  // namespace nnbench::results
