#pragma once
// What in the captured environment makes timings slower or noisier than the
// hardware allows, each said with its fix: BLAS kernels below the CPU's ISA,
// two thread pools, an affinity mask or cgroup quota smaller than the
// machine, other load, a non-performance governor, a hypervisor.
#include <set>
#include <string>
#include <vector>

#include "machine/environment.h"

namespace nnbench::machine {

// The warnings for `e` (its CPU, software and thread variables filled in);
// `cpu_flags` are the kernel's CPU flags (the hypervisor bit). A probe that
// fails leaves its warning out and the others in.
std::vector<std::string> environment_warnings(
    const Environment& e, const std::set<std::string>& cpu_flags);

}  // namespace nnbench::machine
