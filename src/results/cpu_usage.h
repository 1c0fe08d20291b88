#pragma once
// What the operating system says about a measured interval: how much CPU
// the process got against what its threads needed, how often its threads
// were preempted, and how busy everything else kept the CPUs it may use.
// OpenMP steps collapse (56x was seen) when one co-runner takes a core,
// while their timings stay tight; these figures catch it. Measured by
// bench::UsageProbe, judged by bench::judge_contention.

namespace nnbench::results {

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

// The error of other_load() from /proc/stat's clock ticks: up to one tick
// per CPU at each end of each interval, 2 x cpus x intervals / CLK_TCK
// CPU-seconds over the wall time (0.008 CPU for 2 CPUs over one 5 s
// interval, 0.16 over 0.25 s).
double load_resolution(const CpuUsage& u);

}  // namespace nnbench::results
