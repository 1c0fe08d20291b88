#pragma once
// The record of an inference run under MLPerf's LoadGen (src/inference):
// one of LoadGen's four scenarios on one engine, LoadGen's own verdict
// (VALID or INVALID, with its reasons) and figures, nnbench's interval for
// the scenario's latency percentile, and, in accuracy mode, the score over
// a real test set.
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "results/kinds.h"
#include "results/record.h"
#include "results/request.h"
#include "results/result.h"
#include "results/summary.h"

namespace nnbench::results {

// The LoadGen scenarios' record kinds, in LoadGen's order, with their
// traits: single-stream multi-stream server offline.
const std::vector<std::pair<std::string, Traits>>& inference_kinds();

// LoadGen's token latencies (server with token_latencies): at the run's
// percentile, the time to first token and the time per output token
// (each sample's (latency - first token) / (tokens - 1)), their bounds,
// and tokens/s as completed.
struct TokenLatencies {
  int64_t prompt = 0, new_tokens = 0;
  double ttft_bound = 0, tpot_bound = 0;  // seconds
  double ttft = 0, tpot = 0;              // at the percentile, seconds
  double ttft_mean = 0, tpot_mean = 0;
  double tokens_per_second = 0;
};

struct InferenceRun : Record {
  InferenceRun() { kind = "single-stream"; }
  nlohmann::json serialize() const override;
  Headline headline() const override;

  RunRequest requested;  // backend, options (threads, precision, seed), batch
  // The scenario's own settings as asked (name -> value, as given).
  std::map<std::string, std::string> settings;
  std::string mode = "performance";  // performance | accuracy | find-peak
  int instances = 1;                 // engine copies serving queries
  int64_t padded_samples = 0;        // batch slots run empty (offline tail)
  // LoadGen as it ran: its version, the settings it used (its log's
  // "effective_*" entries, prefix dropped) and its verdict. An INVALID run
  // also carries a validity reason "loadgen".
  std::string loadgen_version;
  nlohmann::json loadgen_settings = nlohmann::json::object();
  bool loadgen_valid = false;
  std::vector<std::string> loadgen_reasons;
  std::string loadgen_summary;  // mlperf_log_summary.txt, as written

  // LoadGen's figures (seconds; NaN where the scenario has none).
  double samples_per_second = 0;
  double percentile = 0;  // the scenario's: 0.9 single-stream, 0.99 others
  double percentile_latency = 0;  // per sample; per query for multi-stream
  double early_stopping_latency =
      0;  // the percentile's early-stopping estimate
  double target_qps = 0, latency_bound = 0;           // server
  std::map<std::string, double> latency_percentiles;  // "50.00" -> s
  double mean_latency = 0, min_latency = 0, max_latency = 0;
  int64_t query_count = 0, sample_count = 0;
  // The percentile's distribution-free 95 % interval (order statistics),
  // from LoadGen's own latencies (per sample; per query for multi-stream),
  // read from its trace: LoadGen reports a point only.
  int64_t latency_samples = 0;
  Interval percentile_ci;
  std::optional<TokenLatencies> tokens;  // absent: whole samples timed

  // Accuracy mode: top-1 over every sample of the data set's test split.
  std::string dataset;
  int64_t scored_samples = 0;
  double accuracy = 0;
  // Below fp32 (int8, bf16): fp32's accuracy on the same engine, model and
  // samples, scored in the same run; a drop of more than 1 point makes
  // the record invalid ("accuracy_drop"), as MLPerf bounds it.
  double fp32_accuracy = 0;

  // DAWNBench's cost of 10,000 inferences at this scenario's throughput
  // (samples/s as LoadGen measured it; multi-stream: samples per query
  // over the mean query latency), priced by the hour; NaN: not priced.
  double usd_per_hour = NAN;
  std::string price_source;
  double usd_per_10k = NAN;
};

// Samples a second that a scenario's record stands for (its cost basis):
// LoadGen's samples/s, or for multi-stream samples per query over the mean
// query latency; NaN when the run has neither.
double cost_throughput(const InferenceRun& r);
// Sets the price and the cost of 10,000 inferences from it.
void price(InferenceRun& r, double usd_per_hour, const std::string& source);

nlohmann::json to_json(const InferenceRun& r);
// The LoadGen records among a report's records of other kinds.
std::vector<InferenceRun> inference_runs(
    const std::vector<nlohmann::json>& other);
InferenceRun inference_run_from_json(const nlohmann::json& j);

}  // namespace nnbench::results
