#pragma once
// The oneDNN backend (oneDNN 2.x API, CPU): blocked layouts chosen by
// oneDNN, primitives and memory reused across steps, fused post-ops.
#include <memory>

#include "backend/backend.h"

namespace nnbench::engines::onednn {

std::unique_ptr<backend::Backend> make_backend();

}  // namespace nnbench::engines::onednn
