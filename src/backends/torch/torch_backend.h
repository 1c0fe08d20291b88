#pragma once
// Factory only: keeps <torch/torch.h> out of every file that includes this.
#include <memory>

#include "backend/backend.h"

namespace nnbench::backends::torch_backend {

std::unique_ptr<backend::Backend> make_backend();

}  // namespace nnbench::backends::torch_backend
