#pragma once
// A group of processes (ranks) training one model together, data parallel,
// over an existing communication engine: Open MPI or Gloo through
// LibTorch's c10d (dist/engines.h makes them). nnbench never moves bytes
// itself; this is the little it needs from an engine.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nnbench::dist {

class Group {
 public:
  virtual ~Group() = default;
  virtual std::string engine() const = 0;  // "mpi", "gloo"
  // The engine's library and version as loaded, e.g. "Open MPI v4.1.4".
  virtual std::string engine_version() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Element-wise sum over every rank, in place. Throws nnbench::Error
  // when the engine reports a failure (a peer gone, a timeout).
  virtual void allreduce_sum(float* data, int64_t n) = 0;
  // Element-wise maximum over every rank, in place: the lockstep decisions
  // (stop now?) and the slowest rank's step time.
  virtual void allreduce_max(double* data, int64_t n) = 0;
  // Every rank's `mine`, in rank order; `mine` has the same length on
  // every rank.
  virtual std::vector<std::vector<double>> allgather(
      const std::vector<double>& mine) = 0;
  // This rank failed after the others started measuring and will not join
  // their next collective: end the job where the engine would otherwise
  // wait forever (MPI: MPI_Abort). Gloo's peers time out by themselves.
  virtual void abandon(int exit_code) {}
};

// Ranks sharing this machine's CPUs with this one (same host name; network
// namespaces share the CPUs and the name), this one included: what the
// contention check must count as the run's own load.
int local_ranks(Group& g);

// Collective: whether every rank got here without failing. Each rank says
// whether it failed; all learn the lowest failed rank, or -1.
int first_failed_rank(Group& g, bool failed);

}  // namespace nnbench::dist
