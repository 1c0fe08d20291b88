#include "machine/environment.h"

#include <dlfcn.h>
#include <link.h>
#include <openssl/evp.h>
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "machine/env_fixes.h"
#include "machine/proc_text.h"
#include "machine/warnings.h"

#ifndef NNBENCH_VERSION
#define NNBENCH_VERSION "unknown"
#endif
#ifndef NNBENCH_GIT_REVISION
#define NNBENCH_GIT_REVISION "unknown"
#endif

extern char** environ;

namespace nnbench::machine {
namespace {

using proc::first_line;
using proc::guarded;
using proc::lookup;
using proc::lower;
using proc::trim;

// The kernel's CPU flags: the hypervisor bit, and the ISA extensions this
// libcpuinfo cannot query (machine/cpu.cpp).
std::set<std::string> kernel_cpu_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::set<std::string> flags;
  for (std::string line; std::getline(in, line);) {
    const auto pos = line.find(':');
    if (pos == std::string::npos || trim(line.substr(0, pos)) != "flags")
      continue;
    std::istringstream words(line.substr(pos + 1));
    for (std::string f; words >> f;) flags.insert(f);
    break;
  }
  return flags;
}

int usable_cpu_count() {
  const int max_cpus = std::max(1024L, sysconf(_SC_NPROCESSORS_CONF));
  cpu_set_t* set = CPU_ALLOC(max_cpus);
  if (set == nullptr) return 0;
  const size_t size = CPU_ALLOC_SIZE(max_cpus);
  CPU_ZERO_S(size, set);
  const int count =
      sched_getaffinity(0, size, set) == 0 ? CPU_COUNT_S(size, set) : 0;
  CPU_FREE(set);
  return count;
}

double meminfo_gib(const std::string& key) {
  const std::string kb = lookup("/proc/meminfo", key, ':');  // "123 kB"
  return kb.empty() ? 0 : std::stod(kb) / (1024.0 * 1024.0);
}

}  // namespace

double available_memory_bytes() {
  try {
    return meminfo_gib("MemAvailable") * 1024.0 * 1024.0 * 1024.0;
  } catch (const std::exception&) {
    return 0;
  }
}

namespace {

std::string os_name() {
  std::string name = lookup("/etc/os-release", "PRETTY_NAME", '=');
  if (name.empty()) name = lookup("/usr/lib/os-release", "PRETTY_NAME", '=');
  return name;
}

std::string kernel_release() {
  utsname u{};
  return uname(&u) == 0 ? u.release : "";
}

std::string compiler_name() {
#if defined(__clang__)
  return "clang " __clang_version__;
#elif defined(__GNUC__)
  return "gcc " __VERSION__;
#else
  return "unknown";
#endif
}

// Looked up at run time, not linked: what matters is the OpenBLAS that the
// process actually bound to (LibTorch may bring its own through libblas).
template <class Fn>
Fn openblas_fn(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

std::string openblas_string(const char* name) {
  auto fn = openblas_fn<char* (*)()>(name);
  const char* s = fn ? fn() : nullptr;
  return s ? trim(s) : "";
}

std::string openblas_threading() {
  auto fn = openblas_fn<int (*)()>("openblas_get_parallel");
  if (fn == nullptr) return "";
  switch (fn()) {
    case 0:
      return "sequential";
    case 1:
      return "pthreads";
    case 2:
      return "openmp";
    default:
      return "unknown";
  }
}

bool is_blas_path(const std::string& path) {
  const std::string name = lower(path.substr(path.rfind('/') + 1));
  return name.find("blas") != std::string::npos ||
         name.find("lapack") != std::string::npos;
}

int collect_blas(dl_phdr_info* info, size_t, void* data) {
  auto* libs = static_cast<std::vector<std::string>*>(data);
  if (info->dlpi_name == nullptr || !is_blas_path(info->dlpi_name)) return 0;
  char resolved[PATH_MAX];
  const char* real = realpath(info->dlpi_name, resolved);
  const std::string path = real ? real : info->dlpi_name;
  if (std::find(libs->begin(), libs->end(), path) == libs->end()) {
    libs->push_back(path);
  }
  return 0;
}

std::vector<std::string> blas_libraries() {
  std::vector<std::string> libs;
  dl_iterate_phdr(collect_blas, &libs);
  return libs;
}

// Every variable that changes which kernels run or on how many threads:
// the BLAS and OpenMP runtimes', oneDNN's (DNNL_MAX_CPU_ISA ...),
// LibTorch's ATen dispatch, and the framework engines' (TF_*, XLA_FLAGS,
// MXNET_*).
bool is_thread_env(const std::string& name) {
  static const char* const kPrefixes[] = {
      "OMP_",    "GOMP_", "KMP_",   "MKL_",  "OPENBLAS_", "GOTO_",   "DNNL_",
      "ONEDNN_", "TF_",   "MXNET_", "ATEN_", "TORCH_",    "NNBENCH_"};
  if (name == "LD_LIBRARY_PATH" || name == "LD_PRELOAD" || name == "XLA_FLAGS")
    return true;
  // Terraform's TF_CLI_* and TF_VAR_* are not TensorFlow's.
  if (name.rfind("TF_CLI_", 0) == 0 || name.rfind("TF_VAR_", 0) == 0)
    return false;
  return std::any_of(std::begin(kPrefixes), std::end(kPrefixes),
                     [&](const char* p) { return name.rfind(p, 0) == 0; });
}

std::map<std::string, std::string> thread_env() {
  std::map<std::string, std::string> vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry = *e;
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    if (is_thread_env(entry.substr(0, eq))) {
      vars[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
  }
  return vars;
}

void fill_cpu(Environment& e, std::set<std::string>& flags) {
  guarded([&] { flags = kernel_cpu_flags(); });
  e.cpu = describe_cpu(flags);
  e.bf16_path = bf16_path(e.cpu.isa);
  e.logical_cpus =
      static_cast<int>(std::max(0L, sysconf(_SC_NPROCESSORS_ONLN)));
  e.usable_cpus = usable_cpu_count();
}

void fill_software(Environment& e) {
  guarded([&] { e.os = os_name(); });
  guarded([&] { e.kernel = kernel_release(); });
  guarded([&] { e.compiler = compiler_name(); });
  guarded([&] { e.openblas_config = openblas_string("openblas_get_config"); });
  guarded([&] { e.openblas_core = openblas_string("openblas_get_corename"); });
  guarded([&] { e.openblas_threading = openblas_threading(); });
  guarded([&] { e.blas_libraries = blas_libraries(); });
  guarded([&] { e.thread_env = thread_env(); });
  guarded([&] { e.nnbench_version = NNBENCH_VERSION; });
  guarded([&] { e.git_revision = NNBENCH_GIT_REVISION; });
  guarded([&] { e.fixes_applied = environment_fixes(); });
}

}  // namespace

namespace {

std::string host_hash() {
  if (const char* a = std::getenv("NNBENCH_ANONYMOUS");
      a && *a && std::string(a) != "0")
    return "";
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name - 1) != 0 || !*name) return "";
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(name, std::char_traits<char>::length(name), digest, &len,
             EVP_sha256(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out = "sha256:";
  for (unsigned int i = 0; i < 8 && i < len; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

// "Model: \t NVIDIA H100 80GB HBM3" in each GPU's information file.
std::vector<std::string> nvidia_gpus() {
  std::vector<std::string> out;
  std::error_code ec;
  std::vector<std::filesystem::path> dirs;
  for (const auto& d :
       std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec))
    dirs.push_back(d.path());
  std::sort(dirs.begin(), dirs.end());  // by PCI address
  for (const auto& d : dirs) {
    std::ifstream in(d / "information");
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("Model:", 0) != 0) continue;
      const size_t v = line.find_first_not_of(" \t", 6);
      if (v != std::string::npos) out.push_back(line.substr(v));
      break;
    }
  }
  return out;
}

}  // namespace

Environment capture_environment() {
  Environment e;
  e.host = host_hash();
  guarded([&] { e.instance = detect_instance(); });
  guarded([&] { e.gpus = nvidia_gpus(); });
  std::set<std::string> flags;
  fill_cpu(e, flags);
  guarded([&] { e.memory_total_gib = meminfo_gib("MemTotal"); });
  guarded([&] { e.memory_available_gib = meminfo_gib("MemAvailable"); });
  fill_software(e);
  e.warnings = environment_warnings(e, flags);
  return e;
}

std::string bf16_path(const std::vector<std::string>& isa) {
  const auto has = [&](const char* f) {
    return std::find(isa.begin(), isa.end(), f) != isa.end();
  };
  if (has("amx_bf16")) return "AMX (amx_bf16)";
  if (has("avx512_bf16")) return "AVX-512 BF16 (avx512_bf16)";
  return "none (no bf16 instructions)";
}

namespace {

nlohmann::json backends_json(const std::vector<backend::Description>& all) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& d : all)
    j[d.name] = {{"libraries", d.libraries},
                 {"devices", d.devices},
                 {"precisions", d.precisions},
                 {"inference_only_precisions", d.inference_only},
                 {"optimizers", d.optimizers},
                 {"can",
                  {{"data_parallel", d.can.data_parallel},
                   {"overlap", d.can.overlap},
                   {"lr_schedules", d.can.lr_schedules},
                   {"training", d.can.training}}}};
  for (const auto& d : all)
    if (!d.unavailable.empty()) j[d.name]["unavailable"] = d.unavailable;
  return j;
}

}  // namespace

nlohmann::json to_json(const Environment& e) {
  return {{"host", e.host.empty() ? nlohmann::json() : nlohmann::json(e.host)},
          {"cpu", to_json(e.cpu)},
          {"bf16_path", e.bf16_path},
          {"logical_cpus", e.logical_cpus},
          {"usable_cpus", e.usable_cpus},
          {"instance", to_json(e.instance)},
          {"gpus", e.gpus},
          {"memory_total_gib", e.memory_total_gib},
          {"memory_available_gib", e.memory_available_gib},
          {"os", e.os},
          {"kernel", e.kernel},
          {"compiler", e.compiler},
          {"backends", backends_json(e.backends)},
          {"openblas_config", e.openblas_config},
          {"openblas_core", e.openblas_core},
          {"openblas_threading", e.openblas_threading},
          {"blas_libraries", e.blas_libraries},
          {"thread_env", e.thread_env},
          {"nnbench_version", e.nnbench_version},
          {"git_revision", e.git_revision},
          {"fixes_applied", e.fixes_applied},
          {"warnings", e.warnings}};
}

}  // namespace nnbench::machine
