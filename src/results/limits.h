#pragma once
// Upper bounds on the numbers a user can give (command-line options, suite
// files, LoadGen settings), each checked before anything is allocated or
// any thread started. A value above one is a typo or a way to exhaust the
// machine, not a study: --threads 65536 crashed libgomp, and 10^8
// performance samples grew memory until the kernel killed nnbench.
// docs/limits.md lists every bound with its reason.
#include <cstdint>

namespace nnbench::results {

// Threads per engine (and CPUs in thread-like counts): 4x the largest
// servers' cores; libgomp segfaults long before 65536.
inline constexpr int kMaxThreads = 1024;
// Samples per step: twice the largest batch a shipped suite runs (32768).
inline constexpr int64_t kMaxBatch = 65536;
// Iterations a rule may ask for: each measured one keeps its time (8 bytes).
inline constexpr int64_t kMaxIterations = 10'000'000;
// Seconds any duration, timeout or pause may last: one week.
inline constexpr double kMaxSeconds = 7 * 24 * 3600.0;
// Samples loaded before a LoadGen run (performance and calibration samples),
// and the latency items of a training run's latency check.
inline constexpr int64_t kMaxSamples = 1'000'000;
// LoadGen query counts: 37x MLPerf's largest minimum (server, 270,336).
inline constexpr int64_t kMaxQueries = 10'000'000;
// Queries per second a server run may be asked to schedule, or offline's
// throughput hint: far above any single machine's inference rate.
inline constexpr double kMaxQps = 1e7;
// Repetitions of a case, seeds of a training task, contention retries.
inline constexpr int kMaxRepetitions = 1000;
// Epochs of a training run.
inline constexpr int kMaxEpochs = 100'000;

}  // namespace nnbench::results
