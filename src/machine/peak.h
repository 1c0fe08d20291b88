#pragma once
// The machine's measured FP32 peak, from a short SGEMM calibration through
// the OpenMP OpenBLAS. Achieved GFLOP/s are reported as a fraction of it.
#include <nlohmann/json.hpp>
#include <string>

namespace nnbench::machine {

struct Peak {
  double gflops = 0;
  int threads = 0;
  std::string method;  // e.g. "OpenBLAS cblas_sgemm 2048^3 fp32, best of 5,
                       // 2 threads, core SkylakeX"
  double seconds = 0;  // how long the calibration took
};

// Runs sgemm n^3 `reps` times on `threads` threads after one warm-up call;
// peak = best rate. Restores OpenBLAS's previous thread count.
Peak measure_gemm_peak(int threads, int n = 2048, int reps = 5);

nlohmann::json to_json(const Peak& p);

}  // namespace nnbench::machine
