#include "machine/warnings.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "machine/proc_text.h"

namespace nnbench::machine {
namespace {

using proc::first_line;
using proc::guarded;
using proc::lookup;
using proc::lower;

bool has_isa(const Environment& e, const std::string& flag) {
  return std::find(e.cpu.isa.begin(), e.cpu.isa.end(), flag) != e.cpu.isa.end();
}

// Cores whose kernels predate AVX2: OpenBLAS falls back to one of these when
// it does not recognise a newer CPU.
bool is_pre_avx2_core(const std::string& core) {
  static const std::set<std::string> kOld = {
      "prescott",   "generic", "unknown",     "katmai",    "coppermine",
      "northwood",  "banias",  "core2",       "penryn",    "dunnington",
      "nehalem",    "atom",    "sandybridge", "opteron",   "opteron_sse3",
      "barcelona",  "bobcat",  "athlon",      "bulldozer", "piledriver",
      "steamroller"};
  return kOld.count(lower(core)) > 0;
}

void warn_openblas_core(const Environment& e, std::vector<std::string>& out) {
  const bool avx512 = has_isa(e, "avx512f");
  if (e.openblas_core.empty() || !(avx512 || has_isa(e, "avx2"))) return;
  if (!is_pre_avx2_core(e.openblas_core)) return;
  const std::string fix = avx512 ? "SkylakeX" : "Haswell";
  const auto set = e.thread_env.find("OPENBLAS_CORETYPE");
  const bool set_elsewhere = set != e.thread_env.end() && set->second != fix;
  const std::string now =
      set_elsewhere ? " (it is now set to " + set->second + ")" : "";
  out.push_back("OpenBLAS uses its " + e.openblas_core +
                " kernels although this CPU has " +
                (avx512 ? "AVX-512" : "AVX2") +
                ": SGEMM and everything built on it run several times "
                "slower than the hardware allows. Set OPENBLAS_CORETYPE=" +
                fix + " before starting the process" + now + ".");
}

// ISA levels: 1 SSE, 2 AVX, 3 AVX2, 4 AVX-512; 0 unknown.
int cpu_isa_level(const Environment& e) {
  if (has_isa(e, "avx512f")) return 4;
  if (has_isa(e, "avx2")) return 3;
  if (has_isa(e, "avx")) return 2;
  return 1;
}

const char* level_name(int level) {
  static const char* const names[] = {"?", "SSE", "AVX", "AVX2", "AVX-512"};
  return names[std::clamp(level, 0, 4)];
}

// The level a variable's value caps its library at, 0 when not known.
int forced_level(const std::string& var, const std::string& value) {
  const std::string v = lower(value);
  const auto starts = [&](const char* p) { return v.rfind(p, 0) == 0; };
  if (var == "OPENBLAS_CORETYPE") {
    if (is_pre_avx2_core(v)) return v == "sandybridge" ? 2 : 1;
    if (starts("haswell") || starts("zen") || starts("excavator") ||
        starts("skylake") || starts("broadwell"))
      return v == "skylakex" ? 4 : 3;
    if (starts("cooperlake") || starts("sapphirerapids")) return 4;
    return 0;
  }
  if (var == "DNNL_MAX_CPU_ISA" || var == "ONEDNN_MAX_CPU_ISA") {
    if (starts("sse")) return 1;
    if (starts("avx2")) return 3;
    if (starts("avx512") || starts("amx") || v == "all") return 4;
    if (starts("avx")) return 2;
    return 0;
  }
  if (var == "MKL_ENABLE_INSTRUCTIONS") {
    if (starts("sse")) return 1;
    if (starts("avx512")) return 4;
    if (starts("avx2")) return 3;
    if (starts("avx")) return 2;
    return 0;
  }
  if (var == "ATEN_CPU_CAPABILITY") {
    if (v == "default") return 1;
    if (v == "avx2") return 3;
    if (v == "avx512") return 4;
  }
  return 0;
}

// A variable that holds a library below the CPU's instruction set: kept
// (it is the user's) and recorded, but said, since it slows what it
// touches: OPENBLAS_CORETYPE=Haswell on an AVX-512 EPYC took LibTorch's
// MNIST MLP step from 2.2-2.5 ms to 3.0-3.1 ms.
void warn_forced_isa(const Environment& e, std::vector<std::string>& out) {
  const int cpu = cpu_isa_level(e);
  for (const char* var :
       {"OPENBLAS_CORETYPE", "DNNL_MAX_CPU_ISA", "ONEDNN_MAX_CPU_ISA",
        "MKL_ENABLE_INSTRUCTIONS", "ATEN_CPU_CAPABILITY"}) {
    const auto it = e.thread_env.find(var);
    if (it == e.thread_env.end()) continue;
    const int forced = forced_level(var, it->second);
    if (forced == 0 || forced >= cpu) continue;
    out.push_back(std::string(var) + "=" + it->second + " holds its library " +
                  "to " + level_name(forced) + " kernels on this CPU, which " +
                  "has " + level_name(cpu) +
                  ": what runs through it is slower than the hardware "
                  "allows. nnbench keeps the setting and records it with "
                  "every result; unset it to measure the hardware.");
  }
}

void warn_pthreads_blas(const Environment& e, std::vector<std::string>& out) {
  // Any pthreads OpenBLAS counts: LibTorch calls libblas.so.3, which may be
  // the pthreads build while nnbench's own libopenblas.so.0 is OpenMP.
  const bool pthreads_loaded = std::any_of(
      e.blas_libraries.begin(), e.blas_libraries.end(), [](const auto& p) {
        return p.find("openblas-pthread") != std::string::npos;
      });
  if (e.openblas_threading != "pthreads" && !pthreads_loaded) return;
  // The documented mitigation: OpenMP threads then sleep instead of spinning.
  const auto policy = e.thread_env.find("OMP_WAIT_POLICY");
  if (policy != e.thread_env.end() && lower(policy->second) == "passive") {
    return;
  }
  out.push_back(
      "The loaded OpenBLAS is the pthreads build: its spinning threads and "
      "LibTorch's OpenMP threads, two thread pools, fight over the cores and "
      "can make training steps 10-20x slower. Use the OpenMP OpenBLAS (put "
      "its directory first on LD_LIBRARY_PATH) or set "
      "OMP_WAIT_POLICY=PASSIVE.");
}

void warn_affinity(const Environment& e, std::vector<std::string>& out) {
  if (e.usable_cpus <= 0 || e.usable_cpus >= e.logical_cpus) return;
  out.push_back("Only " + std::to_string(e.usable_cpus) + " of the " +
                std::to_string(e.logical_cpus) +
                " online CPUs are in this process's affinity mask: more "
                "threads than that oversubscribe, and results differ from "
                "runs on the whole machine. Use at most " +
                std::to_string(e.usable_cpus) +
                " threads, or run without taskset/cpuset limits.");
}

// cgroup v2 "quota period" in microseconds; "max" means no limit.
double cgroup_cpu_limit() {
  std::istringstream in(first_line("/sys/fs/cgroup/cpu.max"));
  std::string quota;
  double period = 0;
  if (!(in >> quota >> period) || quota == "max" || period <= 0) return 0;
  return std::stod(quota) / period;
}

void warn_cpu_quota(const Environment& e, std::vector<std::string>& out) {
  const double limit = cgroup_cpu_limit();
  if (limit <= 0 || limit >= e.usable_cpus) return;
  std::ostringstream msg;
  msg << "This container's cgroup allows " << limit << " CPUs of the "
      << e.usable_cpus << " usable: threads get throttled mid-run, which "
      << "makes timings slow and erratic. Use at most "
      << std::max(1, static_cast<int>(limit))
      << " threads, or raise the container's CPU limit.";
  out.push_back(msg.str());
}

// Fewest runnable threads besides the caller over a few samples 10 ms apart:
// a single sample catches short-lived tasks, the minimum only steady load.
int other_runnable_threads() {
  int fewest = INT_MAX;
  for (int i = 0; i < 5; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const std::string running = lookup("/proc/stat", "procs_running", ' ');
    if (running.empty()) return 0;
    fewest = std::min(fewest, std::stoi(running) - 1);
  }
  return fewest;
}

// The other ranks of a data-parallel run on this machine.
int sibling_ranks() {
  for (const char* v : {"OMPI_COMM_WORLD_LOCAL_SIZE", "NNBENCH_WORLD_SIZE"})
    if (const char* n = std::getenv(v); n && std::atoi(n) > 1)
      return std::atoi(n) - 1;
  return 0;
}

void warn_busy_machine(const Environment& e, std::vector<std::string>& out) {
  // The ranks start together, each with its own threads: nothing here can
  // tell them from other load. Their runs judge contention themselves,
  // with the other ranks' CPU time taken out (bench/parallel.h).
  if (sibling_ranks() > 0) return;
  const int others = other_runnable_threads();
  if (others < std::max(1, e.usable_cpus / 8)) return;
  out.push_back(std::to_string(others) +
                (others == 1 ? " other thread was" : " other threads were") +
                " running on this machine's " + std::to_string(e.logical_cpus) +
                " CPUs as the environment was captured: they compete for the "
                "cores, so timings come out slower and noisier, multi-threaded "
                "ones most. Benchmark on an otherwise idle machine.");
}

void warn_governor(std::vector<std::string>& out) {
  const std::string path =
      "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor";
  const std::string governor = first_line(path);
  if (governor.empty() || governor == "performance") return;
  out.push_back("The CPU frequency governor is '" + governor +
                "', not 'performance': the clock changes during a run, which "
                "adds noise and slows short benchmarks. Set it with "
                "'cpupower frequency-set -g performance' (as root).");
}

void warn_hypervisor(const std::set<std::string>& flags,
                     std::vector<std::string>& out) {
  if (!flags.count("hypervisor")) return;
  out.push_back(
      "Running under a hypervisor: other guests can share the physical "
      "cores and caches, so timings are noisier than on bare metal. Repeat "
      "runs and compare medians with their confidence intervals.");
}
}  // namespace

std::vector<std::string> environment_warnings(
    const Environment& e, const std::set<std::string>& cpu_flags) {
  std::vector<std::string> out;
  guarded([&] { warn_openblas_core(e, out); });
  guarded([&] { warn_pthreads_blas(e, out); });
  guarded([&] { warn_forced_isa(e, out); });
  guarded([&] { warn_affinity(e, out); });
  guarded([&] { warn_cpu_quota(e, out); });
  guarded([&] { warn_busy_machine(e, out); });
  guarded([&] { warn_governor(out); });
  guarded([&] { warn_hypervisor(cpu_flags, out); });
  return out;
}

}  // namespace nnbench::machine
