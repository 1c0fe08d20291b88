#pragma once
// DAWNBench's inference latency: batch size 1, one item at a time, over the
// full validation set, with the accuracy of the predictions that were timed.
// Timed: infer() + synchronize() of an item already in the backend's memory
// (the copy in and the read of the prediction are outside the clock).
// Before the first timed item, a short untimed warm-up infers the first few
// items, so one-off work (lazy allocation, kernel selection, cold caches at
// batch 1 after training at another size) is not read as latency.
// Percentiles are linear interpolation between order statistics (type 7 of
// Hyndman and Fan, numpy's default; bench::quantile).
#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "data/dataset.h"

namespace nnbench::train {

// Items inferred untimed before the timed pass (fewer if the set is smaller).
inline constexpr int64_t kLatencyWarmupItems = 10;

struct Latency {
  int64_t warmup_items = 0;  // inferred, untimed and unscored
  int64_t items = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;  // seconds
  double accuracy = 0;
};

Latency measure_latency(backend::Executable& exe, const data::Split& test,
                        const model::Model& m, int64_t max_items = 0);

nlohmann::json to_json(const Latency& l);

}  // namespace nnbench::train
