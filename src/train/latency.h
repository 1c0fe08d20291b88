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

#include "backend/backend.h"
#include "data/dataset.h"
#include "results/latency.h"

namespace nnbench::train {

// Items inferred untimed before the timed pass (fewer if the set is smaller).
inline constexpr int64_t kLatencyWarmupItems = 10;

using results::Latency;  // the record: results/latency.h

Latency measure_latency(backend::Executable& exe, const data::Split& test,
                        const model::Model& m, int64_t max_items = 0);

}  // namespace nnbench::train
