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

struct Kind {
  std::string name;
  std::function<std::unique_ptr<Record>()> make;  // an empty record
  std::function<std::unique_ptr<Record>(const nlohmann::json&)> read;
};

// Throws nnbench::Error for a kind already registered.
void register_kind(Kind k);
bool known_kind(const std::string& name);
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

// The record a JSON object holds, by its "kind" ("throughput" when absent,
// as schema 2 wrote). Throws nnbench::Error naming an unknown kind.
std::unique_ptr<Record> record_from_json(const nlohmann::json& j);

}  // namespace nnbench::results
