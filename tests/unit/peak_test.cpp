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
  const nlohmann::json j = to_json(Peak{12.5, 2, "m", 0.1});
  EXPECT_EQ(j["gflops"], 12.5);
  EXPECT_EQ(j["threads"], 2);
  EXPECT_EQ(j["method"], "m");
  EXPECT_EQ(j["seconds"], 0.1);
}

}  // namespace
}  // namespace nnbench::machine
