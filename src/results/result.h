#pragma once
// Results are plain data; reporters (results/json.h, cli/table.h) write them.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/analysis.h"
#include "results/cpu_usage.h"
#include "results/request.h"
#include "results/summary.h"
#include "results/validity.h"

namespace nnbench::results {

// Incremented when a field changes meaning or disappears (docs/results.md).
// 2: stats_seconds.median_ci95_lo/hi became median_ci_lo/hi with
// median_ci_coverage (below 95 % for fewer than 6 samples).
inline constexpr int kSchemaVersion = 2;

enum class State { kOk, kOom, kUnimplemented, kInvalidArgs, kFailed };
std::string state_name(State s);
State state_from_name(const std::string& s);  // throws nnbench::Error

struct RunResult {
  // What ran.
  std::string model, model_hash, backend, backend_version;
  model::Cost cost;
  RunRequest requested;
  std::map<std::string, std::string> effective;

  State state = State::kOk;
  std::string message;  // why, when the state is not ok
  // Whether a finished run can be trusted (e.g. not contended), with the
  // operating system's view of its measured interval and the attempts the
  // contention policy made.
  Validity validity;
  CpuUsage cpu_usage;
  int attempts = 1;
  // For state oom, where it came from: "estimate" when the run was refused
  // because its estimated memory exceeded what was available (nothing was
  // allocated or run), "allocation" when an allocation really failed.
  // Empty for other states.
  std::string oom_source;

  double compile_seconds = 0;
  double data_seconds = 0;  // synthetic batch generation and upload
  int warmup_iterations = 0;
  double warmup_seconds = 0;
  std::vector<double> samples;  // seconds per mini-batch, in order
  Summary stats;

  // From the median time per mini-batch.
  double samples_per_second = 0;
  double gflops = 0;  // train: training FLOPs; infer: forward FLOPs
  double peak_fraction = 0;
  double first_loss = 0, last_loss = 0;  // train only
  // bench::to_json(Verification) when the run was asked to verify first;
  // null otherwise.
  nlohmann::json verification;
};

nlohmann::json optimizer_json(const backend::Options& o);
void optimizer_from_json(const nlohmann::json& j, backend::Options& o);

nlohmann::json to_json(const Validity& v);
Validity validity_from_json(const nlohmann::json& j);
nlohmann::json to_json(const CpuUsage& u);
CpuUsage cpu_usage_from_json(const nlohmann::json& j);

nlohmann::json to_json(const RunResult& r);
RunResult run_result_from_json(const nlohmann::json& j);

// A results file: one process's runs, with the environment and peak.
struct Report {
  nlohmann::json environment;
  nlohmann::json peak;
  std::vector<RunResult> results;
  std::string created_utc;  // ISO 8601
};

nlohmann::json to_json(const Report& r);
Report report_from_json(const nlohmann::json& j);

std::string utc_now_iso8601();

}  // namespace nnbench::results
