#pragma once
// DAWNBench's inference latency as recorded (train/latency.h measures it):
// batch size 1, one item at a time, with the accuracy of the timed
// predictions.
#include <cstdint>
#include <nlohmann/json.hpp>

namespace nnbench::results {

struct Latency {
  int64_t warmup_items = 0;  // inferred, untimed and unscored
  int64_t items = 0;         // 0: not measured
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;  // seconds
  double accuracy = 0;
};

nlohmann::json to_json(const Latency& l);
Latency latency_from_json(const nlohmann::json& j);

}  // namespace nnbench::results
