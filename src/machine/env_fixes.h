#pragma once
// Settings that must be right before any library loads (OpenBLAS reads its
// environment in a constructor), so nnbench fixes them by re-executing itself
// once with a corrected environment. See ../shared/docs/environment.md:
//  1. OpenBLAS misdetects AVX-512 Xeons as Prescott (SSE3 kernels, 5x slower):
//     set OPENBLAS_CORETYPE from the CPU's flags when the user has not.
//  2. The default libblas.so.3 is the pthreads OpenBLAS, whose spinning
//     threads fight LibTorch's OpenMP pool (10-20x slower steps): put the
//     OpenMP OpenBLAS first on LD_LIBRARY_PATH.
//  3. glibc's malloc returns large freed blocks to the kernel, so steps
//     page-fault their buffers again (LibTorch CNN steps 13x slower, how
//     often depending on what the process ran before): keep freed memory
//     (mallopt, in-process, and GLIBC_TUNABLES for the workers it starts,
//     util/child_env.h; NNBENCH_SYSTEM_MALLOC=1 opts out).
#include <string>
#include <vector>

namespace nnbench::machine {

// Call first thing in main. If a fix is needed and NNBENCH_NO_ENV_FIXES is
// unset, sets the variables and execv()s /proc/self/exe with the same argv
// (returns only if nothing needed fixing or exec failed). After the re-exec,
// returns the list of fixes applied (read back from NNBENCH_ENV_FIXES),
// with the in-process malloc setting added.
std::vector<std::string> apply_environment_fixes(char** argv);

// The fixes applied in this process (empty if none or disabled).
const std::vector<std::string>& environment_fixes();

}  // namespace nnbench::machine
