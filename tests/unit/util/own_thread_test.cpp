// util::on_own_thread: a probe's OpenMP pool ends with the probe's thread
// (libgomp keeps one per thread that ran a parallel region, and too many
// make every pool's idle threads sleep between regions: util/own_thread.h).
#include "util/own_thread.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace nnbench {
namespace {

// This process's threads, counted in /proc/self/task.
int threads_now() {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task"))
    n += e.is_directory() ? 1 : 0;
  return n;
}

// The thread count once it reaches `want`, or after 5 s the count then:
// the pool's threads leave right after the probe's thread is joined, not
// before (libgomp has released them from the pool by then).
int threads_settled_at(int want) {
  for (int i = 0; i < 5000 && threads_now() != want; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return threads_now();
}

// A two-thread parallel region; how many threads ran it.
int two_thread_region() {
  int ran = 0;
#pragma omp parallel num_threads(2)
  {
#pragma omp atomic
    ++ran;
  }
  return ran;
}

TEST(OwnThread, APoolMadeThereEndsWithIt) {
  const int before = threads_now();
  EXPECT_EQ(util::on_own_thread(two_thread_region), 2);
  EXPECT_EQ(threads_settled_at(before), before);
}

// Why the helper exists: on a thread that lives on, the region's second
// thread stays, parked in the pool, until that thread ends.
TEST(OwnThread, APoolStaysWhileItsThreadLives) {
  const int before = threads_now();
  std::mutex mu;
  std::condition_variable cv;
  bool counted = false;
  int ran = 0, during = 0;
  std::thread t([&] {
    ran = two_thread_region();
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return counted; });
  });
  // The thread, and its pool's second thread once the region has run.
  during = threads_settled_at(before + 2);
  {
    std::lock_guard<std::mutex> lock(mu);
    counted = true;
  }
  cv.notify_all();
  t.join();
  EXPECT_EQ(ran, 2);
  EXPECT_EQ(during, before + 2);
  EXPECT_EQ(threads_settled_at(before), before);
}

TEST(OwnThread, RethrowsWhatTheProbeThrew) {
  EXPECT_THROW(util::on_own_thread(
                   []() -> int { throw std::runtime_error("probe failed"); }),
               std::runtime_error);
  int ran = 0;
  util::on_own_thread([&] { ran = 1; });
  EXPECT_EQ(ran, 1);
}

}  // namespace
}  // namespace nnbench
