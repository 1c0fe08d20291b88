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

#ifndef NNBENCH_VERSION
#define NNBENCH_VERSION "unknown"
#endif
#ifndef NNBENCH_GIT_REVISION
#define NNBENCH_GIT_REVISION "unknown"
#endif

extern char** environ;

namespace nnbench::machine {
namespace {

// Each probe runs on its own so that one failure leaves the rest captured.
template <class F>
void guarded(F&& probe) noexcept {
  try {
    probe();
  } catch (...) {
  }
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n\"");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r\n\"");
  return s.substr(first, last - first + 1);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(c));
  return s;
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return trim(line);
}

// "key<sep>value" -> value for the first line whose key matches.
std::string lookup(const std::string& path, const std::string& key, char sep) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const auto pos = line.find(sep);
    if (pos != std::string::npos && trim(line.substr(0, pos)) == key) {
      return trim(line.substr(pos + 1));
    }
  }
  return "";
}

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

void fill_warnings(Environment& e, const std::set<std::string>& flags) {
  guarded([&] { warn_openblas_core(e, e.warnings); });
  guarded([&] { warn_pthreads_blas(e, e.warnings); });
  guarded([&] { warn_forced_isa(e, e.warnings); });
  guarded([&] { warn_affinity(e, e.warnings); });
  guarded([&] { warn_cpu_quota(e, e.warnings); });
  guarded([&] { warn_busy_machine(e, e.warnings); });
  guarded([&] { warn_governor(e.warnings); });
  guarded([&] { warn_hypervisor(flags, e.warnings); });
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
  fill_warnings(e, flags);
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
