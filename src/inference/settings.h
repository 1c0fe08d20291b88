#pragma once
// A LoadGen run as nnbench asks for it: the scenario, its knobs, and how
// the engine serves it. Parsed from a suite case's settings table or the
// `nnbench infer` options (the same names), checked before anything runs;
// a bad value is an error naming the setting.
#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace nnbench::inference {

enum class Scenario { kSingleStream, kMultiStream, kServer, kOffline };
std::string scenario_name(Scenario s);
Scenario scenario_from_name(const std::string& name);  // throws, naming it

struct Settings {
  Scenario scenario = Scenario::kSingleStream;
  std::string mode = "performance";  // performance | accuracy
  bool find_peak = false;            // server: LoadGen's peak-QPS search
  // LoadGen's minimums (its defaults: 10 s and 100 queries; MLPerf's
  // submission rules ask 600 s) and optional maximums (0: none).
  double min_duration_seconds = 10;
  double max_duration_seconds = 0;
  int64_t min_queries = 100;
  int64_t max_queries = 0;
  // Server: Poisson arrivals at target_qps, the percentile's latency
  // bound (MLPerf's ResNet-50: 15 ms at p99).
  double target_qps = 0;  // 0: asked to be given (an error for server)
  double latency_bound_seconds = 0.015;
  int64_t samples_per_query = 8;  // multi-stream
  // Samples LoadGen may draw from (its performance sample count), loaded
  // before the run; synthetic in performance mode.
  int64_t performance_samples = 64;
  // Engine copies serving queries at once, each with the request's
  // threads; a query goes whole to one copy (offline: in batches).
  int instances = 1;
  // LoadGen's hints that size the run (expected latency, offline's
  // expected QPS): 0 = nnbench times a warm-up and sets them from it.
  double expected_seconds = 0;
  double expected_qps = 0;
  // Server with LoadGen's token latencies (MLPerf's LLM rule): each sample
  // is a prompt of `prompt` tokens generated to `new_tokens`; the first
  // token is reported as it comes (mlperf::FirstTokenComplete), and the run
  // is VALID when the percentile's time to first token and time per output
  // token are within their bounds (MLPerf's llama3.1-8b Server: 2000 ms
  // and 100 ms). Only for a model that generates (model/generation.h).
  bool token_latencies = false;
  int64_t prompt = 512, new_tokens = 128;
  double ttft_bound_seconds = 2.0, tpot_bound_seconds = 0.1;
  uint64_t seed = 1;  // LoadGen's four seeds, derived from this one
  // Accuracy mode: the data set whose test split is scored, and where it is.
  std::string data, data_dir;
  std::string weights;  // trained parameters (a tensor file), accuracy mode
  // int8: the samples post-training quantization calibrates on: the first
  // ones of the data set's training split in accuracy mode, seeded
  // synthetic ones in performance mode.
  int64_t calibration_samples = 500;
  // The names apply_setting was given: a setting the scenario does not
  // read is refused (check), never silently ignored.
  std::set<std::string> given;
};

// The settings a suite case or the CLI may give, by name, with a line of
// help each: min_duration_s max_duration_s min_queries max_queries
// target_qps latency_bound_ms samples_per_query performance_samples
// instances expected_latency_ms expected_qps mode find_peak data data_dir
// weights.
const std::map<std::string, std::string>& setting_help();

// Applies one named setting; throws nnbench::Error naming the setting and
// the value for an unknown name or a bad value.
void apply_setting(Settings& s, const std::string& name,
                   const std::string& value);
// Settings that contradict each other, or are missing (a server run
// without target_qps, accuracy mode without a data set), or that the
// scenario would ignore (target_qps offline): an error naming them.
void check(const Settings& s);

}  // namespace nnbench::inference
