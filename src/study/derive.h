#pragma once
// Figures derived from a run's stored results, as the studies print them:
// speed-up and parallel efficiency of a thread sweep against its 1-thread
// case (DLBench), samples/s against batch size (the cloud GPU study).
// Computed from valid ok results only, over the median of repetitions.
#include <string>
#include <vector>

#include "study/store.h"

namespace nnbench::study {

// The thread count a result ran with: effective.threads from its record
// (what `threads = 0` resolved to), else the requested count.
int threads_of(const ResultRow& r);

// Data-parallel results: their ranks (1 for one process) and engine ("" for
// one process), from the record.
int ranks_of(const ResultRow& r);
std::string engine_of(const ResultRow& r);

// The median of a non-empty list (the mean of the middle two when even).
double median_of(std::vector<double> v);

std::vector<DerivedRow> derive(const std::vector<ResultRow>& rows);

}  // namespace nnbench::study
