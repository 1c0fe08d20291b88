#include "bench/cpu_usage.h"

#include <fmt/core.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <tuple>

namespace nnbench::bench {
namespace {

double tv_seconds(const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; }

// Busy and steal seconds summed over the CPUs in this process's affinity
// mask, from the per-CPU lines of /proc/stat; {-1, -1} when unreadable.
std::pair<double, double> proc_stat_seconds() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) != 0) return {-1, -1};
  std::ifstream in("/proc/stat");
  if (!in) return {-1, -1};
  const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  double busy = 0, steal = 0;
  bool any = false;
  std::string line;
  while (std::getline(in, line)) {
    int cpu = -1;
    if (std::sscanf(line.c_str(), "cpu%d ", &cpu) != 1 || cpu < 0 ||
        cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &mask))
      continue;
    std::istringstream fields(line.substr(line.find(' ')));
    // user nice system idle iowait irq softirq steal (guest is in user)
    double v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (double& x : v) fields >> x;
    busy += (v[0] + v[1] + v[2] + v[5] + v[6]) * tick;
    steal += v[7] * tick;
    any = true;
  }
  return any ? std::pair{busy, steal} : std::pair{-1.0, -1.0};
}

int cpus_in_mask() {
  cpu_set_t mask;
  return process_cpus(&mask) ? CPU_COUNT(&mask) : 0;
}

}  // namespace

bool process_cpus(cpu_set_t* set) {
  CPU_ZERO(set);
  bool any = false;
  std::error_code ec;
  for (const auto& e :
       std::filesystem::directory_iterator("/proc/self/task", ec)) {
    cpu_set_t one;
    CPU_ZERO(&one);
    const pid_t tid = std::atoi(e.path().filename().c_str());
    if (tid <= 0 || sched_getaffinity(tid, sizeof one, &one) != 0) continue;
    CPU_OR(set, set, &one);
    any = true;
  }
  if (!any) any = sched_getaffinity(0, sizeof(cpu_set_t), set) == 0;
  return any;
}

bool judge_contention(const results::CpuUsage& u,
                      const results::ContentionRule& rule,
                      results::Validity& v) {
  if (u.wall_seconds < rule.min_wall_seconds) return true;
  const double spare = std::max(0, u.cpus - u.threads);
  const double excess = u.other_load() - spare;
  const double limit = rule.max_excess_load + load_resolution(u);
  std::string why;
  if (u.other_cpu_seconds >= 0 && excess > limit)
    why = fmt::format(
        "other processes kept {:.3f} CPUs busy on average, {:.3f} more than "
        "the {} this run left spare (limit {:.3f}: {:.2f} + {:.3f} for "
        "/proc/stat's ticks)",
        u.other_load(), excess, static_cast<int>(spare), limit,
        rule.max_excess_load, limit - rule.max_excess_load);
  if (u.steal_seconds >= 0 && u.steal_fraction() > rule.max_steal_fraction)
    why += fmt::format("{}hypervisor steal {:.1f} % (limit {:.1f} %)",
                       why.empty() ? "" : "; ", u.steal_fraction() * 100,
                       rule.max_steal_fraction * 100);
  if (why.empty()) return true;
  v.add("contended",
        why + fmt::format("; CPU share {:.2f}, {:.0f} involuntary switches "
                          "per thread-second",
                          u.cpu_share(), u.switches_per_thread_second()));
  return false;
}

namespace {

// Another process's CPU seconds and context switches (0 when it is gone),
// with the CPU seconds of the children it has waited for: a compiler a
// framework runs for it (JAX's worker on a GPU, while XLA compiles) works
// for the run too.
void add_process(int pid, double* cpu, long* nivcsw, long* nvcsw) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  const auto close = text.rfind(')');
  if (close == std::string::npos) return;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  // Fields 3.. after the name; utime, stime, cutime and cstime are the
  // 14th to the 17th.
  double ticks = 0;
  for (int i = 3; i <= 17 && rest >> field; ++i)
    if (i >= 14) ticks += std::atof(field.c_str());
  *cpu += ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    long v = 0;
    if (std::sscanf(line.c_str(), "voluntary_ctxt_switches: %ld", &v) == 1)
      *nvcsw += v;
    if (std::sscanf(line.c_str(), "nonvoluntary_ctxt_switches: %ld", &v) == 1)
      *nivcsw += v;
  }
}

}  // namespace

UsageProbe::Counters UsageProbe::read() const {
  Counters c;
  c.wall = std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
               .count();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  c.cpu = tv_seconds(ru.ru_utime) + tv_seconds(ru.ru_stime);
  c.nivcsw = ru.ru_nivcsw;
  c.nvcsw = ru.ru_nvcsw;
  for (int pid : helpers_) add_process(pid, &c.cpu, &c.nivcsw, &c.nvcsw);
  std::tie(c.busy, c.steal) = proc_stat_seconds();
  return c;
}

void UsageProbe::start() { start_ = read(); }

results::CpuUsage UsageProbe::stop(int threads) const {
  const Counters end = read();
  results::CpuUsage u;
  u.wall_seconds = end.wall - start_.wall;
  u.process_cpu_seconds = end.cpu - start_.cpu;
  u.threads = threads;
  u.cpus = cpus_in_mask();
  u.involuntary_switches = end.nivcsw - start_.nivcsw;
  u.voluntary_switches = end.nvcsw - start_.nvcsw;
  if (start_.busy >= 0 && end.busy >= 0) {
    // Tick rounding can make a quiet interval slightly negative.
    u.other_cpu_seconds =
        std::max(0.0, end.busy - start_.busy - u.process_cpu_seconds);
    u.steal_seconds = end.steal - start_.steal;
  }
  return u;
}

}  // namespace nnbench::bench
