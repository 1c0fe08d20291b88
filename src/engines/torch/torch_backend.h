#pragma once
// The LibTorch backend lives in a module of its own, nnbench_torch.so
// (util/module.h), which only the processes that use it load: its entry
// point is a C name for dlsym. Keeps <torch/torch.h> out of every file that
// includes this.
#include "backend/backend.h"

namespace nnbench::engines::torch_backend {

inline constexpr const char* kModule = "nnbench_torch";
inline constexpr const char* kMakeBackend = "nnbench_torch_make_backend";
// A new backend, owned by the caller.
using MakeBackend = backend::Backend* (*)();

}  // namespace nnbench::engines::torch_backend

extern "C" nnbench::backend::Backend* nnbench_torch_make_backend();
