#pragma once
// Results are plain data; to_json below and the reporters (results/reporter.h)
// write them.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backend/optimizer.h"
#include "model/analysis.h"
#include "results/record.h"
#include "results/request.h"
#include "results/summary.h"
#include "results/training.h"
#include "results/verification.h"

namespace nnbench::results {

// Incremented when a field changes meaning or disappears (docs/results.md).
// 2: stats_seconds.median_ci95_lo/hi became median_ci_lo/hi with
// median_ci_coverage (below 95 % for fewer than 6 samples).
// 3: environment.cpu_model, isa and physical_cores became environment.cpu
// (hwloc and libcpuinfo: name, microarchitecture, ISA, caches, topology);
// every record names its kind; run --verify's verification is written.
// 4: a throughput record's peak_fraction, peak_gflops and
// theoretical_fraction are null where no peak was measured (a run on a
// GPU), where 3 wrote 0 until a30fc6d and null after it (a reader of 3
// fails on the null).
inline constexpr int kSchemaVersion = 4;
// The oldest version report_from_json reads (migrating it).
inline constexpr int kOldestReadableSchema = 2;

// A throughput measurement: time per mini-batch of one model on one backend
// at one batch size (bench/step_loop.h runs it).
// A self-timed backend's (framework worker's) steps against nnbench's
// clock: `chunks` calls took `wall_seconds` as the harness measured them,
// of which the worker's step times sum to `step_seconds`; the rest is the
// pipe and the worker's loop.
struct WorkerClock {
  int chunks = 0;
  double wall_seconds = 0, step_seconds = 0;
};

struct RunResult : Record {
  RunResult() { kind = "throughput"; }
  nlohmann::json serialize() const override;
  void file_into(Report& r) const override;
  Headline headline() const override {
    return {stats.median, samples_per_second};
  }

  model::Cost cost;
  RunRequest requested;
  int attempts = 1;  // runs the contention policy made

  double compile_seconds = 0;
  double data_seconds = 0;  // synthetic batch generation and upload
  int warmup_iterations = 0;
  double warmup_seconds = 0;
  std::vector<double> samples;  // seconds per mini-batch, in order
  Summary stats;
  // The stopping criterion that ran with all its parameters (defaults
  // filled in), and what ended the measurement: the criterion's name, or
  // the maximum that cut it short ("max_iterations", "max_seconds").
  std::string stop_criterion, stopped_by;
  std::map<std::string, double> stop_parameters;

  // From the median time per mini-batch.
  double samples_per_second = 0;
  double gflops = 0;         // train: training FLOPs; infer: forward FLOPs
  double peak_fraction = 0;  // of peak_gflops
  // The practical peak of the run's precision the fraction is of (0: none
  // measured for it), and the fraction of the CPU's theoretical peak.
  double peak_gflops = 0, theoretical_fraction = 0;
  double first_loss = 0, last_loss = 0;  // train only
  // When the run was asked to verify against the oracle first.
  std::optional<Verification> verification;
  // Data-parallel runs: the times above are the slowest rank's per step,
  // the throughput counts the global batch.
  std::optional<DistributedRun> distributed;
  std::optional<WorkerClock> worker_clock;  // self-timed backends only
};

using backend::optimizer_json;
// A request as recorded under "requested" (and as a case is handed to a
// child process), both ways.
nlohmann::json request_json(const RunRequest& r);
RunRequest request_from_json(const nlohmann::json& j);
void optimizer_from_json(const nlohmann::json& j, backend::Options& o);

nlohmann::json to_json(const RunResult& r);
RunResult run_result_from_json(const nlohmann::json& j);

// A results file: one process's runs, with the environment and peak.
struct Report {
  nlohmann::json environment;
  nlohmann::json peak;
  std::vector<RunResult> results;
  // Training records (suites of the training scenario), written into the
  // same "results" array after the others, each named by its kind.
  std::vector<TrainRun> training;
  // Records of kinds registered from elsewhere (results/kinds.h), as JSON.
  std::vector<nlohmann::json> other;
  std::string created_utc;  // ISO 8601
  void add(const Record& r) { r.file_into(*this); }
  // A suite's derived figures ([{name, group, x, value}]: speed-ups, costs
  // ...) and how its costs were priced, as the results store holds them.
  nlohmann::json derived = nlohmann::json::array();
  std::string price_note;
};

nlohmann::json to_json(const Report& r);
// Reads schema versions kOldestReadableSchema..kSchemaVersion, migrating
// older ones (3 needs none: its 0 or null peak figures read as not
// measured); any other version is an error naming it. Reads `nnbench
// train --out` files too (their records under "runs", no peak).
Report report_from_json(const nlohmann::json& j);
// Schema 2 -> 3, in place: the environment's CPU fields move into `cpu`
// (what schema 2 did not record stays empty; microarchitecture_source
// says so).
void migrate_2_to_3(nlohmann::json& file);

std::string utc_now_iso8601();

}  // namespace nnbench::results
