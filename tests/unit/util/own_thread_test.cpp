// util::on_own_thread: a probe's OpenMP pool ends with the probe's thread
// (libgomp keeps one per thread that ran a parallel region, and too many
// make every pool's idle threads sleep between regions: util/own_thread.h).
#include "util/own_thread.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "../../common/eventually.h"
#include "../../common/process_threads.h"

namespace nnbench {
namespace {

// The pool's threads leave right after the probe's thread is joined, not
// before (libgomp has released them from the pool by then): a count is
// awaited for up to 5 s.
bool threads_reach(int want) {
  return nnbench_test::eventually(
      5, [&] { return nnbench_test::process_threads() == want; });
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
  const int before = nnbench_test::process_threads();
  EXPECT_EQ(util::on_own_thread(two_thread_region), 2);
  EXPECT_TRUE(threads_reach(before));
}

// Why the helper exists: on a thread that lives on, the region's second
// thread stays, parked in the pool, until that thread ends.
TEST(OwnThread, APoolStaysWhileItsThreadLives) {
  const int before = nnbench_test::process_threads();
  std::mutex mu;
  std::condition_variable cv;
  bool counted = false;
  int ran = 0;
  std::thread t([&] {
    ran = two_thread_region();
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return counted; });
  });
  // The thread, and its pool's second thread once the region has run.
  const bool during = threads_reach(before + 2);
  {
    std::lock_guard<std::mutex> lock(mu);
    counted = true;
  }
  cv.notify_all();
  t.join();
  EXPECT_EQ(ran, 2);
  EXPECT_TRUE(during);
  EXPECT_TRUE(threads_reach(before));
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
