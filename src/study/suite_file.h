#pragma once
// A study as data: a TOML suite file describes a grid of cases (the product
// of lists, per-model overrides, exclusions) and the rules they run under.
// docs/suites.md documents the format; suites/ holds the shipped ones.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "results/request.h"

namespace nnbench::study {

// `threads = "sweep"`: 1, 2, 4, ... below the usable CPUs, then their count.
inline constexpr int kThreadSweep = -1;

// The lists a case is the product of. In a [[model]] table, the lists given
// replace the grid's for that model.
struct Axes {
  std::vector<std::string> backends, precisions, modes;
  std::vector<int64_t> batches;
  std::vector<int> threads;
  // Ranks of a data-parallel run ([distributed] names the engine); 1: one
  // process. Only in [grid]: the same for every model.
  std::vector<int> processes{1};
};

// [distributed]: how cases with processes > 1 run (docs/distributed.md).
struct DistributedRule {
  std::string engine;               // mpi or gloo
  std::string scaling = "strong";   // strong or weak
  bool overlap = false;             // all-reduce during backward (torch)
  int64_t bucket_bytes = 25 << 20;  // per all-reduce bucket
};

struct ModelOverride {
  std::string name;
  std::optional<std::vector<std::string>> backends, precisions, modes;
  std::optional<std::vector<int64_t>> batches;
  std::optional<std::vector<int>> threads;
};

// Drops every case whose fields equal all of these (unset: any).
struct Exclusion {
  std::optional<std::string> model, backend, precision, mode;
  std::optional<int64_t> batch;
  std::optional<int> threads;
};

struct Isolation {
  double timeout_seconds = 600;  // wall clock per case
  double memory_limit_gib = 0;   // address space per case; 0: none
};

// [cost]: training cases priced as a catalog instance (data/prices.json;
// pro rata to the threads used where the entry says so), each normalised
// to the case of the same task at `baseline_threads` (0: the most threads).
struct CostRule {
  std::string instance;
  int baseline_threads = 0;
};

// A name the file gives (a model, task, backend, precision or scenario)
// and where: "FILE:LINE:COLUMN".
struct NameAt {
  std::string kind, value, where;
};

struct SuiteSpec {
  std::string name, file, description;
  std::string scenario = "throughput";
  // The cases' device ("cuda:0"); --device on the command line wins.
  std::optional<std::string> device;
  // Models (throughput, latency) or tasks (training), in file order.
  std::vector<std::string> models;
  // "default": the --backend asked for, else the default backend;
  // "all": every built backend but the oracle.
  Axes grid{{"default"}, {"fp32"}, {"train"}, {32}, {0}};
  int repetitions = 1;
  std::vector<ModelOverride> overrides;
  std::vector<Exclusion> exclusions;
  results::WarmupRule warmup;
  results::StopRule stop;
  Isolation isolation;
  std::map<std::string, std::string> settings;  // handed to the scenario
  std::optional<CostRule> cost;
  std::optional<DistributedRule> distributed;
  std::vector<NameAt> names;  // every name given, for check_names
};

// Reads and checks a suite file. Every problem (TOML syntax, an unknown key,
// a wrong type, an empty list) is an nnbench::Error naming
// FILE:LINE:COLUMN.
SuiteSpec parse_suite_file(const std::string& path);

// Every name in the suite checked against what nnbench knows: models in
// the zoo, training tasks, registered scenarios, the precisions any backend
// may offer (fp32, bf16, fp16) and `backends` (the built ones; "all" and
// "default" always pass). The first unknown one is an nnbench::Error
// naming FILE:LINE:COLUMN and the known names. A model where the scenario
// wants a task, or the reverse, is unknown too.
void check_names(const SuiteSpec& s, const std::vector<std::string>& backends);

// The directory of the shipped suites: $NNBENCH_SUITES_DIR when set, else
// share/nnbench/suites beside an installed binary, else the source tree's
// suites/ for a binary in its build tree (util/paths.h).
std::string suites_dir();
// Shipped suite names (file names without .toml), sorted.
std::vector<std::string> shipped_suites();
// NAME (a shipped suite) or a path to a .toml file.
SuiteSpec load_suite(const std::string& name_or_file);

}  // namespace nnbench::study
