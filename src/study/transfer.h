#pragma once
// Runs moved between stores whole: `nnbench results export --format json`
// writes one, `nnbench results import` brings runs made elsewhere (another
// machine's store or its exports) into this one, ids, times and machine
// (the run's environment) kept. Importing is idempotent: a run already
// here with the same content is skipped; one with the same id and other
// content is an error naming both, and nothing is written.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "study/store.h"

namespace nnbench::study {

// One run with everything the store keeps of it.
struct RunCopy {
  RunRow run;
  std::vector<ResultRow> results;
  std::vector<DerivedRow> derived;
  std::string from;  // where it was read: "FILE" or "FILE (run ID)"
};

RunCopy read_run(Store& s, const std::string& id, const std::string& from);
// The whole run as JSON (what `results export --format json` writes).
nlohmann::json run_json(const RunCopy& c);
// A run from run_json's JSON; nnbench::Error naming `from` and the field
// when it is not one.
RunCopy run_from_json(const nlohmann::json& j, const std::string& from);

// Every run in FILE: a results store (SQLite) or a JSON export of one run.
// nnbench::Error when it is neither, naming the file.
std::vector<RunCopy> read_runs(const std::string& file);

struct Imported {
  std::string id, from;
  nlohmann::json environment;
  size_t results = 0;
  bool known = false;  // already in the store with the same content
};

// Every run of every file into `into`, one file in memory and in one
// transaction at a time: each file whole or, at its first problem (not a
// store or an export, an id already there or earlier among the files with
// other content), not at all, and nothing after it; nnbench::Error naming
// both places and what the files before it added. A run already there
// with the same content is `known` and adds nothing.
std::vector<Imported> import_runs(Store& into,
                                  const std::vector<std::string>& files);

}  // namespace nnbench::study
