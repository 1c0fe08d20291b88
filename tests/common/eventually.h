#pragma once
// Waiting for what another process does (a child ends, a folder goes).
#include <chrono>
#include <thread>

namespace nnbench_test {

// Waits up to `seconds` for f() to hold; whether it did.
template <typename F>
bool eventually(double seconds, F f) {
  const auto end = std::chrono::steady_clock::now() +
                   std::chrono::milliseconds(static_cast<int>(seconds * 1e3));
  while (std::chrono::steady_clock::now() < end) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return f();
}

}  // namespace nnbench_test
