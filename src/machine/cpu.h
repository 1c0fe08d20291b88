#pragma once
// The processor, described by the libraries made for it: hwloc (topology,
// caches, vendor, family/model numbers) and libcpuinfo (microarchitecture,
// ISA extensions), with the gaps of Debian's libcpuinfo (a 2022 snapshot:
// no Zen 4/5, no Sapphire Rapids, no AMX or AVX-512 FP16 queries) filled
// and labelled as such.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace nnbench::machine {

struct Cache {
  std::string name;        // "L1d", "L1i", "L2", "L3"
  int64_t size_bytes = 0;  // of one instance
  int line_bytes = 0;
  int instances = 0;          // in the machine
  int cpus_per_instance = 0;  // logical CPUs sharing one
};

struct Cpu {
  std::string vendor;  // "AuthenticAMD", "GenuineIntel"
  std::string name;    // the marketing/model string
  int family = -1, model = -1, stepping = -1;
  std::string microarchitecture;  // "Zen 5", "Sapphire Rapids", ...
  // Where microarchitecture came from: "libcpuinfo", "family/model table
  // (newer than libcpuinfo <version>)", or "" when unknown.
  std::string microarchitecture_source;
  std::vector<std::string> isa;  // the extensions that matter for DL kernels
  // Per ISA extension, who reported it: "libcpuinfo" or "/proc/cpuinfo"
  // (the kernel's view, for extensions this libcpuinfo cannot query).
  std::map<std::string, std::string> isa_source;
  int packages = 0, cores = 0, logical_cpus = 0, numa_nodes = 0;
  std::vector<Cache> caches;
  std::map<std::string, std::string> libraries;  // {"hwloc", "2.9.0"}, ...
};

// Never throws; what a library cannot tell stays empty/-1/0. `kernel_flags`
// are /proc/cpuinfo's flags (read by the caller, which also needs them for
// the hypervisor check).
Cpu describe_cpu(const std::set<std::string>& kernel_flags);

// The microarchitecture from vendor, family and model for CPUs newer than
// the packaged libcpuinfo; "" when the table does not know it.
std::string microarchitecture_from_model(const std::string& vendor, int family,
                                         int model);

nlohmann::json to_json(const Cpu& c);

}  // namespace nnbench::machine
