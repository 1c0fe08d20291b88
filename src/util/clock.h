#pragma once
// The one clock of every timed region: monotonic, never adjusted.
#include <chrono>
#include <cstdint>

namespace nnbench::util {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

inline int64_t nanoseconds_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0)
      .count();
}

}  // namespace nnbench::util
