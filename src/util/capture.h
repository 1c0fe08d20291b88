#pragma once
// Running a short external command to its end and reading what it printed
// (sbatch, squeue): the program looked up in PATH, stdin from /dev/null,
// killed when it outlives its deadline.
#include <string>
#include <vector>

namespace nnbench::util {

struct Captured {
  // Its exit code; 128 + the signal that ended it; -1 when it was killed at
  // the deadline; 127 when it could not be started (not in PATH).
  int status = 0;
  std::string out, err;
};

// Throws nnbench::Error only when it cannot fork or make pipes.
Captured run_captured(const std::vector<std::string>& argv,
                      double deadline_seconds);

}  // namespace nnbench::util
