#pragma once
// One project error type. Configuration and usage problems throw it; `main`
// maps it to exit code 2. Capability gaps and run failures are result states,
// not exceptions (see results/result.h).
#include <stdexcept>
#include <string>

namespace nnbench {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A file that could not be written after the work was done (a full disk, a
// folder that turned read-only): not a usage error, `main` maps it to exit
// code 3. An output found unwritable before any work is an Error.
class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace nnbench
