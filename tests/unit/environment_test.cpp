#include "bench/environment.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "bench/env_fixes.h"

namespace nnbench::bench {
namespace {

TEST(Environment, CapturesThisMachine) {
  const Environment e = capture_environment();
  EXPECT_FALSE(e.cpu_model.empty());
  EXPECT_GE(e.logical_cpus, 1);
  EXPECT_GE(e.usable_cpus, 1);
  EXPECT_LE(e.usable_cpus, e.logical_cpus);
  EXPECT_GE(e.physical_cores, 1);
  EXPECT_LE(e.physical_cores, e.logical_cpus);
  EXPECT_GT(e.memory_total_gib, 0);
  EXPECT_LE(e.memory_available_gib, e.memory_total_gib);
  EXPECT_FALSE(e.kernel.empty());
  EXPECT_FALSE(e.compiler.empty());
  // This binary links OpenBLAS (the peak calibration calls it).
  EXPECT_FALSE(e.openblas_core.empty());
  EXPECT_FALSE(e.openblas_threading.empty());
  EXPECT_FALSE(e.blas_libraries.empty());
  EXPECT_TRUE(e.backends.empty());  // the CLI fills them in
}

// The warnings are derived from the captured facts; check the two that the
// facts alone decide, so a wrong condition shows up on any machine.
TEST(Environment, WarningsFollowTheFacts) {
  const Environment e = capture_environment();
  auto mentions = [&](const std::string& word) {
    for (const std::string& w : e.warnings) {
      if (w.find(word) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_EQ(mentions("affinity mask"), e.usable_cpus < e.logical_cpus);
  const auto policy = e.thread_env.find("OMP_WAIT_POLICY");
  const bool passive =
      policy != e.thread_env.end() && policy->second == "PASSIVE";
  EXPECT_EQ(mentions("pthreads build"),
            e.openblas_threading == "pthreads" && !passive);
}

TEST(Environment, JsonHasTheStructsKeys) {
  const nlohmann::json j = to_json(capture_environment());
  for (const char* key : {"cpu_model",
                          "isa",
                          "bf16_path",
                          "logical_cpus",
                          "usable_cpus",
                          "physical_cores",
                          "memory_total_gib",
                          "memory_available_gib",
                          "os",
                          "kernel",
                          "compiler",
                          "backends",
                          "openblas_config",
                          "openblas_core",
                          "openblas_threading",
                          "blas_libraries",
                          "thread_env",
                          "nnbench_version",
                          "git_revision",
                          "fixes_applied",
                          "warnings"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_TRUE(j["cpu_model"].is_string());
  EXPECT_TRUE(j["logical_cpus"].is_number_integer());
  EXPECT_TRUE(j["memory_total_gib"].is_number());
  EXPECT_TRUE(j["isa"].is_array());
  EXPECT_TRUE(j["thread_env"].is_object());
  EXPECT_FALSE(j["openblas_core"].get<std::string>().empty());
}

// The re-executed child learns its fixes from the environment; these paths
// never exec (NNBENCH_ENV_FIXED stops it), so they are safe in a test.
TEST(EnvironmentFixes, ChildReadsBackTheFixesApplied) {
  char arg0[] = "nnbench";
  char* argv[] = {arg0, nullptr};
  setenv("NNBENCH_ENV_FIXED", "1", 1);
  setenv("NNBENCH_ENV_FIXES", "first fix;second fix", 1);
  const std::vector<std::string> expected = {"first fix", "second fix"};
  EXPECT_EQ(apply_environment_fixes(argv), expected);
  EXPECT_EQ(environment_fixes(), expected);
  EXPECT_EQ(capture_environment().fixes_applied, expected);
  setenv("NNBENCH_ENV_FIXES", "", 1);
  EXPECT_TRUE(apply_environment_fixes(argv).empty());
  EXPECT_TRUE(environment_fixes().empty());
  unsetenv("NNBENCH_ENV_FIXED");
  unsetenv("NNBENCH_ENV_FIXES");
}

TEST(EnvironmentFixes, DisabledByTheUser) {
  char arg0[] = "nnbench";
  char* argv[] = {arg0, nullptr};
  setenv("NNBENCH_NO_ENV_FIXES", "1", 1);
  setenv("NNBENCH_ENV_FIXED", "1", 1);
  setenv("NNBENCH_ENV_FIXES", "a fix", 1);
  EXPECT_TRUE(apply_environment_fixes(argv).empty());
  unsetenv("NNBENCH_NO_ENV_FIXES");
  unsetenv("NNBENCH_ENV_FIXED");
  unsetenv("NNBENCH_ENV_FIXES");
}

// AMX outranks AVX-512 BF16 (Sapphire Rapids has both flags); Zen 4 has
// avx512_bf16 only; older CPUs have neither.
TEST(Environment, Bf16PathFollowsTheFlags) {
  EXPECT_EQ(bf16_path({"avx512f", "avx512_bf16", "amx_tile", "amx_bf16"}),
            "AMX (amx_bf16)");
  EXPECT_EQ(bf16_path({"avx2", "avx512f", "avx512_bf16"}),
            "AVX-512 BF16 (avx512_bf16)");
  EXPECT_EQ(bf16_path({"avx2", "fma"}), "none (no bf16 instructions)");
}

// On this machine, the field agrees with /proc/cpuinfo read here.
TEST(Environment, Bf16PathOfThisCpu) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  bool amx = false, avx512 = false;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    amx = line.find(" amx_bf16") != std::string::npos;
    avx512 = line.find(" avx512_bf16") != std::string::npos;
    break;
  }
  const std::string path = capture_environment().bf16_path;
  EXPECT_EQ(path.rfind(amx      ? "AMX"
                       : avx512 ? "AVX-512 BF16"
                                : "none",
                       0),
            0u)
      << path;
}

}  // namespace
}  // namespace nnbench::bench
