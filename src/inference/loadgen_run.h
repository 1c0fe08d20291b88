#pragma once
// One LoadGen run of one engine: the settings turned into LoadGen's, the
// engine's copies started and warmed up, LoadGen's StartTest with nnbench
// as the system under test, and LoadGen's log read back into the record.
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "backend/backend.h"
#include "inference/settings.h"
#include "model/model.h"
#include "results/inference.h"
#include "results/request.h"

namespace nnbench::inference {

// Never throws for a failure of the run (the record's state says it).
// `model_name` is what the record calls the model; `settings` as given,
// for the record (already applied to `s`).
results::InferenceRun run(backend::Backend& b, const model::Model& m,
                          const std::string& model_name,
                          const results::RunRequest& request, const Settings& s,
                          const std::map<std::string, std::string>& settings);

// LoadGen's detail log (mlperf_log_detail.txt): every ":::MLLOG {json}"
// line's key and value; a key logged twice keeps its last value. Lines
// that are not MLLOG entries are skipped.
nlohmann::json read_detail_log(const std::string& text);

// LoadGen's figures and verdict from its detail log (read_detail_log) into
// the record: latencies, throughput, early-stopping estimate, validity. A
// figure LoadGen did not give is NaN (null in JSON, "-" in text).
void read_figures(const nlohmann::json& log, const Settings& s,
                  results::InferenceRun& r);

// LoadGen's latencies from its trace (mlperf_log_trace.json), seconds:
// every "Sample" event's complete_ns (scheduled arrival to completion, the
// latency LoadGen's percentiles are of), or per query the largest of its
// samples' (multi-stream's query latency).
std::vector<double> read_trace_latencies(const std::string& text,
                                         bool per_query);

// A precision below fp32 that loses more than 1 point of top-1 against
// fp32's accuracy (both in the record) makes the record invalid.
void judge_accuracy(results::InferenceRun& r);

// LoadGen's version, as built into nnbench.
std::string loadgen_version();

}  // namespace nnbench::inference
