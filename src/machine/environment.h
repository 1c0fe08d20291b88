#pragma once
// What machine and software a result was measured on, and what in it would
// distort the numbers. Captured once per process, written with every result.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "machine/cpu.h"
#include "machine/instance.h"

namespace nnbench::machine {

struct Environment {
  // hwloc and libcpuinfo's view: name, microarchitecture, ISA extensions,
  // caches, topology (machine/cpu.h).
  Cpu cpu;
  // How bf16 arithmetic runs on this CPU: "AMX (amx_bf16)", "AVX-512 BF16
  // (avx512_bf16)" or "none (no bf16 instructions)". Results at bf16 differ
  // by an order of magnitude between the first two.
  std::string bf16_path;
  int logical_cpus = 0;  // online CPUs
  int usable_cpus = 0;   // CPUs in this process's affinity mask
  double memory_total_gib = 0, memory_available_gib = 0;
  // Which machine, without naming it: "sha256:" and the first 16 hex digits
  // of the SHA-256 of its host name, so that runs gathered from several
  // machines tell two of the same CPU apart; "" when the user asked for
  // none (`nnbench --anonymous`, NNBENCH_ANONYMOUS=1).
  std::string host;
  // The cloud instance, when named (--instance) or told by the cloud's
  // metadata service (machine/instance.h), with its catalog price.
  std::optional<MachineInstance> instance;
  // NVIDIA GPUs the driver lists (/proc/driver/nvidia/gpus), by model name;
  // empty on a machine without that driver.
  std::vector<std::string> gpus;
  std::string os;      // /etc/os-release PRETTY_NAME
  std::string kernel;  // uname -r
  std::string compiler;
  // Every built backend as it describes itself (libraries and versions,
  // devices, precisions, optimizers); filled by the CLI from the registry.
  std::vector<backend::Description> backends;
  std::string openblas_config;     // openblas_get_config()
  std::string openblas_core;       // openblas_get_corename()
  std::string openblas_threading;  // "sequential", "pthreads", "openmp"
  std::vector<std::string> blas_libraries;  // loaded BLAS/LAPACK .so paths
  std::map<std::string, std::string> thread_env;  // OMP_*, OPENBLAS_* ...
  std::string nnbench_version, git_revision;
  std::vector<std::string> fixes_applied;  // by apply_environment_fixes
  std::vector<std::string> warnings;       // settings that distort results
};

// Reads /proc, uname, the loaded libraries. Never throws; unknown fields
// stay empty.
Environment capture_environment();

nlohmann::json to_json(const Environment& e);

// MemAvailable now, in bytes; 0 when unknown (memory checks then skip).
double available_memory_bytes();

// The bf16 path named from the CPU's ISA extensions (Cpu::isa).
std::string bf16_path(const std::vector<std::string>& isa);

}  // namespace nnbench::machine
