#pragma once
// Cost per training run, as the CPU-vs-GPU study tabulates it: each
// training case's time priced as a catalog instance (pro rata to the
// threads it used where the entry says its source priced that way), and
// time and cost normalised to a baseline case of the same task.
#include <optional>
#include <vector>

#include "cost/catalog.h"
#include "study/store.h"

namespace nnbench::study {

// The seconds a training record is charged for: its time to target when it
// converged, its whole training time when it completed its fixed epochs;
// none for a run that stopped short, missed its target or failed (its time
// is not the cost of a training run).
std::optional<double> priced_seconds(const ResultRow& r);

// Per group (task, backend, precision) and thread count, over the median
// of the repetitions: "train_seconds", "cost_usd", and against the case at
// `baseline_threads` (0: the most threads in the group) "relative_time" and
// "relative_cost". A group without its baseline gets no relative figures.
std::vector<DerivedRow> derive_costs(const std::vector<ResultRow>& rows,
                                     const cost::Instance& instance,
                                     int baseline_threads);

}  // namespace nnbench::study
