#pragma once
// What a data-parallel run did (distributed/, bench/step_loop.h), recorded
// beside its time per step: the engine, how the batch was split, and where each
// rank's step went (computing or inside the all-reduce).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nnbench::results {

// What was asked: engine "" runs one process.
struct DistributedRequest {
  std::string engine;  // "", "mpi", "gloo"
  int processes = 1;   // asked for (--processes; 0: ranks started by mpirun)
  // strong: the global batch (RunRequest::batch) is split over the ranks
  // (DLBench); weak: every rank runs RunRequest::batch (the cloud study).
  std::string scaling = "strong";
  // All-reduce buckets during backward where the backend can (LibTorch);
  // others reduce after backward and the result says so.
  bool overlap = false;
  // Gradients are packed into all-reduce buckets of at most this many
  // bytes (PyTorch DDP's default, 25 MiB); smaller buckets start earlier
  // under overlap and pay the engine's latency more often.
  int64_t bucket_bytes = 25 << 20;
};

struct RankTimes {
  int rank = 0;
  int threads = 0;               // effective, per rank
  double step_seconds = 0;       // median of this rank's own steps
  double allreduce_seconds = 0;  // median time inside the all-reduce
  double compute_seconds = 0;    // median of step minus all-reduce
};

struct DistributedRun {
  std::string engine, engine_version, scaling;
  int ranks = 1, local_ranks = 1;  // local: on this machine's CPUs
  int64_t global_batch = 0, batch_per_rank = 0;
  // How communication met computation, as it happened: after backward
  // (nothing hidden), or bucketed during backward, where allreduce_seconds
  // is only the exposed wait after backward.
  std::string overlap = "none: gradients all-reduced after backward";
  int64_t gradient_bytes = 0;  // all-reduced per step by each rank
  int allreduce_calls = 0;     // per step (buckets)
  int64_t bucket_bytes = 0;    // the bucket size asked for
  // From the slowest rank's median time inside the all-reduce: algorithm
  // bandwidth (bytes / time) and bus bandwidth (x 2 (P - 1) / P, what
  // each link carries in a ring; NCCL-tests' convention).
  double allreduce_seconds = 0;
  double algorithm_gbytes_per_second = 0, bus_gbytes_per_second = 0;
  std::vector<RankTimes> per_rank;
  int failed_rank = -1;  // the rank that failed first, when one did
};

nlohmann::json to_json(const DistributedRequest& d);
DistributedRequest distributed_request_from_json(const nlohmann::json& j);
nlohmann::json to_json(const DistributedRun& d);
DistributedRun distributed_run_from_json(const nlohmann::json& j);

}  // namespace nnbench::results
