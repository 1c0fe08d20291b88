#include "backend/registry.h"

#include "util/error.h"
#ifdef NNBENCH_WITH_TORCH
#include "backends/torch/torch_backend.h"
#endif

namespace nnbench::backend {

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
#ifdef NNBENCH_WITH_TORCH
  names.push_back("torch");
#endif
  return names;
}

std::unique_ptr<Backend> make_backend(const std::string& name) {
#ifdef NNBENCH_WITH_TORCH
  if (name == "torch") return backends::torch_backend::make_backend();
#endif
  std::string known;
  for (const auto& n : backend_names()) known += " " + n;
  throw Error("unknown backend '" + name + "'; built backends:" + known);
}

}  // namespace nnbench::backend
