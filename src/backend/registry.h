#pragma once
// The explicit list of backends built into this binary.
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace nnbench::backend {

std::vector<std::string> backend_names();
// Throws nnbench::Error listing the built backends.
std::unique_ptr<Backend> make_backend(const std::string& name);

}  // namespace nnbench::backend
