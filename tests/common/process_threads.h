#pragma once
// This process's threads, counted in /proc/self/task: what a test reads to
// see whether an OpenMP pool outlived the thread that made it.
#include <filesystem>

namespace nnbench_test {

inline int process_threads() {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task"))
    n += e.is_directory() ? 1 : 0;
  return n;
}

}  // namespace nnbench_test
