#pragma once
// The harness of generation: prompts made untimed, warm-up generations,
// then timed ones: each prefill's time is a time to first token, each
// decoding step's an inter-token latency. Statistics as everywhere
// (bench/statistics.h); the ceiling from the machine's memory bandwidth.
#include <functional>
#include <optional>

#include "backend/backend.h"
#include "backend/generator.h"
#include "machine/bandwidth.h"
#include "model/model.h"
#include "results/generation.h"

namespace nnbench::bench {

// Seconds on a monotonic clock; tests pass a fake one.
using Seconds = std::function<double()>;
// The KV cache (keys and values of every attention layer for every row and
// position) and the weights of `copies` generators against the memory
// available, before anything is allocated (an engine that allocates its
// cache with malloc's overcommit would otherwise be killed in the middle of
// filling it): RunError oom, source "estimate". An engine may hold more
// (oneDNN: a second copy of the weights in its prompt build's layouts).
void check_generation_memory(const model::Model& m,
                             const results::GenerationRequest& g,
                             const results::RunRequest& request, int copies);
double steady_seconds();

// Runs `out.asked`'s generations on `g`, filling the raw times and row 0's
// tokens. Throws results::RunError (failed) when a repetition's tokens
// differ from the first's: greedy decoding of the same prompts must repeat.
// With `between`, calls it right before the first timed repetition and
// after each, outside the times (an engine that times itself is then
// asked for one repetition a call).
void time_generation(backend::Generator& g,
                     const std::vector<std::vector<int64_t>>& prompts,
                     results::GenerationRun& out,
                     const Seconds& now = steady_seconds,
                     const std::function<void()>& between = {});

// The figures from the raw times (summaries, percentiles with intervals,
// tokens/s) and, with bandwidth measurements, the ceiling (the highest
// read bandwidth of them, `between` included: the machine gave that much,
// so the fraction is not flattered by a slow moment) and the fraction of
// it. `between`: the read bandwidth measured before the first repetition
// and after each, 0 where one failed.
void summarize_generation(results::GenerationRun& r,
                          const std::vector<machine::Bandwidth>& measured,
                          const std::vector<double>& between = {});

// The machine's bandwidth at a thread count, measured before the
// generator is made and again after the generations (none when it is not
// measured).
using BandwidthAt = std::function<std::optional<machine::Bandwidth>(int)>;

// A read-bandwidth measurement at a thread count, quick enough to run
// between repetitions (machine::ReadProbe): made once a run, its GB/s each
// call. Given the bytes of weights a step reads; empty (or throwing) where
// the host's is not measured between them.
using ReadProbeAt = std::function<std::function<double()>(int, double)>;

// The whole case: the generator compiled, prompts made, timed, judged for
// contention, summarised. Never throws for a failure of the run: it
// becomes the record's state.
results::GenerationRun run_generation(backend::Backend& b,
                                      const model::Model& m,
                                      const results::RunRequest& request,
                                      const results::GenerationRequest& g,
                                      const BandwidthAt& bandwidth,
                                      const ReadProbeAt& probe_at = {});

}  // namespace nnbench::bench
