#pragma once
// A suite file expanded into the cases it describes, each with a key that
// identifies its fully resolved configuration (the store skips stored keys
// on --resume).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "results/case_key.h"
#include "scenarios/scenario.h"
#include "study/suite_file.h"

namespace nnbench::study {

struct PlannedCase {
  std::string scenario;
  scenarios::Case c;
  int repetition = 0;  // 0-based
  std::string key;     // sha256 of case_json(*this): every resolved field
  // What the case is (results/case_key.h), as asked.
  results::CaseKey case_key() const;
  // "resnet-56 torch fp32 train b32 t2 r1": for progress lines and tables.
  std::string label() const;
  // The label without batch, threads and repetition: "resnet-56 torch fp32
  // train", what a batch or thread sweep varies over.
  std::string group() const;
};

struct PlanOptions {
  std::string default_backend;            // what "default" means
  std::vector<std::string> all_backends;  // what "all" means
  // Those of all_backends that only infer (ONNX Runtime, OpenVINO): "all"
  // leaves them out of training cases; named, they run and say so.
  std::vector<std::string> inference_only;
  // Seed, device, optimizer, contention policy and, where the suite file
  // does not set them, warm-up and stopping rules.
  results::RunRequest base;
  // Rules given on the command line replace the suite file's.
  std::optional<results::WarmupRule> warmup;
  std::optional<results::StopRule> stop;
  // --threads, --precision and --repetitions given on the command line
  // replace the suite's lists (its grid's and every [[model]]'s).
  std::optional<int> threads;
  std::optional<std::string> precision;
  // --device given on the command line (in base too): replaces the suite's.
  std::optional<std::string> device;
  std::optional<int> repetitions;
  std::optional<uint64_t> interleave_seed;  // shuffle the case order
  int usable_cpus = 1;                      // what a thread sweep goes up to
};

// Cases in file order (models x backends x precisions x modes x batches x
// threads x repetitions), or shuffled with the interleave seed.
std::vector<PlannedCase> plan(const SuiteSpec& s, const PlanOptions& o);

// 1, 2, 4, ... below `cpus`, then `cpus`.
std::vector<int> thread_sweep(int cpus);

// What a child process needs to run a case, and what its key hashes.
nlohmann::json case_json(const PlannedCase& p);
PlannedCase case_from_json(const nlohmann::json& j);

// The data sets the cases read (training tasks' data sets, LoadGen's
// accuracy mode), checked before the first case starts: one that has no
// path and no default, or whose file or folder does not exist, is an
// nnbench::Error naming the data set, the case and how to give it (a
// suite of 36 cases otherwise fails each of them the same way).
void check_datasets(const std::vector<PlannedCase>& cases);

// A rough duration: process start, compile, the warm-up and measurement
// minimums, and the steps they need at an assumed 50 GFLOP/s (fp32 on two
// cores). For the listing's ETA, never recorded as a measurement. -1 for
// training cases: their epochs, not the rules, decide, and nothing here
// knows how long an epoch takes.
double estimate_seconds(const PlannedCase& p);

}  // namespace nnbench::study
