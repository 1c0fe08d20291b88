#pragma once
// What the operating system says about a measured interval: how much CPU
// the process got against what its threads needed, how often its threads
// were preempted, and how busy everything else kept the CPUs it may use.
// OpenMP steps collapse (56x was seen) when one co-runner takes a core,
// while their timings stay tight; these figures catch it.
#include <string>

#include "results/validity.h"

namespace nnbench::bench {

struct CpuUsage {
  double wall_seconds = 0;
  double process_cpu_seconds = 0;  // user + system, all threads
  int threads = 0;                 // compute threads of the run
  int cpus = 0;                    // CPUs in this process's affinity mask
  long involuntary_switches = 0;   // getrusage ru_nivcsw
  long voluntary_switches = 0;     // getrusage ru_nvcsw
  // From /proc/stat over the CPUs in the mask; negative when unknown.
  double other_cpu_seconds = -1;  // busy time of everything but this process
  double steal_seconds = -1;      // taken by the hypervisor
  int intervals = 1;  // probe intervals summed (add()): each adds tick error

  // process CPU / (wall x threads): 1 when every thread ran all the time.
  double cpu_share() const;
  // Average number of CPUs kept busy by others (other_cpu / wall).
  double other_load() const;
  // Steal as a fraction of the mask's CPU time.
  double steal_fraction() const;
  double switches_per_thread_second() const;
  // Adds another interval of the same run (e.g. the next epoch).
  void add(const CpuUsage& next);
};

// Thresholds, justified in docs/performance.md ("Contention"): a co-runner
// busy 10 % of the time (0.1 CPU) slowed ResNet-56 steps by 13-18 %, while
// an idle machine shows under 0.01 CPU of other load.
struct ContentionRule {
  // Others may use the CPUs the run leaves spare, plus this many CPUs on
  // average (plus the resolution of /proc/stat, see load_resolution) before
  // the run's threads must have waited for a CPU.
  double max_excess_load = 0.05;
  double max_steal_fraction = 0.05;
  // Intervals shorter than this are not judged: /proc/stat counts in
  // 10 ms ticks.
  double min_wall_seconds = 0.25;
};

// The error of other_load() from /proc/stat's clock ticks: up to one tick
// per CPU at each end of each interval, 2 x cpus x intervals / CLK_TCK
// CPU-seconds over the wall time (0.008 CPU for 2 CPUs over one 5 s
// interval, 0.16 over 0.25 s).
double load_resolution(const CpuUsage& u);

// Adds a "contended" reason naming the figures when the run's threads did
// not get their CPUs under `rule` (other load beyond the spare CPUs by more
// than max_excess_load + load_resolution, or steal beyond its limit);
// returns whether they did.
bool judge_contention(const CpuUsage& u, const ContentionRule& rule,
                      results::Validity& v);

// Samples the counters at start() and returns the difference at stop().
class UsageProbe {
 public:
  void start();
  CpuUsage stop(int threads) const;

 private:
  struct Counters {
    double wall = 0, cpu = 0;
    long nivcsw = 0, nvcsw = 0;
    double busy = -1, steal = -1;  // /proc/stat seconds over the mask
  };
  static Counters read();
  Counters start_;
};

}  // namespace nnbench::bench
