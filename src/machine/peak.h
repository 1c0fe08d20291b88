#pragma once
// The machine's peaks a run's GFLOP/s are a fraction of. Practical: the
// best GEMM measured per precision, over OpenBLAS's SGEMM and what the
// backends' libraries offer (oneDNN's matmul, fp32 and bf16), so that no
// run reads above 100 % of a peak of its own precision (before, the peak
// was OpenBLAS alone, which a forced AVX2 kernel left below oneDNN's
// AVX-512 convolutions: 101-125 %). Theoretical: FMA units x vector width x
// clock x cores, the roofline's ceiling, with how the clock was found.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "machine/cpu.h"

namespace nnbench::machine {

// FLOPs a core can issue per cycle, and the clock: the CPU's ceiling.
struct Theoretical {
  double fp32_flops_per_cycle = 0, bf16_flops_per_cycle = 0;
  std::string units;  // how the per-cycle figures follow from the CPU
  double ghz = 0;
  std::string clock_source;  // where the clock came from, and its caveat
  int cores = 0;             // the cores the threads run on
  double fp32_gflops = 0, bf16_gflops = 0;
};

struct Peak {
  double gflops = 0;  // fp32: the best GEMM measured
  int threads = 0;
  std::string method;      // the GEMM that gave it: "OpenBLAS cblas_sgemm
                           // 2048^3 fp32, best of 5, 2 threads, core SkylakeX"
  double seconds = 0;      // how long the calibration took
  double bf16_gflops = 0;  // the best bf16 GEMM; 0 when none ran
  std::string bf16_method;
  std::vector<backend::GemmRate> gemms;  // every GEMM timed
  Theoretical theoretical;
  // The practical peak of a run's precision (0: none measured; fp16 and
  // anything else have none).
  double for_precision(const std::string& precision) const;
};

// Runs sgemm n^3 `reps` times on `threads` threads after one warm-up call;
// peak = best rate. Restores OpenBLAS's previous thread count.
Peak measure_gemm_peak(int threads, int n = 2048, int reps = 5);

// Adds a GEMM timed elsewhere (a backend's library); the best of each
// precision becomes the peak and its method.
void add_gemm(Peak& p, const backend::GemmRate& g);

// The theoretical peak of `threads` threads on this CPU: per-cycle figures
// from its ISA and microarchitecture, the clock from cpufreq's maximum or
// else /proc/cpuinfo's "cpu MHz".
Theoretical theoretical_peak(const Cpu& cpu, int threads);

nlohmann::json to_json(const Peak& p);
// What to_json wrote (a case's child reads its suite's peak).
Peak peak_from_json(const nlohmann::json& j);

}  // namespace nnbench::machine
