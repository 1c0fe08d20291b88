#pragma once
// A group of processes (ranks) training one model together, data parallel,
// over an existing communication engine: Open MPI or Gloo through
// LibTorch's c10d (distributed/comm_engines.h makes them). nnbench never moves
// bytes itself; this is the little it needs from an engine.
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace nnbench::distributed {

// The engine failed during a collective (a peer gone, a timeout): the run
// failed, as opposed to nnbench::Error for what was asked wrongly.
class CommError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Group {
 public:
  virtual ~Group() = default;
  virtual std::string engine() const = 0;  // "mpi", "gloo"
  // The engine's library and version as loaded, e.g. "Open MPI v4.1.4".
  virtual std::string engine_version() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Element-wise sum over every rank, in place. Collectives throw
  // CommError when the engine reports a failure.
  virtual void allreduce_sum(float* data, int64_t n) = 0;
  // The same, started now and finished by calling the returned function
  // (which throws CommError on failure); calls must start in the same
  // order on every rank. Engines without progress of their own (Open MPI
  // without an asynchronous progress thread) may do the work in the wait.
  virtual std::function<void()> allreduce_sum_async(float* data, int64_t n) = 0;
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
  // Set when this rank failed after the others started measuring: it
  // must abandon() rather than leave normally.
  void mark_broken() { broken_ = true; }
  bool broken() const { return broken_; }

 private:
  bool broken_ = false;
};

// Ranks sharing this machine's CPUs with this one (same host name; network
// namespaces share the CPUs and the name), this one included: what the
// contention check must count as the run's own load.
int local_ranks(Group& g);
// This machine's host name as a number (distributed/check.h's hash32).
double host_hash();

// Collective: whether every rank got here without failing. Each rank says
// whether it failed; all learn the lowest failed rank, or -1.
int first_failed_rank(Group& g, bool failed);

}  // namespace nnbench::distributed
