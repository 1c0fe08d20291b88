#pragma once
// oneDNN's matmul timed for the machine's practical peak (fp32, and bf16
// where the CPU has it), n^3 and (4n) x (n/4) x (n/4): the kernel oneDNN
// picks, its own ISA dispatch.
#include <vector>

#include "backend/backend.h"

namespace nnbench::engines::onednn {

std::vector<backend::GemmRate> time_matmuls(int threads, int n);

}  // namespace nnbench::engines::onednn
