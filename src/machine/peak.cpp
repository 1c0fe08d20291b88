#include "machine/peak.h"

#include <cblas.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
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
  return p;
}

nlohmann::json to_json(const Peak& p) {
  return {{"gflops", p.gflops},
          {"threads", p.threads},
          {"method", p.method},
          {"seconds", p.seconds}};
}

}  // namespace nnbench::machine
