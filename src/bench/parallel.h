#pragma once
// The data-parallel side of one run of the harness (step_loop.cpp): with a
// group, this process is one rank; it checks that every rank was asked the
// same thing, trains on its shard of each global batch, has its gradients
// averaged between backward and the update (distributed::MeanReducer), and
// agrees with the other ranks after every step on whether to go on, so that no
// rank waits in an all-reduce that the others never join. Without a group
// every call passes through.
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "distributed/group.h"
#include "distributed/reducer.h"
#include "model/model.h"
#include "results/result.h"

namespace nnbench::bench {

class Parallel {
 public:
  // Throws RunError (invalid_args) for a strong-scaling batch that does not
  // split evenly, or a group without a request for one.
  Parallel(distributed::Group* g, const results::RunRequest& r);
  bool active() const { return group_ != nullptr; }
  int64_t global_batch() const { return global_; }
  int64_t batch_per_rank() const { return per_rank_; }

  // Collective. Throws nnbench::Error naming the fields that differ.
  void check_config(const backend::Backend& b, const model::Model& m) const;
  // This rank's shards of the global batches.
  std::vector<host::Batch> shard(const std::vector<host::Batch>& global) const;
  // Training: gradients go through the reducer from now on.
  void attach(backend::Executable& exe);
  // Collective checkpoint before the clock starts: a rank that failed
  // says so (failed = true, from its error path); the others throw a
  // RunError naming it instead of waiting for it in the first step.
  void ready(bool failed) const;
  bool passed_ready() const { return ready_; }

  // After each step: records this rank's times, then makes `seconds` the
  // slowest rank's and `done` true when any rank is done.
  void agree(double* seconds, bool* done, bool measured);
  // After measuring (collective with a group): the busy time of the ranks
  // beside this one on the machine is the run's own, not other load, and
  // is taken out of u.other_cpu_seconds. More threads than CPUs make the
  // run invalid ("oversubscribed": they compete for the cores by request):
  // without a group, this process's threads against its affinity mask;
  // with one, per machine, every rank's threads against the union of the
  // ranks' masks, and each rank's against its own.
  void exclude_other_ranks(results::CpuUsage& u, results::Validity& v) const;
  // Fills res.distributed and counts the global batch in the throughput.
  void finish(results::RunResult& res, int threads) const;

 private:
  distributed::Group* group_;
  const results::RunRequest& request_;
  int64_t global_ = 0, per_rank_ = 0;
  int local_ranks_ = 1;
  double host_ = 0;  // distributed::host_hash()
  std::unique_ptr<distributed::MeanReducer> reducer_;
  std::vector<double> own_steps_, allreduce_;  // this rank, measured steps
  mutable bool ready_ = false;
};

}  // namespace nnbench::bench
