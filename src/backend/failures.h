#pragma once
// How a backend says that a run cannot go on: each failure is an exception
// type that results::classify maps to one result state, so every harness
// reports it the same way and a suite goes on.
#include <cstddef>
#include <stdexcept>
#include <string>

#include "util/error.h"

namespace nnbench::backend {

// Capability gaps and failures a backend reports by throwing; the harness
// turns each into a result state and the suite goes on.
class Unimplemented : public std::runtime_error {
  using std::runtime_error::runtime_error;
};
class OutOfMemory : public std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Only for a backend whose work runs in another process (a framework
// worker, engines/worker/): the process died (state crashed) or stopped
// answering (state timeout).
class ProcessDied : public std::runtime_error {
  using std::runtime_error::runtime_error;
};
class ProcessHung : public std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Numbers a run cannot be trusted with: a non-finite weight, output or
// loss, a negative running variance. The run is failed, naming the tensor
// (not an nnbench::Error: the file or settings were well-formed, the
// values are not).
class BadValues : public std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Throws BadValues naming `what` and the first non-finite element of `p`.
// Once per tensor, never inside a timed step.
void check_finite(const std::string& what, const float* p, size_t n);
// The engine cannot run on this machine at all (Description::unavailable:
// its environment is not set up, or it cannot be installed here): state
// not_run in a suite, a usage error (exit 2) where a command names it.
class Unavailable : public Error {
  using Error::Error;
};

}  // namespace nnbench::backend
