#include "machine/cpu.h"

#include <cpuinfo.h>
#include <hwloc.h>

#include <algorithm>
#include <cstdlib>
#include <functional>

#ifndef NNBENCH_CPUINFO_VERSION
#define NNBENCH_CPUINFO_VERSION "unknown"
#endif
#ifndef NNBENCH_HWLOC_VERSION
#define NNBENCH_HWLOC_VERSION "unknown"
#endif

namespace nnbench::machine {
namespace {

// libcpuinfo's names for the x86 microarchitectures it knows.
std::string cpuinfo_uarch_name(cpuinfo_uarch u) {
  switch (u) {
    case cpuinfo_uarch_nehalem:
      return "Nehalem";
    case cpuinfo_uarch_sandy_bridge:
      return "Sandy Bridge";
    case cpuinfo_uarch_ivy_bridge:
      return "Ivy Bridge";
    case cpuinfo_uarch_haswell:
      return "Haswell";
    case cpuinfo_uarch_broadwell:
      return "Broadwell";
    case cpuinfo_uarch_sky_lake:
      return "Skylake";  // Kaby Lake shares it
    case cpuinfo_uarch_palm_cove:
      return "Palm Cove";
    case cpuinfo_uarch_sunny_cove:
      return "Sunny Cove";
    case cpuinfo_uarch_goldmont:
      return "Goldmont";
    case cpuinfo_uarch_goldmont_plus:
      return "Goldmont Plus";
    case cpuinfo_uarch_knights_landing:
      return "Knights Landing";
    case cpuinfo_uarch_knights_mill:
      return "Knights Mill";
    case cpuinfo_uarch_bulldozer:
      return "Bulldozer";
    case cpuinfo_uarch_piledriver:
      return "Piledriver";
    case cpuinfo_uarch_steamroller:
      return "Steamroller";
    case cpuinfo_uarch_excavator:
      return "Excavator";
    case cpuinfo_uarch_zen:
      return "Zen";
    case cpuinfo_uarch_zen2:
      return "Zen 2";
    case cpuinfo_uarch_zen3:
      return "Zen 3";
    case cpuinfo_uarch_neoverse_n1:
      return "Neoverse N1";
    case cpuinfo_uarch_neoverse_v1:
      return "Neoverse V1";
    case cpuinfo_uarch_neoverse_n2:
      return "Neoverse N2";
    default:
      return "";
  }
}

std::string info(hwloc_obj_t obj, const char* name) {
  const char* v = obj ? hwloc_obj_get_info_by_name(obj, name) : nullptr;
  if (!v) return "";
  std::string s = v;
  s.erase(s.find_last_not_of(' ') + 1);  // CPUModel is space-padded
  return s;
}

int number(const std::string& s) {
  return s.empty() ? -1 : std::atoi(s.c_str());
}

void from_hwloc(Cpu& c) {
  hwloc_topology_t t;
  if (hwloc_topology_init(&t) != 0) return;
  if (hwloc_topology_load(t) == 0) {
    hwloc_obj_t pkg = hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, 0);
    c.vendor = info(pkg, "CPUVendor");
    c.name = info(pkg, "CPUModel");
    c.family = number(info(pkg, "CPUFamilyNumber"));
    c.model = number(info(pkg, "CPUModelNumber"));
    c.stepping = number(info(pkg, "CPUStepping"));
    c.packages = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE);
    c.cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    c.logical_cpus = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
    c.numa_nodes = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
    const std::pair<hwloc_obj_type_t, const char*> levels[] = {
        {HWLOC_OBJ_L1CACHE, "L1d"},
        {HWLOC_OBJ_L1ICACHE, "L1i"},
        {HWLOC_OBJ_L2CACHE, "L2"},
        {HWLOC_OBJ_L3CACHE, "L3"}};
    for (const auto& [type, name] : levels) {
      const int n = hwloc_get_nbobjs_by_type(t, type);
      hwloc_obj_t o = hwloc_get_obj_by_type(t, type, 0);
      if (n <= 0 || !o) continue;
      c.caches.push_back({name, static_cast<int64_t>(o->attr->cache.size),
                          static_cast<int>(o->attr->cache.linesize), n,
                          o->cpuset ? hwloc_bitmap_weight(o->cpuset) : 0});
    }
  }
  hwloc_topology_destroy(t);
  // Built against this release; the API version is what the loaded
  // library reports (several releases share one).
  const unsigned v = hwloc_get_api_version();
  c.libraries["hwloc"] = std::string(NNBENCH_HWLOC_VERSION) + " (API " +
                         std::to_string(v >> 16) + "." +
                         std::to_string((v >> 8) & 0xff) + " loaded)";
}

// The extensions that decide which kernels oneDNN, LibTorch and OpenBLAS
// run, in /proc/cpuinfo's spelling.
struct IsaQuery {
  const char* name;
  bool (*cpuinfo)();  // nullptr: this libcpuinfo cannot ask
};

const IsaQuery kIsa[] = {
    {"sse4_2", cpuinfo_has_x86_sse4_2},
    {"avx", cpuinfo_has_x86_avx},
    {"avx2", cpuinfo_has_x86_avx2},
    {"fma", cpuinfo_has_x86_fma3},
    {"avx512f", cpuinfo_has_x86_avx512f},
    {"avx512bw", cpuinfo_has_x86_avx512bw},
    {"avx512vl", cpuinfo_has_x86_avx512vl},
    {"avx512_vnni", cpuinfo_has_x86_avx512vnni},
    {"avx512_bf16", cpuinfo_has_x86_avx512bf16},
    {"avx512_fp16", nullptr},
    {"amx_tile", nullptr},
    {"amx_bf16", nullptr},
    {"amx_int8", nullptr},
};

void from_cpuinfo(Cpu& c, const std::set<std::string>& kernel_flags,
                  bool have_cpuinfo) {
  for (const auto& q : kIsa) {
    bool has = false;
    if (q.cpuinfo && have_cpuinfo) {
      has = q.cpuinfo();
      if (has) c.isa_source[q.name] = "libcpuinfo";
    } else {
      has = kernel_flags.count(q.name) > 0;
      if (has) c.isa_source[q.name] = "/proc/cpuinfo";
    }
    if (has) c.isa.push_back(q.name);
  }
  c.libraries["libcpuinfo"] = NNBENCH_CPUINFO_VERSION;
  // The newer table first: this libcpuinfo files a Zen 4 or a Sapphire
  // Rapids under an older name or none.
  c.microarchitecture =
      microarchitecture_from_model(c.vendor, c.family, c.model);
  if (!c.microarchitecture.empty()) {
    c.microarchitecture_source = std::string(
                                     "family/model table (newer than "
                                     "libcpuinfo ") +
                                 NNBENCH_CPUINFO_VERSION + ")";
    return;
  }
  if (!have_cpuinfo || cpuinfo_get_cores_count() == 0) return;
  c.microarchitecture = cpuinfo_uarch_name(cpuinfo_get_core(0)->uarch);
  if (!c.microarchitecture.empty()) c.microarchitecture_source = "libcpuinfo";
  if (c.name.empty() && cpuinfo_get_packages_count() > 0)
    c.name = cpuinfo_get_package(0)->name;
}

bool in(int x, int lo, int hi) { return x >= lo && x <= hi; }

}  // namespace

std::string microarchitecture_from_model(const std::string& vendor, int family,
                                         int model) {
  if (vendor == "AuthenticAMD") {
    if (family == 0x1a) return "Zen 5";
    if (family == 0x19 && (in(model, 0x10, 0x1f) || in(model, 0x60, 0x7f) ||
                           in(model, 0xa0, 0xaf)))
      return "Zen 4";
  }
  if (vendor == "GenuineIntel" && family == 6) {
    switch (model) {
      case 0x8f:
        return "Sapphire Rapids";
      case 0xcf:
        return "Emerald Rapids";
      case 0xad:
      case 0xae:
        return "Granite Rapids";
      case 0xaf:
        return "Sierra Forest";
      case 0x97:
      case 0x9a:
      case 0xb7:
      case 0xba:
      case 0xbf:
        return "Golden Cove (Alder/Raptor Lake)";
      default:
        break;
    }
  }
  return "";
}

Cpu describe_cpu(const std::set<std::string>& kernel_flags) {
  Cpu c;
  try {
    from_hwloc(c);
    from_cpuinfo(c, kernel_flags, cpuinfo_initialize());
  } catch (...) {
  }
  return c;
}

nlohmann::json to_json(const Cpu& c) {
  const auto known = [](int x) {
    return x >= 0 ? nlohmann::json(x) : nlohmann::json();
  };
  nlohmann::json caches = nlohmann::json::array();
  for (const auto& k : c.caches)
    caches.push_back({{"name", k.name},
                      {"size_bytes", k.size_bytes},
                      {"line_bytes", k.line_bytes},
                      {"instances", k.instances},
                      {"cpus_per_instance", k.cpus_per_instance}});
  return {{"vendor", c.vendor},
          {"name", c.name},
          {"family", known(c.family)},
          {"model", known(c.model)},
          {"stepping", known(c.stepping)},
          {"microarchitecture", c.microarchitecture},
          {"microarchitecture_source", c.microarchitecture_source},
          {"isa", c.isa},
          {"isa_source", c.isa_source},
          {"packages", c.packages},
          {"cores", c.cores},
          {"logical_cpus", c.logical_cpus},
          {"numa_nodes", c.numa_nodes},
          {"caches", caches},
          {"libraries", c.libraries}};
}

}  // namespace nnbench::machine
