#pragma once
// What the LibTorch engine's parts share: the device named by a run, and
// LibTorch's exceptions as the harness's failures.
#include <torch/torch.h>

#include <memory>
#include <string>

#include "backend/failures.h"
#include "util/error.h"

namespace nnbench::engines::torch_backend {

inline torch::Device parse_device(const std::string& name) {
  std::unique_ptr<torch::Device> d;
  try {
    d = std::make_unique<torch::Device>(name);
  } catch (const c10::Error&) {
    throw Error("unknown device '" + name + "'; use cpu or cuda[:N]");
  }
  if (d->is_cuda() && !torch::cuda::is_available())
    throw Error("device '" + name +
                "' requested, but this LibTorch has no CUDA support or no GPU "
                "is visible; use --device cpu");
  if (!d->is_cpu() && !d->is_cuda())
    throw Error("device '" + name + "' is not supported; use cpu or cuda");
  return *d;
}

// LibTorch reports allocation failures as c10::Error with these texts.
inline bool is_oom(const std::string& what) {
  return what.find("can't allocate memory") != std::string::npos ||
         what.find("out of memory") != std::string::npos ||
         what.find("DefaultCPUAllocator") != std::string::npos;
}

template <typename F>
auto translate_errors(F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc& e) {
    throw backend::OutOfMemory(e.what());
  } catch (const c10::Error& e) {
    const std::string what = e.what_without_backtrace();
    if (is_oom(what)) throw backend::OutOfMemory(what);
    throw std::runtime_error(what);
  }
}

}  // namespace nnbench::engines::torch_backend
