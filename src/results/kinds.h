#pragma once
// Record kinds made and read in one place. Each scenario's record type
// registers its kind names here (the built-ins in kinds.cpp, one line each;
// register_kind for a kind from elsewhere), and every reader (files, the
// store, a child process's output) goes through record_from_json, so no
// caller branches on kind strings or casts to find out what it holds.
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "results/record.h"

namespace nnbench::results {

// What a kind's records measure. Code that handles every kind (case keys,
// charts, comparisons, tables, the cost of a run) asks a record's kind for
// these instead of comparing kind names: a kind is named once, where it is
// declared (kinds.cpp, inference.cpp for LoadGen's), and its scenario
// (src/scenarios/) decides the rest; tests/unit/scenarios/kind_names_test.cpp
// fails on a kind name compared anywhere else.
enum class Measure {
  kOther,       // a kind registered from elsewhere: keyed by its name
  kSteps,       // time per step at a batch, train or infer (throughput)
  kLatency,     // batch-1 requests one at a time, percentiles (latency)
  kQueries,     // LoadGen's queries under its scenario's rules
  kTraining,    // a training run: seconds to a target or for its epochs
  kGeneration,  // tokens one at a time after a prompt (generation)
};

struct Traits {
  Measure measure = Measure::kOther;
  // LoadGen's: queries arrive at a target rate (server)...
  bool paced = false;
  // ...its latencies describe queries one by one (not offline's one query
  // of every sample)...
  bool query_latencies = true;
  // ...and samples/s is samples per query over the mean query latency
  // where LoadGen reports no rate (multi-stream).
  bool rate_from_mean_latency = false;
};

struct Kind {
  std::string name;
  std::function<std::unique_ptr<Record>()> make;  // an empty record
  std::function<std::unique_ptr<Record>(const nlohmann::json&)> read;
  Traits traits;
};

// Throws nnbench::Error for a kind already registered.
void register_kind(Kind k);
bool known_kind(const std::string& name);
// The kind's traits; an unknown name has the defaults (kOther).
Traits traits_of(const std::string& kind);
inline Measure measure_of(const Record& r) { return traits_of(r.kind).measure; }
// An empty record of the kind (its `kind` set); throws for an unknown one.
std::unique_ptr<Record> make_record(const std::string& kind);
// The record as the type its kind is made of (RunResult, TrainRun ...):
// the one checked downcast, for a caller that asked a scenario of a known
// kind. Throws nnbench::Error naming the kind it holds.
[[noreturn]] void throw_kind_mismatch(const std::string& kind);
template <typename T>
T& as(Record& r) {
  if (auto* t = dynamic_cast<T*>(&r)) return *t;
  throw_kind_mismatch(r.kind);
}
template <typename T>
const T& as(const Record& r) {
  if (auto* t = dynamic_cast<const T*>(&r)) return *t;
  throw_kind_mismatch(r.kind);
}

// The record a JSON object holds, by its "kind" ("throughput" when absent,
// as schema 2 wrote). Throws nnbench::Error naming an unknown kind.
std::unique_ptr<Record> record_from_json(const nlohmann::json& j);

}  // namespace nnbench::results
