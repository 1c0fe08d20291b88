#pragma once
// The harness: compiles, prepares data untimed, warms up, measures until the
// stopping rule holds, and turns every failure into a result state.
#include "backend/backend.h"
#include "distributed/group.h"
#include "machine/peak.h"
#include "model/model.h"
#include "results/request.h"
#include "results/result.h"

namespace nnbench::bench {

// Never throws for failures of the run itself: those become the result's
// state (oom, unimplemented, invalid_args, failed) with a message.
// With a group, this process is one rank of a data-parallel run
// (request.distributed): every rank calls run() with the same request;
// they check that, train on their shards in lockstep and agree on when to
// stop; every rank returns the whole run's record.
results::RunResult run(backend::Backend& backend, const model::Model& m,
                       const results::RunRequest& request,
                       const machine::Peak& peak,
                       distributed::Group* group = nullptr);

// A result that was not measured, with its state and why.
results::RunResult failed_result(backend::Backend& backend,
                                 const model::Model& m,
                                 const results::RunRequest& request,
                                 results::State state,
                                 const std::string& message);

// Bytes a run is estimated to need: weights, gradients and optimizer state,
// plus activations kept for the backward pass and the input batches.
double estimate_memory_bytes(const model::Model& m,
                             const results::RunRequest& r);

}  // namespace nnbench::bench
