#pragma once
// The explicit list of backends built into this binary (one line each in
// src/engines/built_in.cpp), plus any a test registers.
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace nnbench::backend {

// The correctness oracle every other backend is checked against; always
// built and always first in backend_names().
inline constexpr const char* kOracle = "reference";

std::vector<std::string> backend_names();
// Throws nnbench::Error listing the built backends.
std::unique_ptr<Backend> make_backend(const std::string& name);
// make_backend, refusing one that cannot run here (a framework engine whose
// environment is missing) with nnbench::Error saying how to set it up.
std::unique_ptr<Backend> make_ready_backend(const std::string& name);
// What runs when no --backend is given: the first built backend after the
// oracle in the registry's order, else the oracle.
std::string default_backend();

// Adds a backend after the built ones (tests: a toy backend is picked up by
// the conformance suite with no other change). Throws on a duplicate name.
using Factory = std::unique_ptr<Backend> (*)();
void register_backend(const std::string& name, Factory make);

}  // namespace nnbench::backend
