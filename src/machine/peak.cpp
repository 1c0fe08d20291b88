#include "machine/peak.h"

#include <cblas.h>
#include <dlfcn.h>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "util/clock.h"
#include "util/error.h"

namespace nnbench::machine {
namespace {

using util::Clock;
using util::seconds_since;

// The OpenMP OpenBLAS forwards openblas_set_num_threads to
// omp_set_num_threads, which would silently change LibTorch's pool too, so
// both counts are put back. OpenMP is looked up, not linked: with the
// pthreads OpenBLAS it may not be loaded at all.
class ThreadCountGuard {
 public:
  ThreadCountGuard()
      : blas_(openblas_get_num_threads()),
        omp_get_(reinterpret_cast<int (*)()>(
            dlsym(RTLD_DEFAULT, "omp_get_max_threads"))),
        omp_set_(reinterpret_cast<void (*)(int)>(
            dlsym(RTLD_DEFAULT, "omp_set_num_threads"))),
        omp_(omp_get_ && omp_set_ ? omp_get_() : 0) {}
  ~ThreadCountGuard() {
    openblas_set_num_threads(blas_);
    if (omp_ > 0) omp_set_(omp_);
  }
  ThreadCountGuard(const ThreadCountGuard&) = delete;
  ThreadCountGuard& operator=(const ThreadCountGuard&) = delete;

 private:
  int blas_;
  int (*omp_get_)();
  void (*omp_set_)(int);
  int omp_;
};

// Varied values: constant or zero matrices can hit fast paths in some
// kernels (and denormals in others) that a real workload never sees.
std::vector<float> test_matrix(int n, int seed) {
  std::vector<float> m(static_cast<size_t>(n) * n);
  for (size_t i = 0; i < m.size(); ++i) {
    m[i] = static_cast<float>((i * 7919 + seed) % 1009) / 1009.0f - 0.5f;
  }
  return m;
}

double time_sgemm(int n, const std::vector<float>& a,
                  const std::vector<float>& b, std::vector<float>& c) {
  const auto start = Clock::now();
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f,
              a.data(), n, b.data(), n, 0.0f, c.data(), n);
  return seconds_since(start);
}

std::string describe(int n, int reps, int threads) {
  const char* core = openblas_get_corename();
  return "OpenBLAS cblas_sgemm " + std::to_string(n) + "^3 fp32, best of " +
         std::to_string(reps) + ", " + std::to_string(threads) +
         (threads == 1 ? " thread" : " threads") + ", core " +
         (core ? core : "unknown");
}

}  // namespace

Peak measure_gemm_peak(int threads, int n, int reps) {
  if (threads < 1 || n < 1 || reps < 1) {
    throw Error("measure_gemm_peak: threads, n and reps must be >= 1");
  }
  const auto start = Clock::now();
  ThreadCountGuard restore;
  openblas_set_num_threads(threads);
  const std::vector<float> a = test_matrix(n, 1), b = test_matrix(n, 2);
  std::vector<float> c(a.size());
  time_sgemm(n, a, b, c);  // warm-up: thread start, page faults, caches
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < reps; ++i) best = std::min(best, time_sgemm(n, a, b, c));
  Peak p;
  p.threads = openblas_get_num_threads();  // OpenBLAS may cap the request
  best = std::max(best, 1e-9);  // a tiny n can finish within a clock tick
  p.gflops = 2.0 * n * n * static_cast<double>(n) / best / 1e9;
  p.method = describe(n, reps, p.threads);
  p.seconds = seconds_since(start);
  const char* core = openblas_get_corename();
  p.gemms.push_back({"fp32", "OpenBLAS cblas_sgemm",
                     std::string("core ") + (core ? core : "unknown"),
                     p.threads, p.gflops});
  return p;
}

double Peak::for_precision(const std::string& precision) const {
  if (precision == "fp32") return gflops;
  if (precision == "bf16") return bf16_gflops;
  return 0;
}

void add_gemm(Peak& p, const backend::GemmRate& g) {
  p.gemms.push_back(g);
  const std::string method = g.library + " " + g.precision + " (" + g.kernel +
                             "), " + std::to_string(g.threads) +
                             (g.threads == 1 ? " thread" : " threads");
  if (g.precision == "fp32" && g.gflops > p.gflops) {
    p.gflops = g.gflops;
    p.method = method;
  }
  if (g.precision == "bf16" && g.gflops > p.bf16_gflops) {
    p.bf16_gflops = g.gflops;
    p.bf16_method = method;
  }
}

namespace {

bool has(const Cpu& c, const std::string& flag) {
  return std::find(c.isa.begin(), c.isa.end(), flag) != c.isa.end();
}

std::string first_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// /proc/cpuinfo's "cpu MHz" of the first CPU.
double cpuinfo_mhz() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("cpu MHz", 0) == 0 && line.find(':') != std::string::npos)
      return std::atof(line.substr(line.find(':') + 1).c_str());
  return 0;
}

// The clock this core runs at, boost included: a chain of dependent
// integer adds retires one add per cycle on every x86-64 core since the
// Pentium Pro, so adds / seconds is the frequency. The best of 200 short
// runs of 1 M adds (about a quarter of a millisecond each): on a busy
// machine a long run is preempted and reads a slow clock (5 runs of 50 M
// read below the nominal clock beside a test run), while some short ones
// run whole. 0 off x86-64.
double measured_ghz() {
#if defined(__x86_64__)
  constexpr uint64_t kIterations = 125'000, kAddsPerIteration = 8;
  double best = std::numeric_limits<double>::infinity();
  // A register operand, not an immediate: recent Intel cores fold chains
  // of small-immediate adds in the renamer, several per cycle.
  volatile uint64_t opaque_one = 1;
  const uint64_t one = opaque_one;
  for (int rep = 0; rep < 200; ++rep) {
    uint64_t x = 0, n = kIterations;
    const auto t0 = Clock::now();
    asm volatile(
        "1:\n\t"
        "add %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\t"
        "add %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\t"
        "dec %1\n\t"
        "jnz 1b\n\t"
        : "+r"(x), "+r"(n)
        : "r"(one)
        : "cc");
    best = std::min(best, seconds_since(t0));
  }
  return kIterations * kAddsPerIteration / best / 1e9;
#else
  return 0;
#endif
}

}  // namespace

Theoretical theoretical_peak(const Cpu& cpu, int threads) {
  Theoretical t;
  const std::string& arch = cpu.microarchitecture;
  // Per core and cycle: FMA pipes x fp32 lanes x 2 (multiply and add).
  if (has(cpu, "avx512f")) {
    if (arch == "Zen 4") {
      t.fp32_flops_per_cycle = 32;
      t.units = "Zen 4: AVX-512 on two 256-bit FMA pipes, 2 x 8 lanes x 2";
    } else if (arch == "Zen 5") {
      t.fp32_flops_per_cycle = 64;
      t.units = "Zen 5 (EPYC): two 512-bit FMA pipes, 2 x 16 lanes x 2";
    } else {
      t.fp32_flops_per_cycle = 64;
      t.units = (arch.empty() ? std::string("AVX-512") : arch) +
                ": two 512-bit FMA units assumed (Xeon Gold/Platinum; one on "
                "some Silver/Bronze parts), 2 x 16 lanes x 2";
    }
  } else if (has(cpu, "avx2") && has(cpu, "fma")) {
    const bool zen1 = arch == "Zen";
    t.fp32_flops_per_cycle = zen1 ? 16 : 32;
    t.units = zen1 ? "Zen: two 128-bit FMA pipes, 2 x 4 lanes x 2"
                   : "AVX2: two 256-bit FMA units, 2 x 8 lanes x 2";
  } else if (has(cpu, "avx")) {
    t.fp32_flops_per_cycle = 16;
    t.units = "AVX without FMA: one 8-lane add and one 8-lane multiply";
  } else {
    t.fp32_flops_per_cycle = 8;
    t.units = "SSE: one 4-lane add and one 4-lane multiply";
  }
  if (has(cpu, "amx_bf16")) {
    t.bf16_flops_per_cycle = 1024;
    t.units += "; bf16: AMX, 1024 per cycle (TMUL: 512 multiply-adds)";
  } else if (has(cpu, "avx512_bf16")) {
    t.bf16_flops_per_cycle = 2 * t.fp32_flops_per_cycle;
    t.units +=
        "; bf16: AVX512-BF16 dot products, two bf16 products per fp32 "
        "lane";
  }
  // The highest of: the clock measured on one core (boost included), the
  // kernel's maximum, the reported one. All cores at once may run slower:
  // a ceiling, not a forecast.
  const std::string max_khz =
      first_line_of("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  const double kernel_max = std::atof(max_khz.c_str()) / 1e6;
  // A core that retired the chain faster than one add a cycle would read
  // far above the kernel's maximum clock: not a clock, then.
  double measured = measured_ghz();
  if (kernel_max > 0 && measured > 1.3 * kernel_max) measured = 0;
  const double reported = cpuinfo_mhz() / 1e3;
  t.ghz = std::max({measured, kernel_max, reported});
  if (t.ghz == measured && measured > 0)
    t.clock_source = fmt::format(
        "measured on one core: dependent integer adds, one per cycle "
        "(boost included; /proc/cpuinfo reports {:.3f} GHz{})",
        reported,
        kernel_max > 0 ? fmt::format(", cpufreq's maximum {:.3f}", kernel_max)
                       : std::string());
  else if (t.ghz == kernel_max)
    t.clock_source =
        "cpufreq cpuinfo_max_freq: the highest clock the kernel "
        "knows";
  else if (t.ghz > 0)
    t.clock_source = "/proc/cpuinfo cpu MHz: the clock reported now";
  t.cores = std::max(1, cpu.cores > 0 ? std::min(threads, cpu.cores) : threads);
  t.fp32_gflops = t.fp32_flops_per_cycle * t.ghz * t.cores;
  t.bf16_gflops = t.bf16_flops_per_cycle * t.ghz * t.cores;
  return t;
}

nlohmann::json to_json(const Peak& p) {
  nlohmann::json gemms = nlohmann::json::array();
  for (const auto& g : p.gemms)
    gemms.push_back({{"precision", g.precision},
                     {"library", g.library},
                     {"kernel", g.kernel},
                     {"threads", g.threads},
                     {"gflops", g.gflops}});
  const auto& t = p.theoretical;
  return {{"gflops", p.gflops},
          {"threads", p.threads},
          {"method", p.method},
          {"seconds", p.seconds},
          {"bf16_gflops", p.bf16_gflops},
          {"bf16_method", p.bf16_method},
          {"gemms", gemms},
          {"theoretical",
           {{"fp32_gflops", t.fp32_gflops},
            {"bf16_gflops", t.bf16_gflops},
            {"fp32_flops_per_cycle", t.fp32_flops_per_cycle},
            {"bf16_flops_per_cycle", t.bf16_flops_per_cycle},
            {"units", t.units},
            {"ghz", t.ghz},
            {"clock_source", t.clock_source},
            {"cores", t.cores}}}};
}

Peak peak_from_json(const nlohmann::json& j) {
  Peak p;
  if (!j.is_object()) return p;
  p.gflops = j.value("gflops", 0.0);
  p.threads = j.value("threads", 0);
  p.method = j.value("method", "");
  p.seconds = j.value("seconds", 0.0);
  p.bf16_gflops = j.value("bf16_gflops", 0.0);
  p.bf16_method = j.value("bf16_method", "");
  for (const auto& g : j.value("gemms", nlohmann::json::array()))
    p.gemms.push_back({g.value("precision", ""), g.value("library", ""),
                       g.value("kernel", ""), g.value("threads", 0),
                       g.value("gflops", 0.0)});
  const auto t = j.value("theoretical", nlohmann::json::object());
  p.theoretical.fp32_gflops = t.value("fp32_gflops", 0.0);
  p.theoretical.bf16_gflops = t.value("bf16_gflops", 0.0);
  p.theoretical.fp32_flops_per_cycle = t.value("fp32_flops_per_cycle", 0.0);
  p.theoretical.bf16_flops_per_cycle = t.value("bf16_flops_per_cycle", 0.0);
  p.theoretical.units = t.value("units", "");
  p.theoretical.ghz = t.value("ghz", 0.0);
  p.theoretical.clock_source = t.value("clock_source", "");
  p.theoretical.cores = t.value("cores", 0);
  return p;
}

}  // namespace nnbench::machine
