#include "machine/peak.h"

#include <cblas.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

namespace nnbench::machine {
namespace {

TEST(Peak, SmallGemmCalibration) {
  const Peak p = measure_gemm_peak(1, 256, 2);
  // Even SSE3 kernels on one core exceed 1 GFLOP/s at 256^3.
  EXPECT_GT(p.gflops, 1.0);
  EXPECT_EQ(p.threads, 1);
  EXPECT_GT(p.seconds, 0);
  EXPECT_NE(p.method.find("256^3"), std::string::npos) << p.method;
  EXPECT_NE(p.method.find("best of 2"), std::string::npos) << p.method;
  EXPECT_NE(p.method.find("1 thread"), std::string::npos) << p.method;
  EXPECT_NE(p.method.find("core "), std::string::npos) << p.method;
}

TEST(Peak, RestoresOpenBlasThreadCount) {
  openblas_set_num_threads(1);
  measure_gemm_peak(2, 64, 1);
  EXPECT_EQ(openblas_get_num_threads(), 1);
  openblas_set_num_threads(2);
  measure_gemm_peak(1, 64, 1);
  EXPECT_EQ(openblas_get_num_threads(), 2);
}

// The OpenMP OpenBLAS sets OpenMP's thread count along with its own, which
// would change LibTorch's pool behind its back. Checked only where OpenMP is
// loaded (the pthreads OpenBLAS does not bring it).
TEST(Peak, RestoresOpenMpThreadCount) {
  auto get =
      reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  auto set = reinterpret_cast<void (*)(int)>(
      dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (get == nullptr || set == nullptr) GTEST_SKIP() << "OpenMP not loaded";
  set(3);
  measure_gemm_peak(1, 64, 1);
  EXPECT_EQ(get(), 3);
}

TEST(Peak, RejectsNonsense) {
  EXPECT_THROW(measure_gemm_peak(0, 64, 1), std::exception);
  EXPECT_THROW(measure_gemm_peak(1, 0, 1), std::exception);
  EXPECT_THROW(measure_gemm_peak(1, 64, 0), std::exception);
}

TEST(Peak, JsonKeys) {
  Peak p;
  p.gflops = 12.5;
  p.threads = 2;
  p.method = "m";
  p.seconds = 0.1;
  const nlohmann::json j = to_json(p);
  EXPECT_EQ(j["gflops"], 12.5);
  EXPECT_EQ(j["threads"], 2);
  EXPECT_EQ(j["method"], "m");
  EXPECT_EQ(j["seconds"], 0.1);
}

// The practical peak of each precision is the best GEMM measured for it,
// whichever library ran it.
TEST(Peak, BestGemmOfEachPrecisionIsItsPeak) {
  Peak p;
  p.gflops = 100;
  p.method = "OpenBLAS";
  add_gemm(p, {"fp32", "oneDNN matmul", "brg:avx512_core", 2, 180});
  add_gemm(p, {"fp32", "slower", "x", 2, 150});
  add_gemm(p, {"bf16", "oneDNN matmul", "brg:avx512_core_bf16", 2, 400});
  EXPECT_EQ(p.for_precision("fp32"), 180);
  EXPECT_EQ(p.for_precision("bf16"), 400);
  EXPECT_EQ(p.for_precision("fp16"), 0);  // none measured: no fraction
  EXPECT_NE(p.method.find("brg:avx512_core"), std::string::npos) << p.method;
  EXPECT_NE(p.bf16_method.find("bf16"), std::string::npos);
  const Peak back = peak_from_json(to_json(p));
  EXPECT_EQ(back.gflops, 180);
  EXPECT_EQ(back.bf16_gflops, 400);
  ASSERT_EQ(back.gemms.size(), 3u);
  EXPECT_EQ(back.gemms[2].kernel, "brg:avx512_core_bf16");
}

// FMA units x lanes x 2 per cycle, from the ISA and microarchitecture; the
// cores are those the threads run on; the clock says where it came from.
TEST(Peak, TheoreticalFromTheIsaAndTheClock) {
  Cpu c;
  c.cores = 4;
  c.isa = {"avx", "avx2", "fma"};
  Theoretical t = theoretical_peak(c, 2);
  EXPECT_EQ(t.fp32_flops_per_cycle, 32);  // 2 x 8 lanes x 2
  EXPECT_EQ(t.bf16_flops_per_cycle, 0);
  EXPECT_EQ(t.cores, 2);
  ASSERT_GT(t.ghz, 0);
  EXPECT_FALSE(t.clock_source.empty());
  EXPECT_DOUBLE_EQ(t.fp32_gflops, 32 * t.ghz * 2);
  c.isa = {"avx", "avx2", "fma", "avx512f", "avx512_bf16"};
  c.microarchitecture = "Zen 4";  // AVX-512 on 256-bit pipes
  t = theoretical_peak(c, 8);
  EXPECT_EQ(t.fp32_flops_per_cycle, 32);
  EXPECT_EQ(t.bf16_flops_per_cycle, 64);
  EXPECT_EQ(t.cores, 4);
  c.microarchitecture = "Sapphire Rapids";
  c.isa.push_back("amx_bf16");
  t = theoretical_peak(c, 1);
  EXPECT_EQ(t.fp32_flops_per_cycle, 64);
  EXPECT_EQ(t.bf16_flops_per_cycle, 1024);
}

}  // namespace
}  // namespace nnbench::machine
