#pragma once
// Measures and judges a run's CPU usage (results/cpu_usage.h): whether its
// threads got their CPUs while it was measured.
#include <sched.h>

#include <vector>

#include "results/cpu_usage.h"
#include "results/request.h"
#include "results/validity.h"

namespace nnbench::bench {

// The CPUs this process may use: the union of its threads' affinity
// masks. The calling thread's alone is not it: with OMP_PROC_BIND or
// KMP_AFFINITY the OpenMP runtime pins the main thread to one CPU.
bool process_cpus(cpu_set_t* set);

// Adds a "contended" reason naming the figures when the run's threads did
// not get their CPUs under `rule` (other load beyond the spare CPUs by more
// than max_excess_load + load_resolution, or steal beyond its limit);
// returns whether they did.
bool judge_contention(const results::CpuUsage& u,
                      const results::ContentionRule& rule,
                      results::Validity& v);

// Samples the counters at start() and returns the difference at stop().
// The run's own CPU time is this process's plus that of the processes
// doing its backend's work (a framework worker: SelfTimed::processes()),
// read from /proc/PID/stat and status: otherwise a worker's busy threads
// would count as another process's load.
class UsageProbe {
 public:
  explicit UsageProbe(std::vector<int> helpers = {})
      : helpers_(std::move(helpers)) {}
  void start();
  results::CpuUsage stop(int threads) const;

 private:
  struct Counters {
    double wall = 0, cpu = 0;
    long nivcsw = 0, nvcsw = 0;
    double busy = -1, steal = -1;  // /proc/stat seconds over the mask
  };
  Counters read() const;
  std::vector<int> helpers_;
  Counters start_;
};

}  // namespace nnbench::bench
