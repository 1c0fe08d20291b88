#pragma once
// A cost model of data-parallel training with ring all-reduce, to predict
// throughput and efficiency at rank counts nobody measured and to be checked
// against every count that was (the "Beyond one process" issue).
//
// Ring all-reduce of n bytes over P ranks (Patarasuk and Yuan 2009; Thakur,
// Rabenseifner and Gropp 2005): 2 (P - 1) steps, each a message of n / P
// bytes, so
//     T(P, n) = 2 (P - 1) alpha + 2 (P - 1) / P * n * beta
// with alpha the latency per step and beta the seconds per byte of a link
// (the reduction's arithmetic is folded into beta). At P = 2 this is
// 2 alpha + n beta: a straight line in n, fitted to measured all-reduce
// times of 2 ranks.
#include <vector>

namespace nnbench::scaling {

struct Link {
  double alpha = 0;  // seconds per ring step
  double beta = 0;   // seconds per byte
};

struct Sample {
  double bytes = 0, seconds = 0;  // one all-reduce of 2 ranks
};

// Least squares of seconds = 2 alpha + bytes * beta over 2-rank samples (at
// least two distinct sizes), in relative error (weights 1 / seconds^2).
// Throws nnbench::Error otherwise.
Link fit_two_rank(const std::vector<Sample>& samples);

// Seconds for one all-reduce of `bytes` over `ranks` ranks (0 for 1 rank).
double allreduce_seconds(const Link& l, int ranks, double bytes);

// Strong scaling keeps the global batch and splits it (DLBench); weak
// scaling keeps each rank's batch (the cloud GPU study).
enum class Scaling { kStrong, kWeak };

struct Workload {
  double compute_seconds = 0;  // one step of one rank at the 1-rank batch
  double gradient_bytes = 0;   // all-reduced each step
  double batch = 0;            // global batch (strong) or per rank (weak)
  bool overlap = false;        // all-reduce hidden behind backward
};

struct Prediction {
  int ranks = 1;
  double step_seconds = 0, samples_per_second = 0;
  double speedup = 1, efficiency = 1;  // against 1 rank of the same kind
};

// Compute per rank: strong scaling assumes it shrinks in proportion to the
// rank's share of the batch (stated; measured points show where it does
// not); weak keeps it. Communication: allreduce_seconds, added to compute,
// or overlapped (the step takes the larger of the two).
Prediction predict(const Workload& w, const Link& l, Scaling s, int ranks);

// Relative error of a prediction against a measurement, in percent.
double error_percent(double predicted, double measured);

}  // namespace nnbench::scaling
