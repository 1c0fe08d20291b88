#include "machine/env_fixes.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <malloc.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "util/child_env.h"
#include "util/module.h"

#ifndef NNBENCH_OPENBLAS_DIR
#define NNBENCH_OPENBLAS_DIR "/usr/lib/x86_64-linux-gnu/openblas-openmp"
#endif

namespace nnbench::machine {
namespace {

// Set in the re-executed child so that it never execs again.
constexpr const char* kFixedVar = "NNBENCH_ENV_FIXED";
constexpr const char* kFixesVar = "NNBENCH_ENV_FIXES";
constexpr char kFixSeparator = ';';

std::vector<std::string>& fixes_storage() {
  static std::vector<std::string> fixes;
  return fixes;
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string cpu_flags() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("flags", 0) == 0) return line + " ";
  }
  return "";
}

bool has_flag(const std::string& flags, const std::string& flag) {
  return flags.find(" " + flag + " ") != std::string::npos;
}

struct Fix {
  std::string var, value, reason;
};

// The core that the OpenBLAS already loaded into this process picked ("" if
// none is loaded): DYNAMIC_ARCH detection is the same in every build.
std::string loaded_openblas_core() {
  auto fn = reinterpret_cast<char* (*)()>(
      dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  const char* core = fn ? fn() : nullptr;
  return core ? core : "";
}

// Cores whose kernels are at least as fast as `target`'s: forcing the
// target then changes nothing, or makes things slower.
bool already_good(const std::string& core, const std::string& target) {
  std::string c = core;
  for (char& ch : c) ch = static_cast<char>(std::tolower(ch));
  const bool avx512 =
      c == "skylakex" || c == "cooperlake" || c == "sapphirerapids";
  return avx512 || (target == "Haswell" && (c == "haswell" || c == "zen"));
}

std::optional<Fix> coretype_fix() {
  if (std::getenv("OPENBLAS_CORETYPE")) return std::nullopt;  // user's choice
  const std::string flags = cpu_flags();
  const bool avx512 = has_flag(flags, "avx512f");
  if (!avx512 && !has_flag(flags, "avx2")) return std::nullopt;
  const std::string target = avx512 ? "SkylakeX" : "Haswell";
  const std::string core = loaded_openblas_core();
  if (already_good(core, target)) return std::nullopt;
  const std::string cpu = avx512 ? "AVX-512" : "AVX2";
  const std::string why =
      core.empty() ? "OpenBLAS can misdetect this " + cpu + " CPU"
                   : "OpenBLAS detected this " + cpu + " CPU as " + core;
  return Fix{"OPENBLAS_CORETYPE", target,
             "OPENBLAS_CORETYPE=" + target + " (" + why + ")"};
}

std::string without_trailing_slashes(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

bool first_path_entry_is(const std::string& path_list, const std::string& dir) {
  const std::string first = path_list.substr(0, path_list.find(':'));
  return without_trailing_slashes(first) == without_trailing_slashes(dir);
}

// Whether any loaded library is the pthreads OpenBLAS. LibTorch reaches
// BLAS through libblas.so.3, which the Debian alternatives point at the
// pthreads build even when nnbench itself links the OpenMP libopenblas.so.0:
// both copies end up loaded, so checking openblas_get_parallel() of one of
// them is not enough.
bool pthreads_openblas_loaded() {
  bool found = false;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        // Loaded through the alternatives symlink: resolve it.
        char real[PATH_MAX];
        if (info->dlpi_name && *info->dlpi_name &&
            realpath(info->dlpi_name, real) != nullptr &&
            std::strstr(real, "openblas-pthread") != nullptr)
          *static_cast<bool*>(data) = true;
        return 0;
      },
      &found);
  return found;
}

// Whether the libblas.so.3 the dynamic loader would find now (on
// LD_LIBRARY_PATH, else in the system's folders) is the pthreads OpenBLAS.
bool default_blas_is_pthreads() {
  std::vector<std::string> dirs;
  std::istringstream path(env_or_empty("LD_LIBRARY_PATH"));
  for (std::string d; std::getline(path, d, ':');)
    if (!d.empty()) dirs.push_back(d);
  const std::string multiarch =
      std::filesystem::path(NNBENCH_OPENBLAS_DIR).parent_path().string();
  dirs.insert(dirs.end(), {multiarch, "/usr/lib", "/lib"});
  for (const auto& d : dirs) {
    char real[PATH_MAX];
    if (realpath((d + "/libblas.so.3").c_str(), real) != nullptr)
      return std::strstr(real, "openblas-pthread") != nullptr;
  }
  return false;
}

// LibTorch reaches BLAS through libblas.so.3, and it is loaded later than
// this check (the torch module, on first use: util/module.h): where this
// binary has the module, what libblas.so.3 resolves to decides.
bool pthreads_openblas_ahead() {
  std::error_code ec;
  const std::string torch = util::module_path("nnbench_torch");
  return !torch.empty() && std::filesystem::exists(torch, ec) &&
         default_blas_is_pthreads();
}

std::optional<Fix> library_path_fix() {
  if (!pthreads_openblas_loaded() && !pthreads_openblas_ahead())
    return std::nullopt;
  const std::string dir = NNBENCH_OPENBLAS_DIR;
  std::error_code ec;
  if (!std::filesystem::exists(dir + "/libblas.so.3", ec)) return std::nullopt;
  const std::string current = env_or_empty("LD_LIBRARY_PATH");
  if (first_path_entry_is(current, dir)) return std::nullopt;
  return Fix{"LD_LIBRARY_PATH", current.empty() ? dir : dir + ":" + current,
             "LD_LIBRARY_PATH=" + dir +
                 " first: the OpenMP OpenBLAS instead of the pthreads one"};
}

std::vector<Fix> needed_fixes() {
  std::vector<Fix> fixes;
  if (auto f = coretype_fix()) fixes.push_back(*f);
  if (auto f = library_path_fix()) fixes.push_back(*f);
  return fixes;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::istringstream in(s);
  for (std::string part; std::getline(in, part, sep);) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

std::string join_reasons(const std::vector<Fix>& fixes) {
  std::string joined;
  for (const Fix& f : fixes) {
    if (!joined.empty()) joined += kFixSeparator;
    joined += f.reason;
  }
  return joined;
}

// Sets the fixes, remembering what was there so a failed exec can undo them.
std::map<std::string, std::optional<std::string>> set_all(
    const std::vector<Fix>& fixes) {
  std::map<std::string, std::optional<std::string>> previous;
  auto set = [&](const std::string& var, const std::string& value) {
    const char* old = std::getenv(var.c_str());
    previous.emplace(var, old ? std::optional<std::string>(old) : std::nullopt);
    setenv(var.c_str(), value.c_str(), 1);
  };
  for (const Fix& f : fixes) set(f.var, f.value);
  set(kFixedVar, "1");
  set(kFixesVar, join_reasons(fixes));
  return previous;
}

void restore_all(
    const std::map<std::string, std::optional<std::string>>& previous) {
  for (const auto& [var, value] : previous) {
    if (value) {
      setenv(var.c_str(), value->c_str(), 1);
    } else {
      unsetenv(var.c_str());
    }
  }
}

// 3. glibc's malloc gives large freed blocks back to the kernel (mmap above
// a threshold that moves with what the process freed before, and heap
// trimming), so a step can page-fault all its buffers again every time:
// LibTorch's mnist-cnn inference took 130 ms a step in a fresh process
// and 10 ms with freed memory kept, on the same machine (docs/performance
// .md). Whether a process got the fast or the slow state depended on what
// it ran before. Kept memory is what long-running trainers and PyTorch's
// recommended jemalloc/tcmalloc give. In-process (mallopt), so it is set
// again after the re-exec. NNBENCH_SYSTEM_MALLOC=1 keeps glibc's defaults.
void keep_freed_memory() {
  if (!env_or_empty("NNBENCH_SYSTEM_MALLOC").empty()) return;
  // The user's own allocator or malloc tunables: theirs to choose.
  if (env_or_empty("LD_PRELOAD").find("malloc") != std::string::npos ||
      env_or_empty("GLIBC_TUNABLES").find("malloc") != std::string::npos)
    return;
  if (mallopt(M_MMAP_MAX, 0) != 1 || mallopt(M_TRIM_THRESHOLD, INT_MAX) != 1)
    return;
  // A framework's worker gets the same (a fresh MXNet worker's ResNet-56
  // step page-faulted 27,000 times, 3-9 % of its time, where the same
  // engine in a process with more history faulted none); the user's other
  // tunables stay.
  const std::string mine =
      "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=" +
      std::to_string(INT_MAX);
  const std::string theirs = env_or_empty("GLIBC_TUNABLES");
  util::set_child_env("GLIBC_TUNABLES",
                      theirs.empty() ? mine : theirs + ":" + mine);
  fixes_storage().push_back(
      "glibc malloc keeps freed memory (M_MMAP_MAX=0, M_TRIM_THRESHOLD=2 "
      "GiB): with its defaults a step can page-fault its buffers again "
      "every time, and how often depends on what the process ran before; "
      "NNBENCH_SYSTEM_MALLOC=1 keeps the defaults");
}

}  // namespace

std::vector<std::string> apply_environment_fixes(char** argv) {
  if (!env_or_empty("NNBENCH_NO_ENV_FIXES").empty()) return {};
  if (env_or_empty(kFixedVar) == "1") {
    fixes_storage() = split(env_or_empty(kFixesVar), kFixSeparator);
    keep_freed_memory();
    return fixes_storage();
  }
  const std::vector<Fix> fixes = needed_fixes();
  if (!fixes.empty() && argv != nullptr && argv[0] != nullptr) {
    const auto previous = set_all(fixes);
    execv("/proc/self/exe", argv);
    // Only reached if exec failed: this process still runs with the old
    // environment, so claiming the fixes would misreport it.
    restore_all(previous);
  }
  keep_freed_memory();
  return fixes_storage();
}

const std::vector<std::string>& environment_fixes() { return fixes_storage(); }

}  // namespace nnbench::machine
