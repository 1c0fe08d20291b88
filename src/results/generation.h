#pragma once
// The record of generating text token by token (bench/generation.h times
// it), with the figures the serving benchmarks report: time to first token
// (the prompt through the model and the first new token out), time per
// output token and inter-token latency (each later token), prefill and
// generation tokens/s (llama-bench's pp and tg), and the fraction of the
// memory-bandwidth ceiling a decoding step reaches.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "results/record.h"
#include "results/request.h"
#include "results/summary.h"

namespace nnbench::results {

// What a generation asks; llama-bench's pp512/tg128 at batch 1 by default.
struct GenerationRequest {
  int64_t batch = 1, prompt = 512, new_tokens = 128;
  int warmup = 1;       // whole generations run first, untimed
  int repetitions = 5;  // timed generations
};

// Bounds, checked before anything is allocated.
inline constexpr int64_t kMaxGenerationBatch = 1024;
inline constexpr int64_t kMaxGenerationTokens = 65536;  // prompt, new tokens
inline constexpr int kMaxGenerationRepetitions = 1000;
inline constexpr int kMaxGenerationWarmup = 100;
// "" when `r` is within them (new_tokens >= 2: a time per output token
// needs a token after the first), else the first problem naming the field.
std::string generation_request_problem(const GenerationRequest& r);

// A percentile of the inter-token latencies with its distribution-free
// 95 % interval (bench/statistics.h quantile_ci).
struct Percentile {
  double value = 0;
  Interval ci;
};

// Decoding reads every weight once per step: tokens/s per row is bounded by
// bandwidth / bytes of weights.
struct Ceiling {
  double bandwidth_gbs = 0;  // `kernel`'s at the run's threads: the best
  std::vector<double> measured_gbs;  // the whole ones, before and after
  int threads = 0;
  double steps_per_second = 0;  // bandwidth / weight_bytes
  double fraction = 0;          // the median steps/s over that
  // The read bandwidth measured right before the first timed repetition
  // and after each, on the host: more measurements of what the machine
  // gave in the run's own minutes, so more chances to find its best (empty
  // where they were not measured, as before they were).
  std::vector<double> between_gbs;
  // The pages the best whole measurement's arrays asked for and the
  // kernel's huge page mode (machine::Bandwidth::pages); empty where not
  // recorded (a device's, records written before).
  std::string pages;
  // The bandwidth kernel: "read" (a sum over one array); records written
  // before it was named used STREAM's "triad".
  std::string kernel = "read";
  // Where the bandwidth was measured: empty for the host (nnbench's own
  // kernel at `threads`), else the device the engine generated on (its
  // worker's kernel on that device's memory; threads 0).
  std::string device;
};

struct GenerationRun : Record {
  GenerationRun() { kind = "generation"; }
  nlohmann::json serialize() const override;
  Headline headline() const override;

  RunRequest requested;  // backend, threads, precision, seed
  GenerationRequest asked;
  // Raw times, seconds: one time to first token per repetition, and each
  // repetition's new_tokens - 1 inter-token latencies.
  std::vector<double> ttft_seconds;
  std::vector<std::vector<double>> itl_seconds;
  // Over the repetitions: time to first token, and time per output token
  // (each repetition's mean inter-token latency).
  Summary ttft, tpot;
  Percentile itl_p50, itl_p90, itl_p99;     // over every later token
  double prefill_tokens_per_second = 0;     // batch * prompt / median TTFT
  double generation_tokens_per_second = 0;  // batch / median TPOT
  double weight_bytes = 0;  // read per decoding step (model/generation.h)
  std::optional<Ceiling> ceiling;  // absent: bandwidth not measured
  std::string no_ceiling;  // why the ceiling is absent ("" if it is not)
  // Row 0's new tokens (greedy: every repetition gives the same ones).
  std::vector<int64_t> tokens;
};

nlohmann::json to_json(const GenerationRequest& r);
GenerationRequest generation_request_from_json(const nlohmann::json& j);
GenerationRun generation_run_from_json(const nlohmann::json& j);

}  // namespace nnbench::results
