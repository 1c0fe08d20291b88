#pragma once
// The console's tables, one per kind of measure (results/kinds.h): step
// loops (throughput, latency), training runs, LoadGen's queries and
// generation.
#include <string>
#include <vector>

#include "results/generation.h"
#include "results/inference.h"
#include "results/result.h"

namespace nnbench::reporters {

// One row per step-loop run: what ran, its state and validity, the median
// with its interval, samples/s and the fraction of the peak.
std::string results_table(const std::vector<results::RunResult>& runs);
// The verdict lines under a suite's table: per model, the fastest engine
// and by how much (compare/verdict.h), then the engines far behind the
// fastest or with no valid time, and why; "" when no model was asked of two
// engines.
std::string verdict_lines(const std::vector<results::RunResult>& runs);
// Engines that cannot run here, once each with the reason.
std::string not_run_lines(const std::vector<results::RunResult>& runs);

// Training cases: what the throughput table cannot show.
std::string training_table(const std::vector<results::TrainRun>& runs);

// One row per LoadGen run: the scenario's figure (p90/p99 latency with its
// interval, or samples/s), LoadGen's verdict, accuracy where scored.
std::string inference_table(const std::vector<results::InferenceRun>& runs);
// Under it, per cell (model, scenario, precision, copies, threads, target
// QPS): the engine with the lowest percentile latency, ahead of the
// runner-up by how much or tied (overlapping 95 % intervals), offline the
// most samples/s; the engines more than 2x behind, and those with no
// figure and why; "" when no engine has a figure.
std::string loadgen_verdict(const std::vector<results::InferenceRun>& runs);

// One row per generation: time to first token and per output token with
// their intervals, the inter-token p90, tokens/s of prefill and of
// generation, and the fraction of the bandwidth ceiling.
std::string generation_table(const std::vector<results::GenerationRun>& runs);
// Under it, per cell (model, batch, prompt and new tokens, threads asked):
// the engine with the lowest median time per output token, ahead of the
// runner-up by how much or tied (overlapping 95 % intervals), and the
// engines with no time and why; "" when no engine has a time.
std::string generation_verdict(const std::vector<results::GenerationRun>& runs);
// A verdict cell's threads: "2 threads", "1 thread", "all threads" (0).
std::string threads_label(int threads);

}  // namespace nnbench::reporters
