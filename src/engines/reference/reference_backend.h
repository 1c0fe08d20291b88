#pragma once
// The reference backend: plain, readable C++; the correctness oracle.
#include <memory>

#include "backend/backend.h"

namespace nnbench::engines::reference {

std::unique_ptr<backend::Backend> make_backend();

}  // namespace nnbench::engines::reference
