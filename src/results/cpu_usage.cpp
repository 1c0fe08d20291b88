#include "results/cpu_usage.h"

#include <unistd.h>

#include <algorithm>

namespace nnbench::results {

double CpuUsage::cpu_share() const {
  return wall_seconds > 0 && threads > 0
             ? process_cpu_seconds / (wall_seconds * threads)
             : 0;
}

double CpuUsage::other_load() const {
  return wall_seconds > 0 && other_cpu_seconds >= 0
             ? other_cpu_seconds / wall_seconds
             : 0;
}

double CpuUsage::steal_fraction() const {
  return wall_seconds > 0 && cpus > 0 && steal_seconds >= 0
             ? steal_seconds / (wall_seconds * cpus)
             : 0;
}

double CpuUsage::switches_per_thread_second() const {
  return wall_seconds > 0 && threads > 0
             ? involuntary_switches / (wall_seconds * threads)
             : 0;
}

void CpuUsage::add(const CpuUsage& next) {
  const bool known = other_cpu_seconds >= 0 || wall_seconds == 0;
  intervals = wall_seconds == 0 ? next.intervals : intervals + next.intervals;
  wall_seconds += next.wall_seconds;
  process_cpu_seconds += next.process_cpu_seconds;
  threads = next.threads;
  cpus = next.cpus;
  involuntary_switches += next.involuntary_switches;
  voluntary_switches += next.voluntary_switches;
  if (known && next.other_cpu_seconds >= 0) {
    other_cpu_seconds =
        std::max(0.0, other_cpu_seconds) + next.other_cpu_seconds;
    steal_seconds = std::max(0.0, steal_seconds) + next.steal_seconds;
  } else {
    other_cpu_seconds = steal_seconds = -1;
  }
}

double load_resolution(const CpuUsage& u) {
  if (u.wall_seconds <= 0) return 0;
  static const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  return 2.0 * u.cpus * u.intervals * tick / u.wall_seconds;
}

}  // namespace nnbench::results
