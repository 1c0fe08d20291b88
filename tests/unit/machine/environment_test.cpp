#include "machine/environment.h"

#include <gtest/gtest.h>
#include <malloc.h>
#include <stdlib.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "machine/env_fixes.h"

namespace nnbench::machine {
namespace {

TEST(Environment, CapturesThisMachine) {
  const Environment e = capture_environment();
  EXPECT_FALSE(e.cpu.name.empty());
  EXPECT_GE(e.logical_cpus, 1);
  EXPECT_GE(e.usable_cpus, 1);
  EXPECT_LE(e.usable_cpus, e.logical_cpus);
  // hwloc's count of processing units is the online CPUs sysconf counts.
  EXPECT_EQ(e.cpu.logical_cpus, e.logical_cpus);
  EXPECT_GE(e.cpu.cores, 1);
  EXPECT_LE(e.cpu.cores, e.cpu.logical_cpus);
  EXPECT_GE(e.cpu.packages, 1);
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
  for (const char* key :
       {"cpu", "bf16_path", "logical_cpus", "usable_cpus", "memory_total_gib",
        "memory_available_gib", "os", "kernel", "compiler", "backends",
        "openblas_config", "openblas_core", "openblas_threading",
        "blas_libraries", "thread_env", "nnbench_version", "git_revision",
        "fixes_applied", "warnings"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_TRUE(j["cpu"]["name"].is_string());
  EXPECT_TRUE(j["cpu"]["microarchitecture"].is_string());
  EXPECT_TRUE(j["cpu"]["caches"].is_array());
  EXPECT_TRUE(j["logical_cpus"].is_number_integer());
  EXPECT_TRUE(j["memory_total_gib"].is_number());
  EXPECT_TRUE(j["cpu"]["isa"].is_array());
  EXPECT_TRUE(j["thread_env"].is_object());
  EXPECT_FALSE(j["openblas_core"].get<std::string>().empty());
}

// The re-executed child learns its fixes from the environment; these paths
// never exec (NNBENCH_ENV_FIXED stops it), so they are safe in a test.
// Every variable that changes kernels or threads is recorded, and one that
// holds a library below the CPU's instruction set is warned about (every
// x86-64 machine here has at least AVX, above oneDNN's SSE4.1).
TEST(Environment, KernelVariablesRecordedAndForcedIsaWarned) {
  const std::vector<std::pair<const char*, const char*>> vars = {
      {"DNNL_MAX_CPU_ISA", "SSE41"},
      {"XLA_FLAGS", "--xla_cpu_x=1"},
      {"MXNET_ENGINE_TYPE", "NaiveEngine"},
      {"TF_NUM_INTRAOP_THREADS", "2"},
      {"GOMP_SPINCOUNT", "0"},
      {"ONEDNN_VERBOSE", "0"}};
  for (const auto& [k, v] : vars) setenv(k, v, 1);
  setenv("TF_CLI_CONFIG_FILE", "/x", 1);  // Terraform's, not TensorFlow's
  const Environment e = capture_environment();
  for (const auto& [k, v] : vars) {
    const auto it = e.thread_env.find(k);
    ASSERT_NE(it, e.thread_env.end()) << k;
    EXPECT_EQ(it->second, v);
  }
  EXPECT_EQ(e.thread_env.count("TF_CLI_CONFIG_FILE"), 0u);
  if (std::find(e.cpu.isa.begin(), e.cpu.isa.end(), "avx") != e.cpu.isa.end()) {
    EXPECT_TRUE(std::any_of(e.warnings.begin(), e.warnings.end(),
                            [](const std::string& w) {
                              return w.rfind(
                                         "DNNL_MAX_CPU_ISA=SSE41 holds "
                                         "its library to SSE kernels",
                                         0) == 0;
                            }));
  }
  for (const auto& [k, v] : vars) unsetenv(k);
  unsetenv("TF_CLI_CONFIG_FILE");
}

TEST(EnvironmentFixes, ChildReadsBackTheFixesApplied) {
  char arg0[] = "nnbench";
  char* argv[] = {arg0, nullptr};
  setenv("NNBENCH_SYSTEM_MALLOC", "1", 1);  // the malloc fix: its own test
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
  unsetenv("NNBENCH_SYSTEM_MALLOC");
}

// Kept freed memory: a 64 MiB block comes from the heap, not from its own
// mmap (which glibc's defaults give it, and unmap on free).
TEST(EnvironmentFixes, MallocKeepsFreedMemory) {
  char arg0[] = "nnbench";
  char* argv[] = {arg0, nullptr};
  setenv("NNBENCH_ENV_FIXED", "1", 1);
  setenv("NNBENCH_ENV_FIXES", "", 1);
  const auto fixes = apply_environment_fixes(argv);
  unsetenv("NNBENCH_ENV_FIXED");
  unsetenv("NNBENCH_ENV_FIXES");
  ASSERT_EQ(fixes.size(), 1u);
  EXPECT_NE(fixes[0].find("M_MMAP_MAX=0"), std::string::npos) << fixes[0];
  const size_t mapped_before = mallinfo2().hblks;
  void* volatile p = std::malloc(64u << 20);
  EXPECT_EQ(mallinfo2().hblks, mapped_before);
  std::free(p);
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
}  // namespace nnbench::machine

namespace nnbench::machine {
namespace {

// Family/model numbers from AMD's and Intel's processor documentation: the
// table covers what Debian's libcpuinfo predates and nothing older.
TEST(Cpu, MicroarchitectureTableKnowsTheCpusLibcpuinfoPredates) {
  EXPECT_EQ(microarchitecture_from_model("AuthenticAMD", 0x19, 0x11), "Zen 4");
  EXPECT_EQ(microarchitecture_from_model("AuthenticAMD", 0x19, 0x61), "Zen 4");
  EXPECT_EQ(microarchitecture_from_model("AuthenticAMD", 0x1a, 0x02), "Zen 5");
  EXPECT_EQ(microarchitecture_from_model("GenuineIntel", 6, 0x8f),
            "Sapphire Rapids");
  EXPECT_EQ(microarchitecture_from_model("GenuineIntel", 6, 0xcf),
            "Emerald Rapids");
  // Older ones are libcpuinfo's to name: Milan (Zen 3), Cascade Lake.
  EXPECT_EQ(microarchitecture_from_model("AuthenticAMD", 0x19, 0x01), "");
  EXPECT_EQ(microarchitecture_from_model("GenuineIntel", 6, 0x55), "");
  EXPECT_EQ(microarchitecture_from_model("", -1, -1), "");
}

// What hwloc and libcpuinfo report agrees with the kernel's own view.
TEST(Cpu, DescriptionAgreesWithTheKernel) {
  const Environment e = capture_environment();
  const Cpu& c = e.cpu;
  std::ifstream in("/proc/cpuinfo");
  std::string line, vendor;
  int family = -1;
  std::set<std::string> flags;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    const std::string value = line.substr(colon + 1);
    if (key == "vendor_id" && vendor.empty())
      vendor = value.substr(value.find_first_not_of(' '));
    if (key == "cpu family" && family < 0) family = std::stoi(value);
    if (key == "flags" && flags.empty()) {
      std::istringstream words(value);
      for (std::string f; words >> f;) flags.insert(f);
    }
  }
  if (vendor.empty())
    GTEST_SKIP() << "/proc/cpuinfo has no vendor_id (not x86)";
  EXPECT_EQ(c.vendor, vendor);
  EXPECT_EQ(c.family, family);
  // Every extension recorded is one the kernel lists, whoever reported it.
  for (const auto& f : c.isa) EXPECT_TRUE(flags.count(f)) << f;
  for (const char* f : {"avx2", "avx512f", "avx512_bf16", "amx_bf16"})
    EXPECT_EQ(flags.count(f) > 0,
              std::find(c.isa.begin(), c.isa.end(), f) != c.isa.end())
        << f;
  EXPECT_EQ(c.isa.size(), c.isa_source.size());
  EXPECT_FALSE(c.libraries.at("hwloc").empty());
}

}  // namespace
}  // namespace nnbench::machine
